//! `read_buf`: tokio's read that appends to a buffer the caller keeps, over the owned
//! `read` (one read into a buffer of its own, then a copy), and the buffers it appends to
//! ([`AppendBuf`]).
//!
//! Why a copy: an owned read takes its buffer; dropped, the buffer goes with it. A frame
//! buffer moved into a read inside `select!` would lose the partial frame it held. Here the
//! caller's buffer never leaves the caller, and a reader that keeps the bytes of a dropped
//! read for its next one (a stream) loses nothing either.
//!
//! The read's own buffer is the thread's spare: taken for the read, put back (emptied) once
//! its bytes are appended, so a loop of `read_buf`s allocates once per thread, not once per
//! call. A dropped `read_buf` loses the spare with its read (the kernel may still write it);
//! the next call allocates another. Each thread keeps at most one, of at most
//! [`READ_BUF_MAX`] bytes.
//!
//! May not: depend on any implementation; everything goes through the traits.

use std::cell::Cell;
use std::future::Future;
use std::io;

use super::provided::buffer_with_capacity;
use super::traits::AsyncReadOwned;
use crate::buf::{BufResult, IoBuf, Slice};

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
#[diagnostic::on_unimplemented(
    message = "`read_buf` cannot append to `{Self}`",
    note = "it appends to a `Vec<u8>`, or to a `bytes::BytesMut` with ringsteal's `bytes` feature (`features = [\"bytes\"]`)"
)]
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
    read_buf_by(buf, |spare| r.read(spare)).await
}

/// `read_buf`'s copy step, for a reader that reads its own way (a stream reads from the
/// bytes it kept, or with the read lane it already holds): `read` is given the thread's
/// spare buffer, sliced to what one `read_buf` asks for, and what it read is appended to
/// `buf`. Yields the count.
///
/// ```
/// use ringsteal_rt::io::{read_buf_by, AsyncReadOwned};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let mut src: &[u8] = b"hello";
///     let mut frame = b"> ".to_vec();
///     let n = read_buf_by(&mut frame, |spare| src.read(spare)).await.unwrap();
///     assert_eq!((n, &frame[..]), (5, &b"> hello"[..]));
/// });
/// ```
pub async fn read_buf_by<B, F, Fut>(buf: &mut B, read: F) -> io::Result<usize>
where
    B: AppendBuf + ?Sized,
    F: FnOnce(Slice<Vec<u8>>) -> Fut,
    Fut: Future<Output = BufResult<usize, Slice<Vec<u8>>>>,
{
    let want = buf.spare_capacity().clamp(READ_BUF_MIN, READ_BUF_MAX);
    // A spare larger than `want` reads no more than `want`: the slice bounds the read.
    let (res, got) = read(take_spare(want)?.slice(..want)).await;
    let got = got.into_inner();
    // No await between the read's end and this: a dropped `read_buf` appended nothing.
    let appended = res.inspect(|&n| buf.append_bytes(&got[..n]));
    put_spare(got);
    appended
}

thread_local! {
    /// The thread's spare read buffer (see the module doc).
    static SPARE: Cell<Option<Vec<u8>>> = const { Cell::new(None) };
}

/// The thread's spare, emptied, if it has room for `want` bytes; else a new buffer (a
/// smaller spare is freed: the one put back after this read replaces it).
fn take_spare(want: usize) -> io::Result<Vec<u8>> {
    match SPARE.try_with(Cell::take).ok().flatten() {
        Some(mut spare) if spare.capacity() >= want => {
            spare.clear();
            Ok(spare)
        }
        _ => buffer_with_capacity(want),
    }
}

/// Keeps `buf` as the thread's spare (on a thread that is exiting, frees it).
fn put_spare(mut buf: Vec<u8>) {
    buf.clear();
    // Moved in whole: if the thread-local is gone, `buf` is dropped with the closure.
    let _ = SPARE.try_with(move |spare| spare.set(Some(buf)));
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

    /// The spare's address and capacity, left in place.
    fn spare() -> Option<(*const u8, usize)> {
        SPARE.with(|s| {
            let b = s.take();
            let seen = b.as_ref().map(|b| (b.as_ptr(), b.capacity()));
            s.set(b);
            seen
        })
    }

    #[test]
    fn reads_reuse_the_threads_spare_and_a_larger_read_replaces_it() {
        crate::io::test_util::block_on(async {
            let mut src: &[u8] = &[7u8; 100_000];
            let mut small = Vec::new();
            assert_eq!(src.read_buf(&mut small).await.unwrap(), READ_BUF_MIN);
            let (first, cap) = spare().expect("kept after the read");
            assert_eq!(cap, READ_BUF_MIN);
            let mut again = Vec::new();
            assert_eq!(src.read_buf(&mut again).await.unwrap(), READ_BUF_MIN);
            assert_eq!(spare(), Some((first, cap)), "the same buffer, reused");
            // A destination with more room reads more, into a larger buffer that stays.
            let mut large = Vec::with_capacity(READ_BUF_MAX);
            assert_eq!(src.read_buf(&mut large).await.unwrap(), READ_BUF_MAX);
            assert_eq!(spare().map(|(_, cap)| cap), Some(READ_BUF_MAX));
            // ... and bounds a smaller read by what the destination asked for.
            let mut small_again = Vec::new();
            assert_eq!(src.read_buf(&mut small_again).await.unwrap(), READ_BUF_MIN);
            assert!(small.iter().chain(&again).chain(&large).all(|&b| b == 7));
        });
    }
}
