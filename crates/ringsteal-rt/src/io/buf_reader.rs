//! [`BufReader`]: a user-space read buffer over an [`AsyncReadOwned`], for many small reads
//! and for line- or delimiter-based protocols.
//!
//! May not: hold bytes it cannot give back. It refills only when empty (`read_line`, which
//! must keep a partial line, reads the rest into a buffer of its own and appends it), so
//! dropping a refill loses nothing it held; the bytes of the dropped read itself are the
//! inner reader's to keep (ringsteal's streams do).

use std::future::Future;
use std::io;

use super::traits::{AsyncReadOwned, AsyncWriteOwned, SpliceEnd};
use crate::buf::{BufResult, IoBuf, IoBufMut, IoVecBuf};

/// Default capacity of [`BufReader`] and [`BufWriter`](super::BufWriter).
pub(crate) const DEFAULT_CAPACITY: usize = 8 * 1024;

/// Adds a read buffer to a reader: reads smaller than the buffer are served from memory, one
/// kernel read refills it. Reads at least as large as the buffer bypass it when it is empty.
/// Writes pass through to the inner value (a `BufReader<TcpStream>` can answer requests).
///
/// ```
/// use ringsteal_rt::io::BufReader;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let mut reader = BufReader::new(&b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"[..]);
///     let mut line = String::new();
///     reader.read_line(&mut line).await.unwrap();
///     assert_eq!(line, "GET / HTTP/1.1\r\n");
///     line.clear();
///     reader.read_line(&mut line).await.unwrap();
///     assert_eq!(line, "Host: x\r\n");
/// });
/// ```
#[derive(Debug)]
pub struct BufReader<R> {
    inner: R,
    /// `buf[pos..]` is unread.
    buf: Vec<u8>,
    pos: usize,
    capacity: usize,
}

impl<R> BufReader<R> {
    /// A reader with an 8 KiB buffer (allocated at the first read).
    pub fn new(inner: R) -> Self {
        Self::with_capacity(DEFAULT_CAPACITY, inner)
    }

    /// A reader with a buffer of `capacity` bytes (at least 1).
    pub fn with_capacity(capacity: usize, inner: R) -> Self {
        Self {
            inner,
            buf: Vec::new(),
            pos: 0,
            capacity: capacity.max(1),
        }
    }

    /// The inner reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The inner reader, mutably. Reading from it directly skips what is buffered here.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The inner reader; buffered bytes are lost (read them with [`buffer`](Self::buffer)
    /// first).
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// The bytes buffered and not yet read.
    pub fn buffer(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// The buffer's capacity.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Marks `amt` buffered bytes as read (at most what is buffered).
    pub fn consume(&mut self, amt: usize) {
        self.pos = self.pos.saturating_add(amt).min(self.buf.len());
        if self.buf.capacity() > self.capacity.saturating_mul(2) {
            self.give_growth_back();
        }
    }

    /// A long line (or a `read_exact` through the buffer) grew it past its capacity: once
    /// what is left fits the capacity again, it moves to a buffer of that size, so that one
    /// long line does not hold its memory for the reader's life (tokio's buffer never grows).
    #[cold]
    fn give_growth_back(&mut self) {
        let left = self.buf.len() - self.pos;
        if left > self.capacity {
            return;
        }
        let mut smaller = Vec::new();
        if left > 0 && smaller.try_reserve_exact(self.capacity).is_err() {
            return; // keep the big one rather than fail here
        }
        smaller.extend_from_slice(&self.buf[self.pos..]);
        self.buf = smaller;
        self.pos = 0;
    }

    /// Drops the buffered bytes (a seek moved the position under them).
    pub(super) fn discard_buffer(&mut self) {
        self.buf.clear();
        self.pos = 0;
    }
}

impl<R: AsyncReadOwned> BufReader<R> {
    /// The buffered bytes, refilling from the inner reader (one read) if there are none.
    /// Empty at end of stream. Call [`consume`](Self::consume) for what you used.
    pub async fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.buf.len() {
            let mut buf = std::mem::take(&mut self.buf);
            buf.clear();
            self.pos = 0;
            if buf.capacity() == 0 {
                // The first fill, or the buffer went with a refill whose future was dropped.
                buf = super::provided::buffer_with_capacity(self.capacity)?;
            }
            let (res, buf) = self.inner.read(buf).await;
            self.buf = buf;
            if let Err(e) = res {
                self.buf.clear();
                return Err(e);
            }
        }
        Ok(&self.buf[self.pos..])
    }

    /// Appends bytes to `out` up to and including `byte`, or to the end of the stream.
    /// Yields the number of bytes appended (0 at end of stream).
    pub async fn read_until(&mut self, byte: u8, out: &mut Vec<u8>) -> io::Result<usize> {
        let start = out.len();
        loop {
            let avail = match self.fill_buf().await {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if avail.is_empty() {
                return Ok(out.len() - start);
            }
            match avail.iter().position(|&b| b == byte) {
                Some(i) => {
                    out.extend_from_slice(&avail[..=i]);
                    self.consume(i + 1);
                    return Ok(out.len() - start);
                }
                None => {
                    let n = avail.len();
                    out.extend_from_slice(avail);
                    self.consume(n);
                }
            }
        }
    }

    /// Appends one line (up to and including `\n`, or to the end of the stream) to `out`.
    /// Yields the number of bytes appended (0 at end of stream).
    ///
    /// Cancel-safe: the line is gathered in this reader's buffer and consumed only once it
    /// is whole, so a `read_line` dropped while it waits for the rest of a line leaves what
    /// it read buffered, for the next call (of any read). A long line grows the buffer
    /// past its capacity until it is read; then the buffer shrinks back.
    ///
    /// # Errors
    /// `InvalidData` if the line is not UTF-8; `out` is then left as it was (the line's
    /// bytes are consumed).
    pub async fn read_line(&mut self, out: &mut String) -> io::Result<usize> {
        // Bytes at the front of the buffered ones known to hold no newline.
        let mut scanned = 0;
        loop {
            let unread = &self.buf[self.pos..];
            if let Some(i) = unread[scanned..].iter().position(|&b| b == b'\n') {
                return self.take_line(scanned + i + 1, out);
            }
            scanned = unread.len();
            if scanned == 0 {
                // Nothing buffered: a refill that is dropped loses nothing of ours.
                match self.fill_buf().await {
                    Ok([]) => return Ok(0),
                    Ok(_) => continue,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            }
            // Part of a line is buffered: read on behind it (a dropped read leaves it here).
            if self.read_more(self.capacity).await? == 0 {
                // End of stream: what is buffered is the last line.
                return self.take_line(scanned, out);
            }
        }
    }

    /// Reads up to `len` more bytes behind the buffered ones: into a buffer of its own,
    /// appended once the read is done, so that a dropped call leaves the buffered bytes here
    /// (and the inner reader keeps what the dropped read got, as ringsteal's streams do).
    /// `Ok(0)` at the end of the stream; an interrupted read is tried again.
    async fn read_more(&mut self, len: usize) -> io::Result<usize> {
        loop {
            let more = super::provided::buffer_with_capacity(len)?;
            let (res, more) = self.inner.read(more).await;
            match res {
                Ok(n) => {
                    if n > 0 {
                        self.buf.drain(..self.pos);
                        self.pos = 0;
                        self.buf.extend_from_slice(&more);
                    }
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The lines of the stream, without their `\n` (or `\r\n`), as tokio's
    /// `AsyncBufReadExt::lines`: `next_line` yields each, `None` at the end.
    ///
    /// ```
    /// use ringsteal_rt::io::BufReader;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let mut lines = BufReader::new(&b"first\r\nsecond\nlast"[..]).lines();
    ///     let mut all = Vec::new();
    ///     while let Some(line) = lines.next_line().await.unwrap() {
    ///         all.push(line);
    ///     }
    ///     assert_eq!(all, ["first", "second", "last"]);
    /// });
    /// ```
    pub fn lines(self) -> Lines<R> {
        Lines { reader: self }
    }

    /// Moves the first `n` buffered bytes (at most what is buffered and what `buf` holds)
    /// into the start of `buf`.
    fn copy_out<B: IoBufMut>(&mut self, buf: &mut B, n: usize) {
        let avail = &self.buf[self.pos..];
        let n = n.min(avail.len()).min(buf.bytes_total());
        // SAFETY: `buf` is owned (no overlap with our buffer) and valid for bytes_total()
        // >= n bytes of writes; the n bytes are then initialised.
        unsafe {
            std::ptr::copy_nonoverlapping(avail.as_ptr(), buf.stable_mut_ptr(), n);
            buf.set_init(n);
        }
        self.consume(n);
    }

    /// Consumes the first `len` buffered bytes as one line, appended to `out` if UTF-8.
    fn take_line(&mut self, len: usize, out: &mut String) -> io::Result<usize> {
        let line = std::str::from_utf8(&self.buf[self.pos..self.pos + len]);
        let res = match line {
            Ok(s) => {
                out.push_str(s);
                Ok(len)
            }
            Err(_) => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the line is not valid UTF-8",
            )),
        };
        self.consume(len);
        res
    }
}

impl<R: AsyncReadOwned> AsyncReadOwned for BufReader<R> {
    async fn read<B: IoBufMut>(&mut self, buf: B) -> BufResult<usize, B> {
        if self.pos == self.buf.len() && buf.bytes_total() >= self.capacity {
            return self.inner.read(buf).await;
        }
        if let Err(e) = self.fill_buf().await {
            return (Err(e), buf);
        }
        let mut buf = buf;
        let n = (self.buf.len() - self.pos).min(buf.bytes_total());
        self.copy_out(&mut buf, n);
        (Ok(n), buf)
    }

    /// Takes the buffered bytes only once all of `buf`'s are buffered, reading more behind
    /// them meanwhile (as [`read_line`](Self::read_line) does): dropped, it
    /// leaves every byte here, and the inner reader keeps what its dropped read took if it
    /// keeps such bytes (ringsteal's streams, files and pipes do). So a dropped `read_u32`
    /// over a buffered stream loses nothing.
    async fn read_exact<B: IoBufMut>(&mut self, buf: B) -> BufResult<(), B> {
        let want = buf.bytes_total();
        if self.pos == self.buf.len() && want >= self.capacity {
            return self.inner.read_exact(buf).await;
        }
        let mut buf = buf;
        loop {
            let avail = self.buf.len() - self.pos;
            if avail >= want {
                self.copy_out(&mut buf, want);
                return (Ok(()), buf);
            }
            match self.read_more(self.capacity.max(want - avail)).await {
                Ok(0) => {
                    // The end of the stream: what there is goes into `buf`, as the trait says.
                    self.copy_out(&mut buf, avail);
                    return (Err(super::provided::unexpected_eof()), buf);
                }
                Ok(_) => {}
                Err(e) => return (Err(e), buf),
            }
        }
    }

    fn read_exact_from_memory(&mut self, dst: &mut [u8]) -> bool {
        let Some(held) = self.buf.get(self.pos..self.pos + dst.len()) else {
            return false;
        };
        dst.copy_from_slice(held);
        self.consume(dst.len());
        true
    }

    fn splice_source(&self) -> Option<SpliceEnd<'_>> {
        // Bytes buffered here would be skipped by a splice from the descriptor.
        if self.buffer().is_empty() {
            self.inner.splice_source()
        } else {
            None
        }
    }
}

/// The lines of a [`BufReader`] (see [`BufReader::lines`]).
///
/// ```
/// use ringsteal_rt::io::BufReader;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let mut lines = BufReader::new(&b"a\n\nb\n"[..]).lines();
///     assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("a"));
///     assert_eq!(lines.next_line().await.unwrap().as_deref(), Some(""));
///     assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("b"));
///     assert_eq!(lines.next_line().await.unwrap(), None);
/// });
/// ```
#[derive(Debug)]
pub struct Lines<R> {
    reader: BufReader<R>,
}

impl<R: AsyncReadOwned> Lines<R> {
    /// The next line without its line ending; `None` at the end of the stream. Cancel-safe,
    /// as [`BufReader::read_line`] is.
    ///
    /// # Errors
    /// The reader's, or `InvalidData` for a line that is not UTF-8 (consumed).
    pub async fn next_line(&mut self) -> io::Result<Option<String>> {
        let mut line = String::new();
        if self.reader.read_line(&mut line).await? == 0 {
            return Ok(None);
        }
        if line.ends_with('\n') {
            line.pop();
            if line.ends_with('\r') {
                line.pop();
            }
        }
        Ok(Some(line))
    }

    /// The reader, with what it has buffered.
    pub fn into_inner(self) -> BufReader<R> {
        self.reader
    }
}

impl<R: AsyncWriteOwned> AsyncWriteOwned for BufReader<R> {
    fn write<B: IoBuf>(&mut self, buf: B) -> impl Future<Output = BufResult<usize, B>> + Send {
        self.inner.write(buf)
    }
    fn writev<B: IoVecBuf>(&mut self, bufs: B) -> impl Future<Output = BufResult<usize, B>> + Send {
        self.inner.writev(bufs)
    }
    fn write_all<B: IoBuf>(&mut self, buf: B) -> impl Future<Output = BufResult<(), B>> + Send {
        self.inner.write_all(buf)
    }
    fn write_all_vectored<B: IoVecBuf>(
        &mut self,
        bufs: B,
    ) -> impl Future<Output = BufResult<(), B>> + Send {
        self.inner.write_all_vectored(bufs)
    }
    fn flush(&mut self) -> impl Future<Output = io::Result<()>> + Send {
        self.inner.flush()
    }
    fn shutdown(&mut self) -> impl Future<Output = io::Result<()>> + Send {
        self.inner.shutdown()
    }
    fn write_all_to_memory(&mut self, src: &[u8]) -> bool {
        self.inner.write_all_to_memory(src)
    }
    fn splice_sink(&self) -> Option<SpliceEnd<'_>> {
        self.inner.splice_sink()
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::sync::Arc;
    use std::task::{Context, Wake, Waker};

    use super::*;
    use crate::io::test_util::{block_on, Arrivals};

    struct Noop;
    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }

    #[test]
    fn a_dropped_read_exact_leaves_its_bytes_buffered_for_the_next_one() {
        let mut arrivals = Arrivals::default();
        arrivals.arrive(&[0x12, 0x34]);
        let mut reader = BufReader::with_capacity(16, arrivals);
        {
            // Takes the two bytes into the buffer, waits for two more: dropped there.
            let first = pin!(reader.read_u32());
            let waker = Waker::from(Arc::new(Noop));
            assert!(first.poll(&mut Context::from_waker(&waker)).is_pending());
        }
        assert_eq!(
            reader.buffer(),
            [0x12, 0x34],
            "the dropped read_u32 kept them here"
        );
        reader.get_mut().arrive(&[0x56, 0x78, 0x9a]);
        assert_eq!(block_on(reader.read_u32()).unwrap(), 0x1234_5678);
        assert_eq!(reader.buffer(), [0x9a]);
        // Longer than the capacity, partly buffered: still whole and in order.
        let long: Vec<u8> = (0..40).collect();
        reader.get_mut().arrive(&long);
        let (res, got) = block_on(reader.read_exact(vec![0u8; 41]));
        res.unwrap();
        assert_eq!(got[0], 0x9a);
        assert_eq!(&got[1..], &long[..]);
        // The end of the stream inside a read_exact: what there was, then UnexpectedEof.
        reader.get_mut().arrive(&[1, 2]);
        reader.get_mut().end();
        let (res, got) = block_on(reader.read_exact(Vec::with_capacity(4)));
        assert_eq!(res.unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(got, [1, 2]);
    }

    #[test]
    fn a_long_line_gives_its_memory_back_once_read_and_the_next_line_stays_whole() {
        let mut arrivals = Arrivals::default();
        let long = "x".repeat(100_000) + "\n";
        arrivals.arrive(long.as_bytes());
        arrivals.arrive(b"next\nand");
        let mut reader = BufReader::with_capacity(64, arrivals);
        let mut line = String::new();
        block_on(reader.read_line(&mut line)).unwrap();
        assert_eq!(line, long);
        assert!(
            reader.buf.capacity() <= 128,
            "the buffer kept {} bytes after the long line",
            reader.buf.capacity()
        );
        line.clear();
        block_on(reader.read_line(&mut line)).unwrap();
        assert_eq!(line, "next\n");
        assert_eq!(reader.buffer(), b"and");
    }

    #[test]
    fn a_buffer_too_large_to_allocate_is_an_out_of_memory_error_not_an_abort() {
        let mut reader = BufReader::with_capacity(usize::MAX, &b"line\n"[..]);
        let err = block_on(reader.fill_buf()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::OutOfMemory);
        let mut line = String::new();
        let err = block_on(reader.read_line(&mut line)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::OutOfMemory);
        reader.consume(usize::MAX); // capped, no overflow
        assert!(reader.buffer().is_empty());
    }

    #[test]
    fn a_read_line_dropped_mid_line_leaves_the_part_for_the_next_call() {
        let mut arrivals = Arrivals::default();
        arrivals.arrive(b"GET / HT");
        let mut reader = BufReader::with_capacity(16, arrivals);
        let mut line = String::new();
        {
            // Reads the half line, then waits for the rest: dropped there.
            let first = pin!(reader.read_line(&mut line));
            let waker = Waker::from(Arc::new(Noop));
            assert!(first.poll(&mut Context::from_waker(&waker)).is_pending());
        }
        assert!(line.is_empty());
        reader
            .get_mut()
            .arrive(b"TP/1.1\r\nHost: a very long name\r\nlast");
        let n = block_on(reader.read_line(&mut line)).unwrap();
        assert_eq!(
            line, "GET / HTTP/1.1\r\n",
            "the dropped call's bytes were lost"
        );
        assert_eq!(n, line.len());
        line.clear();
        // Longer than the buffer's capacity, found in the bytes already buffered.
        block_on(reader.read_line(&mut line)).unwrap();
        assert_eq!(line, "Host: a very long name\r\n");
        line.clear();
        // The rest has no newline yet: the call waits, and when dropped keeps it buffered.
        {
            let next = pin!(reader.read_line(&mut line));
            let waker = Waker::from(Arc::new(Noop));
            assert!(next.poll(&mut Context::from_waker(&waker)).is_pending());
        }
        assert_eq!(reader.buffer(), b"last");
    }

    #[test]
    fn a_line_that_is_not_utf8_is_refused_and_consumed() {
        let mut reader = BufReader::new(&b"ok\n\xff\xfe\nnext\n"[..]);
        let mut line = String::new();
        block_on(reader.read_line(&mut line)).unwrap();
        assert_eq!(line, "ok\n");
        let err = block_on(reader.read_line(&mut line)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(line, "ok\n", "left as it was");
        block_on(reader.read_line(&mut line)).unwrap();
        assert_eq!(line, "ok\nnext\n");
        assert_eq!(
            block_on(reader.read_line(&mut line)).unwrap(),
            0,
            "end of stream"
        );
    }
}
