//! [`BufWriter`]: a user-space write buffer over an [`AsyncWriteOwned`], so many small writes
//! become one kernel write.
//!
//! May not: reorder bytes: buffered bytes always go out before a write that bypasses the
//! buffer.

use std::future::Future;
use std::io;

use super::buf_reader::DEFAULT_CAPACITY;
use super::read_buf::AppendBuf;
use super::traits::{AsyncReadOwned, AsyncWriteOwned, SpliceEnd};
use crate::buf::{BufResult, IoBuf, IoBufMut};

/// Adds a write buffer to a writer: writes that fit are copied into it; it goes out when the
/// next write would not fit, on [`flush`](AsyncWriteOwned::flush) and on
/// [`shutdown`](AsyncWriteOwned::shutdown). Writes at least as large as the buffer skip it
/// (after flushing it). Reads pass through to the inner value.
///
/// A flush that fails (a full disk, a peer gone) keeps the bytes the inner writer did not
/// take, so a later flush tries them again, as tokio's `BufWriter` does. For that it writes
/// with `write` until the buffer is out, not with one `write_all`: over a reference shared
/// with other writers (`&TcpStream`, `&ChildStdin`), another task's write may go between two
/// of them when the stream is full. Give a `BufWriter` a writer of its own (the stream, or
/// its write half) where whole flushes matter.
///
/// Dropping the value loses what is buffered: flush first. Dropping a flush's future, or
/// the future of a write that is flushing the full buffer, loses the buffered bytes the
/// kernel had not taken yet, those of earlier writes that returned `Ok` included (the
/// buffer is in flight in the kernel; tokio's `BufWriter` keeps them). Do not drop its
/// writes mid-way unless the stream is then closed.
///
/// ```
/// use ringsteal_rt::io::{AsyncWriteOwned, BufWriter};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let mut w = BufWriter::new(Vec::new());
///     for word in ["a", "b", "c"] {
///         w.write_all(word).await.0.unwrap();
///     }
///     assert!(w.get_ref().is_empty(), "still buffered");
///     w.flush().await.unwrap();
///     assert_eq!(w.get_ref(), b"abc");
/// });
/// ```
#[derive(Debug)]
pub struct BufWriter<W> {
    inner: W,
    buf: Vec<u8>,
    capacity: usize,
}

impl<W> BufWriter<W> {
    /// A writer with an 8 KiB buffer.
    pub fn new(inner: W) -> Self {
        Self::with_capacity(DEFAULT_CAPACITY, inner)
    }

    /// A writer with a buffer of `capacity` bytes (at least 1).
    pub fn with_capacity(capacity: usize, inner: W) -> Self {
        Self {
            inner,
            buf: Vec::new(),
            capacity: capacity.max(1),
        }
    }

    /// The inner writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The inner writer, mutably. Writing to it directly puts bytes before what is buffered.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// The inner writer; buffered bytes are lost (flush first).
    pub fn into_inner(self) -> W {
        self.inner
    }

    /// The bytes buffered and not yet written.
    pub fn buffer(&self) -> &[u8] {
        &self.buf
    }

    /// The buffer's capacity.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

impl<W: AsyncWriteOwned> BufWriter<W> {
    /// Writes out the buffer (not flushing the inner writer). On an error, the bytes the
    /// writer did not take stay buffered, for a later flush to try again.
    pub(super) async fn flush_buf(&mut self) -> io::Result<()> {
        let mut buf = std::mem::take(&mut self.buf);
        let mut written = 0;
        let mut res = Ok(());
        while written < buf.len() {
            let (r, slice) = self.inner.write(buf.slice(written..)).await;
            buf = slice.into_inner();
            match r {
                Ok(0) => {
                    res = Err(io::ErrorKind::WriteZero.into());
                    break;
                }
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    res = Err(e);
                    break;
                }
            }
        }
        buf.drain(..written);
        self.buf = buf;
        res
    }

    /// Appends the initialised bytes of `buf`; `OutOfMemory` if the buffer cannot be had.
    fn copy_in<B: IoBuf>(&mut self, buf: &B) -> io::Result<()> {
        self.copy_slice(crate::buf::initialised(buf))
    }

    /// Appends `bytes`; `OutOfMemory` if the buffer cannot be had.
    fn copy_slice(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.buf.capacity() == 0 {
            self.buf = super::provided::buffer_with_capacity(self.capacity)?;
        }
        self.buf.extend_from_slice(bytes);
        Ok(())
    }
}

impl<W: AsyncWriteOwned> BufWriter<W> {
    /// Writes all of `bytes`, which the caller keeps: they are copied into the buffer,
    /// which goes out whenever it fills (a slice longer than the buffer goes through it in
    /// pieces). What tokio code writes as `writer.write_all(b"\r\n").await?` or
    /// `writer.write_all(line.as_bytes()).await?`: since a `BufWriter` copies anyway, a
    /// borrowed slice needs no owned buffer of its own (no clone of a `String`, no
    /// `StaticBuf` for a literal in a spawned task).
    ///
    /// Dropped mid-way, it has written part of `bytes`, as tokio's `write_all`.
    ///
    /// # Errors
    /// The inner writer's, from a flush of the full buffer (the bytes it did not take stay
    /// buffered); `OutOfMemory` if the buffer cannot be had.
    ///
    /// ```
    /// use ringsteal_rt::io::{AsyncWriteOwned, BufWriter};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let reply = String::from("value");
    ///     let task = ringsteal_rt::spawn(async move {
    ///         let mut w = BufWriter::new(Vec::new());
    ///         w.write_slice(b"+").await?;
    ///         w.write_slice(reply.as_bytes()).await?;
    ///         w.write_slice(b"\r\n").await?;
    ///         w.flush().await?;
    ///         Ok::<_, std::io::Error>(w.into_inner())
    ///     });
    ///     assert_eq!(task.await.unwrap().unwrap(), b"+value\r\n");
    /// });
    /// ```
    pub async fn write_slice(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            if self.buf.len() >= self.capacity {
                self.flush_buf().await?;
            }
            let room = self.capacity.saturating_sub(self.buf.len()).max(1);
            let (now, rest) = bytes.split_at(room.min(bytes.len()));
            self.copy_slice(now)?;
            bytes = rest;
        }
        Ok(())
    }
}

impl<W: AsyncWriteOwned> AsyncWriteOwned for BufWriter<W> {
    async fn write<B: IoBuf>(&mut self, buf: B) -> BufResult<usize, B> {
        let n = buf.bytes_init();
        if self.buf.len() + n > self.capacity {
            if let Err(e) = self.flush_buf().await {
                return (Err(e), buf);
            }
        }
        if n >= self.capacity {
            return self.inner.write(buf).await;
        }
        let res = self.copy_in(&buf).map(|()| n);
        (res, buf)
    }

    async fn write_all<B: IoBuf>(&mut self, buf: B) -> BufResult<(), B> {
        let n = buf.bytes_init();
        if self.buf.len() + n > self.capacity {
            if let Err(e) = self.flush_buf().await {
                return (Err(e), buf);
            }
        }
        if n >= self.capacity {
            return self.inner.write_all(buf).await;
        }
        let res = self.copy_in(&buf);
        (res, buf)
    }

    /// Copies `src` into the buffer if it fits beside what is there (never flushing): the
    /// same bytes, in the same order, as a [`write_all`](Self::write_all) that would not
    /// have flushed.
    fn write_all_to_memory(&mut self, src: &[u8]) -> bool {
        let fits = self.buf.len() + src.len() <= self.capacity && src.len() < self.capacity;
        fits && self.copy_slice(src).is_ok()
    }

    async fn flush(&mut self) -> io::Result<()> {
        self.flush_buf().await?;
        self.inner.flush().await
    }

    async fn shutdown(&mut self) -> io::Result<()> {
        self.flush_buf().await?;
        self.inner.shutdown().await
    }

    fn splice_sink(&self) -> Option<SpliceEnd<'_>> {
        // A splice would put its bytes before the buffered ones.
        if self.buf.is_empty() {
            self.inner.splice_sink()
        } else {
            None
        }
    }
}

impl<W: AsyncReadOwned> AsyncReadOwned for BufWriter<W> {
    fn read<B: IoBufMut>(&mut self, buf: B) -> impl Future<Output = BufResult<usize, B>> + Send {
        self.inner.read(buf)
    }
    // Forwarded, not provided: the inner reader's own versions may keep what they read when
    // dropped (a stream's lane), which the provided loops cannot.
    fn read_exact<B: IoBufMut>(&mut self, buf: B) -> impl Future<Output = BufResult<(), B>> + Send {
        self.inner.read_exact(buf)
    }
    fn read_to_end(
        &mut self,
        buf: Vec<u8>,
    ) -> impl Future<Output = BufResult<usize, Vec<u8>>> + Send {
        self.inner.read_to_end(buf)
    }
    fn read_buf<A: AppendBuf + ?Sized>(
        &mut self,
        buf: &mut A,
    ) -> impl Future<Output = io::Result<usize>> + Send {
        self.inner.read_buf(buf)
    }
    fn read_exact_from_memory(&mut self, dst: &mut [u8]) -> bool {
        self.inner.read_exact_from_memory(dst)
    }
    fn splice_source(&self) -> Option<SpliceEnd<'_>> {
        self.inner.splice_source()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::future::ready;

    use super::*;
    use crate::io::test_util::block_on;

    /// A writer that takes what its plan says, one entry per write (`Some(n)`: at most `n`
    /// bytes, `None`: an error), and everything once the plan has run out.
    #[derive(Default)]
    struct Planned {
        taken: Vec<u8>,
        plan: VecDeque<Option<usize>>,
    }

    impl AsyncWriteOwned for Planned {
        fn write<B: IoBuf>(&mut self, buf: B) -> impl Future<Output = BufResult<usize, B>> + Send {
            let bytes = crate::buf::initialised(&buf);
            let res = match self.plan.pop_front() {
                Some(None) => Err(io::Error::other("disk full")),
                Some(Some(n)) => Ok(n.min(bytes.len())),
                None => Ok(bytes.len()),
            };
            if let Ok(n) = res {
                self.taken.extend_from_slice(&bytes[..n]);
            }
            ready((res, buf))
        }
        fn shutdown(&mut self) -> impl Future<Output = io::Result<()>> + Send {
            ready(Ok(()))
        }
    }

    #[test]
    fn a_borrowed_slice_goes_through_the_buffer_in_pieces_and_in_order() {
        let mut w = BufWriter::with_capacity(4, Planned::default());
        block_on(w.write_slice(b"ab")).unwrap();
        assert!(w.get_ref().taken.is_empty(), "a short slice stays buffered");
        // Longer than the buffer: the buffer fills and goes out, four bytes at a time.
        block_on(w.write_slice(b"cdefghij")).unwrap();
        assert_eq!(w.get_ref().taken, b"abcdefgh");
        assert_eq!(w.buffer(), b"ij");
        block_on(w.flush()).unwrap();
        assert_eq!(w.get_ref().taken, b"abcdefghij");
        block_on(w.write_slice(b"")).unwrap();
        assert!(w.buffer().is_empty());
    }

    #[test]
    fn a_slice_whose_flush_fails_returns_the_error_and_keeps_what_was_not_taken() {
        let inner = Planned {
            plan: [Some(2), None].into(),
            ..Planned::default()
        };
        let mut w = BufWriter::with_capacity(4, inner);
        let err = block_on(w.write_slice(b"abcdef")).unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(w.get_ref().taken, b"ab");
        assert_eq!(w.buffer(), b"cd", "the bytes not taken stay buffered");
        block_on(w.flush()).unwrap();
        assert_eq!(w.get_ref().taken, b"abcd", "nothing lost, nothing repeated");
    }

    #[test]
    fn a_failed_flush_keeps_what_the_writer_did_not_take_for_the_next_flush() {
        let inner = Planned {
            plan: [Some(1), None].into(),
            ..Planned::default()
        };
        let mut w = BufWriter::with_capacity(16, inner);
        block_on(w.write_all(&b"abc"[..])).0.unwrap();
        let err = block_on(w.flush()).unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(w.get_ref().taken, b"a");
        assert_eq!(w.buffer(), b"bc", "the bytes not taken stay buffered");
        block_on(w.flush()).unwrap();
        block_on(w.write_all(&b"d"[..])).0.unwrap();
        block_on(w.flush()).unwrap();
        assert_eq!(w.get_ref().taken, b"abcd", "nothing lost, nothing repeated");
    }

    #[test]
    fn a_flush_into_a_writer_that_takes_nothing_fails_and_keeps_the_bytes() {
        let inner = Planned {
            plan: [Some(0)].into(),
            ..Planned::default()
        };
        let mut w = BufWriter::with_capacity(16, inner);
        block_on(w.write_all(&b"xyz"[..])).0.unwrap();
        let err = block_on(w.flush()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WriteZero);
        assert_eq!(w.buffer(), b"xyz");
    }

    #[test]
    fn a_write_that_overflows_the_buffer_fails_with_the_flush_and_loses_nothing() {
        let inner = Planned {
            plan: [None].into(),
            ..Planned::default()
        };
        let mut w = BufWriter::with_capacity(4, inner);
        block_on(w.write_all(&b"abc"[..])).0.unwrap();
        let (res, _) = block_on(w.write_all(&b"de"[..]));
        assert!(res.is_err());
        assert_eq!(w.buffer(), b"abc");
        block_on(w.write_all(&b"de"[..])).0.unwrap();
        block_on(w.flush()).unwrap();
        assert_eq!(w.get_ref().taken, b"abcde");
    }

    #[test]
    fn a_buffer_too_large_to_allocate_is_an_out_of_memory_error_not_an_abort() {
        let mut w = BufWriter::with_capacity(usize::MAX, Planned::default());
        let (res, buf) = block_on(w.write(&b"x"[..]));
        assert_eq!(res.unwrap_err().kind(), io::ErrorKind::OutOfMemory);
        assert_eq!(buf, b"x", "the buffer comes back");
        let (res, _) = block_on(w.write_all(&b"y"[..]));
        assert_eq!(res.unwrap_err().kind(), io::ErrorKind::OutOfMemory);
        assert!(w.buffer().is_empty());
        block_on(w.flush()).unwrap();
    }
}
