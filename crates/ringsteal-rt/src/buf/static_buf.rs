//! [`StaticBuf`]: static bytes as a buffer whose type names no lifetime.

use std::ops::Deref;

use super::io_buf::IoBuf;

/// Static bytes (a literal) as an [`IoBuf`] whose type names no lifetime: what to write
/// where `&'static str` or `&'static [u8]` fails to compile inside a spawned task.
///
/// Both are buffers, but a future that holds one across an `.await` inside a `spawn`ed
/// `async` block can fail with "implementation of `IoBuf` is not general enough" (or of
/// `Send`): the compiler forgets which lifetime a reference inside an `async` block had when
/// it checks that the block is `Send`, and the trait holds for `'static` only (a known rustc
/// limitation; tokio's borrowed buffers never meet it). A type with no lifetime parameter
/// has nothing to forget. `*b"..."` (an array, copied into the operation) and
/// `bytes::Bytes::from_static` work too.
///
/// ```
/// use ringsteal_rt::buf::StaticBuf;
/// use ringsteal_rt::op::{self, SharedFd};
///
/// const PONG: StaticBuf = StaticBuf::new(b"+PONG\r\n");
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
///     // Inside a spawned task, where `op::send(&a, "+PONG\r\n", 0)` may not compile.
///     ringsteal_rt::spawn(async move {
///         let (n, _) = op::send(&a, PONG, 0).await;
///         assert_eq!(n.unwrap(), 7);
///         op::send(&a, StaticBuf::from("bye"), 0).await.0.unwrap();
///     })
///     .await
///     .unwrap();
///     let (n, got) = op::recv(&b, Vec::with_capacity(16), 0).await;
///     assert_eq!(&got[..n.unwrap()], b"+PONG\r\nbye");
/// });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StaticBuf(&'static [u8]);

impl StaticBuf {
    /// The buffer of `bytes`.
    pub const fn new(bytes: &'static [u8]) -> Self {
        StaticBuf(bytes)
    }

    /// The buffer of `text`'s bytes.
    pub const fn from_str(text: &'static str) -> Self {
        StaticBuf(text.as_bytes())
    }

    /// The bytes.
    pub const fn as_bytes(&self) -> &'static [u8] {
        self.0
    }
}

impl Deref for StaticBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.0
    }
}

impl From<&'static [u8]> for StaticBuf {
    fn from(bytes: &'static [u8]) -> Self {
        StaticBuf(bytes)
    }
}

impl<const N: usize> From<&'static [u8; N]> for StaticBuf {
    fn from(bytes: &'static [u8; N]) -> Self {
        StaticBuf(bytes)
    }
}

impl From<&'static str> for StaticBuf {
    fn from(text: &'static str) -> Self {
        StaticBuf(text.as_bytes())
    }
}

// SAFETY: static data never moves or goes away; all of it is initialised.
unsafe impl IoBuf for StaticBuf {
    fn stable_ptr(&self) -> *const u8 {
        self.0.as_ptr()
    }
    fn bytes_init(&self) -> usize {
        self.0.len()
    }
    fn bytes_total(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_constructor_names_the_same_bytes() {
        const A: StaticBuf = StaticBuf::new(b"ok");
        const B: StaticBuf = StaticBuf::from_str("ok");
        for buf in [
            A,
            B,
            StaticBuf::from("ok"),
            StaticBuf::from(b"ok"),
            StaticBuf::from(&b"ok"[..]),
        ] {
            assert_eq!(&*buf, b"ok");
            assert_eq!((buf.bytes_init(), buf.bytes_total()), (2, 2));
            assert_eq!(buf.stable_ptr(), buf.as_bytes().as_ptr());
        }
    }
}
