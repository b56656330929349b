//! `read_buf`: tokio's read that appends to a buffer the caller keeps, over the owned
//! `read` (one read into a buffer of its own, then a copy), and the buffers it appends to
//! ([`AppendBuf`]).
//!
//! Why a copy: an owned read takes its buffer; dropped, the buffer goes with it. A frame
//! buffer moved into a read inside `select!` would lose the partial frame it held. Here the
//! caller's buffer never leaves the caller, and a reader that keeps the bytes of a dropped
//! read for its next one (a stream) loses nothing either.
//!
//! May not: depend on any implementation; everything goes through the traits.

use std::io;

use super::provided::buffer_with_capacity;
use super::traits::AsyncReadOwned;

/// The least one `read_buf` asks for: a full buffer grows by at least this much.
const READ_BUF_MIN: usize = 4 * 1024;
/// The most one `read_buf` asks for, whatever room the buffer has.
const READ_BUF_MAX: usize = 64 * 1024;

/// A growable buffer [`read_buf`](AsyncReadOwned::read_buf) appends to: `Vec<u8>`, and
/// `bytes::BytesMut` with the `bytes` feature.
///
/// ```
/// use ringsteal_rt::io::AppendBuf;
///
/// let mut buf = Vec::with_capacity(8);
/// buf.append_bytes(b"abc");
/// assert_eq!((buf.as_slice(), buf.spare_capacity() >= 5), (&b"abc"[..], true));
/// ```
pub trait AppendBuf: Send {
    /// How many bytes it takes before it has to grow.
    fn spare_capacity(&self) -> usize;

    /// Appends `bytes`, growing as needed.
    fn append_bytes(&mut self, bytes: &[u8]);
}

impl AppendBuf for Vec<u8> {
    fn spare_capacity(&self) -> usize {
        self.capacity() - self.len()
    }
    fn append_bytes(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

#[cfg(feature = "bytes")]
impl AppendBuf for bytes::BytesMut {
    fn spare_capacity(&self) -> usize {
        self.capacity() - self.len()
    }
    fn append_bytes(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

pub(crate) async fn read_buf<R, B>(r: &mut R, buf: &mut B) -> io::Result<usize>
where
    R: AsyncReadOwned + ?Sized,
    B: AppendBuf + ?Sized,
{
    let want = buf.spare_capacity().clamp(READ_BUF_MIN, READ_BUF_MAX);
    let (res, got) = r.read(buffer_with_capacity(want)?).await;
    let n = res?;
    // No await between the read's end and this: a dropped `read_buf` appended nothing.
    buf.append_bytes(&got[..n]);
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_buffer_grows_and_an_empty_source_reads_nothing() {
        crate::io::test_util::block_on(async {
            let mut src: &[u8] = b"hello";
            let mut buf = Vec::new();
            assert_eq!(src.read_buf(&mut buf).await.unwrap(), 5);
            assert_eq!(buf, b"hello");
            let mut full = Vec::with_capacity(2);
            full.extend_from_slice(b"ab");
            let mut more: &[u8] = b"cd";
            assert_eq!(more.read_buf(&mut full).await.unwrap(), 2);
            assert_eq!(full, b"abcd");
            assert_eq!(
                more.read_buf(&mut full).await.unwrap(),
                0,
                "end of the source"
            );
        });
    }
}
