//! Owned buffers for io_uring: the kernel reads or writes a buffer after the call that
//! started the operation has returned, so an operation takes its buffer by value and gives it
//! back with the result ([`BufResult`]), on success and on error alike.
//!
//! [`IoBuf`] is a buffer the kernel may read (writes, sends); [`IoBufMut`] one it may write
//! (reads, receives). [`IoBuf::slice`] narrows a buffer to a range without giving it up;
//! [`IoVecBuf`]/[`IoVecBufMut`] are the vectored forms for `readv`/`writev` (`Vec<B>` and
//! pairs `(A, B)`). With the `bytes` feature, `bytes::Bytes` and `BytesMut` are buffers too.
//! [`RecvBuf`] goes the other way: a buffer the kernel chose (a shard's provided buffer) and
//! filled, handed to the application by a receive stream.

#[cfg(feature = "bytes")]
mod bytes;
mod io_buf;
pub(crate) mod provided;
mod slice;
mod static_buf;
mod vectored;

pub(crate) use io_buf::initialised;
pub use io_buf::{IoBuf, IoBufMut};
pub use provided::RecvBuf;
pub use slice::Slice;
pub use static_buf::StaticBuf;
pub use vectored::{Advance, IoVecBuf, IoVecBufMut};

/// The result of an operation that owned a buffer: the buffer always comes back.
pub type BufResult<T, B> = (std::io::Result<T>, B);
