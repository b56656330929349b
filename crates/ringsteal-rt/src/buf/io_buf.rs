//! [`IoBuf`] and [`IoBufMut`] and their implementations for common buffer types.

use std::ops::RangeBounds;

use super::slice::Slice;

/// A buffer the kernel may read from while an operation is in flight.
///
/// Implemented for `Vec<u8>`, `Box<[u8]>`, `String`, `&'static [u8]`, `&'static [u8; N]` (a
/// byte-string literal), `&'static str`,
/// [`StaticBuf`](super::StaticBuf) (the static bytes to use inside a spawned task), `[u8; N]`,
/// [`Slice`] (and `bytes::Bytes`/`BytesMut` with the `bytes` feature). A write sends the
/// initialised bytes and hands the buffer back with the result.
///
/// ```
/// use std::os::unix::net::UnixStream;
/// use ringsteal_rt::buf::IoBuf;
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let msg = Vec::from("hello, world");
/// assert_eq!((msg.bytes_init(), msg.stable_ptr()), (12, msg.as_ptr()));
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = UnixStream::pair().unwrap();
///     let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
///     // Any IoBuf can be sent: a static string, or part of a Vec (moved in, given back).
///     let (n, _) = op::send(&a, "ping ", 0).await;
///     assert_eq!(n.unwrap(), 5);
///     let (n, part) = op::send(&a, msg.slice(7..), 0).await;
///     assert_eq!(n.unwrap(), 5);
///     assert_eq!(part.into_inner().len(), 12);
///     let (n, got) = op::recv(&b, Vec::with_capacity(16), 0).await;
///     assert_eq!(&got[..n.unwrap()], b"ping world");
/// });
/// ```
///
/// An operation takes its buffer by value and asks it, once, where it is and how large
/// ([`stable_ptr`](Self::stable_ptr), [`bytes_init`](Self::bytes_init),
/// [`bytes_total`](Self::bytes_total)); the kernel then reads (or, through [`IoBufMut`],
/// writes) that memory until the operation completes, and the operation's `complete` trusts
/// the same values again ([`IoBufMut::set_init`]).
///
/// # Safety
/// `stable_ptr` must point at `bytes_total()` bytes that stay valid and at the same address
/// while the value is alive and not mutated, even if the value itself is moved (heap
/// storage), or — for inline arrays — while it stays inside the operation that owns it. The
/// first `bytes_init()` bytes must be initialised, and `bytes_init() <= bytes_total()`.
///
/// **The rule for wrappers.** A type that keeps anything it derived from another buffer's
/// `stable_ptr`, `bytes_init` or `bytes_total` (a range checked against it, as [`Slice`]
/// keeps, an offset, an iovec) must not let safe code change that buffer afterwards: no safe
/// `&mut` access to it (a `get_mut`, a `DerefMut` to the inner buffer, a public field), no
/// setter that swaps, grows or shrinks it. Either offer such access only as an `unsafe fn`
/// whose contract says the buffer's storage must stay where and as large as it was (as
/// [`Slice::get_mut`] does), or re-check what was derived at every use. Otherwise safe code
/// could replace `Vec::with_capacity(4096)` by `Vec::with_capacity(16)` under a slice of
/// `0..4096`: the kernel would write 4080 bytes past the allocation and `set_init` would set
/// a length past the capacity. Likewise, no safe method may make `bytes_init()` exceed
/// `bytes_total()`. A plain forwarding wrapper that derives nothing (a `Vec` field whose
/// three values it returns as they are) is not affected: while an operation owns it, nobody
/// can reach the field.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an owned buffer ringsteal can write from",
    note = "buffers: `Vec<u8>`, `Box<[u8]>`, `String`, `&'static [u8]`/`&'static str`, `[u8; N]`, `StaticBuf`, `RecvBuf`, a `.slice(..)` of one; `bytes::Bytes` and `BytesMut` with ringsteal's `bytes` feature",
    note = "a borrowed slice cannot go with a request: `.to_vec()` it, or copy it into a `BufWriter` with `write_slice`"
)]
pub unsafe trait IoBuf: Unpin + Send + 'static {
    /// The start of the buffer.
    fn stable_ptr(&self) -> *const u8;

    /// Initialised bytes: what a write sends.
    fn bytes_init(&self) -> usize;

    /// Capacity: what a read may fill.
    fn bytes_total(&self) -> usize;

    /// A view of `range` of this buffer that owns it (and gives it back with
    /// [`Slice::into_inner`]).
    ///
    /// ```
    /// use ringsteal_rt::buf::IoBuf;
    ///
    /// let s = b"hello world".to_vec().slice(6..);
    /// assert_eq!(s.bytes_init(), 5);
    /// assert_eq!(&s.into_inner()[..5], b"hello");
    /// ```
    ///
    /// # Panics
    /// If the range reaches past `bytes_total()`.
    fn slice(self, range: impl RangeBounds<usize>) -> Slice<Self>
    where
        Self: Sized,
    {
        Slice::new(self, range)
    }
}

/// A buffer the kernel may write into while an operation is in flight.
///
/// A read fills the buffer from its start, up to [`bytes_total`](IoBuf::bytes_total) (a
/// `Vec`'s capacity, not its length; it does not append after `len`), then
/// [`set_init`](Self::set_init)`(n)` marks the `n` bytes the kernel wrote initialised: a
/// `Vec` comes back with a `len` of at least `n`.
///
/// ```
/// use std::io::Write;
/// use ringsteal_rt::buf::{IoBuf, IoBufMut};
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let buf = Vec::with_capacity(64);
/// assert_eq!((buf.bytes_init(), buf.bytes_total()), (0, 64));
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     (&a).write_all(b"filled by the kernel").unwrap();
///     let fd = SharedFd::new(b.into());
///     let (n, buf) = op::recv(&fd, buf, 0).await;
///     assert_eq!(n.unwrap(), 20);
///     assert_eq!(buf.len(), 20); // set_init grew it
///     // A fixed array works too; its "initialised" part is all of it.
///     (&a).write_all(b"xy").unwrap();
///     let (n, arr) = op::recv(&fd, [0u8; 4], 0).await;
///     assert_eq!(&arr[..n.unwrap()], b"xy");
/// });
/// ```
///
/// # Safety
/// As [`IoBuf`] (the rule for wrappers included), and `stable_mut_ptr` must be valid for
/// writes of `bytes_total()` bytes and point where `stable_ptr` does. `set_init(pos)` with
/// `pos <= bytes_total()` must leave `bytes_init() <= bytes_total()`: a wrapper of a range
/// forwards `begin + pos`, never more than its end.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an owned buffer ringsteal can read into",
    note = "buffers: `Vec<u8>` (read up to its capacity), `Box<[u8]>`, `[u8; N]`, a `.slice(..)` of one; `bytes::BytesMut` with ringsteal's `bytes` feature",
    note = "to append to a buffer you keep (a `Vec<u8>` or `BytesMut` frame), use `read_buf(&mut buf)`"
)]
pub unsafe trait IoBufMut: IoBuf {
    /// The start of the buffer, for writing.
    fn stable_mut_ptr(&mut self) -> *mut u8;

    /// Records that the first `pos` bytes are initialised (after a read filled them). Never
    /// shrinks the initialised length.
    ///
    /// # Safety
    /// The first `pos` bytes must really be initialised, and `pos <= bytes_total()`.
    unsafe fn set_init(&mut self, pos: usize);
}

// SAFETY: a Vec's heap storage does not move when the Vec is moved; len bytes are initialised.
unsafe impl IoBuf for Vec<u8> {
    fn stable_ptr(&self) -> *const u8 {
        self.as_ptr()
    }
    fn bytes_init(&self) -> usize {
        self.len()
    }
    fn bytes_total(&self) -> usize {
        self.capacity()
    }
}

// SAFETY: as above; writes stay within the capacity.
unsafe impl IoBufMut for Vec<u8> {
    fn stable_mut_ptr(&mut self) -> *mut u8 {
        self.as_mut_ptr()
    }
    unsafe fn set_init(&mut self, pos: usize) {
        if pos > self.len() {
            // SAFETY: the caller guarantees the bytes up to pos are initialised, pos <= capacity.
            unsafe { self.set_len(pos) };
        }
    }
}

// SAFETY: boxed storage does not move with the box; all bytes are initialised.
unsafe impl IoBuf for Box<[u8]> {
    fn stable_ptr(&self) -> *const u8 {
        self.as_ptr()
    }
    fn bytes_init(&self) -> usize {
        self.len()
    }
    fn bytes_total(&self) -> usize {
        self.len()
    }
}

// SAFETY: as above.
unsafe impl IoBufMut for Box<[u8]> {
    fn stable_mut_ptr(&mut self) -> *mut u8 {
        self.as_mut_ptr()
    }
    unsafe fn set_init(&mut self, _: usize) {}
}

// SAFETY: a String's heap storage does not move with it. Read-only: no IoBufMut, so the
// kernel can never write non-UTF-8 into it.
unsafe impl IoBuf for String {
    fn stable_ptr(&self) -> *const u8 {
        self.as_ptr()
    }
    fn bytes_init(&self) -> usize {
        self.len()
    }
    fn bytes_total(&self) -> usize {
        self.capacity()
    }
}

// SAFETY: static data never moves or goes away.
unsafe impl IoBuf for &'static [u8] {
    fn stable_ptr(&self) -> *const u8 {
        self.as_ptr()
    }
    fn bytes_init(&self) -> usize {
        self.len()
    }
    fn bytes_total(&self) -> usize {
        self.len()
    }
}

// SAFETY: static data never moves or goes away. (A byte-string literal, `b"\r\n"`, is one.)
unsafe impl<const N: usize> IoBuf for &'static [u8; N] {
    fn stable_ptr(&self) -> *const u8 {
        self.as_ptr()
    }
    fn bytes_init(&self) -> usize {
        N
    }
    fn bytes_total(&self) -> usize {
        N
    }
}

// SAFETY: as above.
unsafe impl IoBuf for &'static str {
    fn stable_ptr(&self) -> *const u8 {
        self.as_ptr()
    }
    fn bytes_init(&self) -> usize {
        self.len()
    }
    fn bytes_total(&self) -> usize {
        self.len()
    }
}

// SAFETY: an array is inline, so its address changes when it moves; operations move their
// buffer into a heap cell *before* taking its pointer and keep it there until the kernel is
// done, which is all the contract requires. All bytes are initialised.
unsafe impl<const N: usize> IoBuf for [u8; N] {
    fn stable_ptr(&self) -> *const u8 {
        self.as_ptr()
    }
    fn bytes_init(&self) -> usize {
        N
    }
    fn bytes_total(&self) -> usize {
        N
    }
}

// SAFETY: as above.
unsafe impl<const N: usize> IoBufMut for [u8; N] {
    fn stable_mut_ptr(&mut self) -> *mut u8 {
        self.as_mut_ptr()
    }
    unsafe fn set_init(&mut self, _: usize) {}
}

/// The initialised bytes of `buf`, for code that copies them (an in-memory writer, a
/// user-space buffer). An empty buffer may have a null pointer (`IoBuf` allows it), which a
/// slice may not: it gives the empty slice.
pub(crate) fn initialised<B: IoBuf + ?Sized>(buf: &B) -> &[u8] {
    let len = buf.bytes_init();
    if len == 0 {
        return &[];
    }
    // SAFETY: `IoBuf`'s contract: `stable_ptr` points at `bytes_init()` initialised bytes,
    // valid while `buf` is borrowed and unchanged (the shared borrow); `len` is not 0, so the
    // pointer is not null.
    unsafe { std::slice::from_raw_parts(buf.stable_ptr(), len) }
}
