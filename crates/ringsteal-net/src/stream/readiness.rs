//! tokio's readiness methods on a stream: `ready`, `readable` and `writable` wait (at once
//! while the stream's readiness cache says so, as tokio's; else one one-shot
//! `IORING_OP_POLL_ADD`, whose answer is cached), `try_read` and `try_write` (and their
//! `_vectored` forms) make one non-blocking system call in the direction's lane or return
//! `WouldBlock` (`ringsteal_rt::io::try_read_in_lane`), which clears what was cached;
//! `poll_read_ready`/`poll_write_ready` are the poll forms of the waits (`poll_peek` peeks
//! after the first), and `try_io` runs the caller's own system call holding the lanes
//! (`async_io` loops on it).
//!
//! May not: hold a lane across an await (a readiness wait takes no lane, so it never keeps
//! an owned-buffer read or write waiting; it waits for the lane to be free first).

use std::future::poll_fn;
use std::io::{self, IoSlice, IoSliceMut};
use std::task::{ready, Context, Poll};

use ringsteal_rt::io::{
    try_peek_in_lane, try_read_in_lane, try_read_vectored_in_lane, try_write_in_lane,
    try_write_vectored_in_lane, Interest, Ready,
};

use super::StreamCore;

impl StreamCore {
    /// Waits until no request holds the lane of at least one direction in `interest`, then
    /// for those directions whose lanes are free: until the read lane has bytes an abandoned
    /// read kept, or the kernel reports the socket ready for one of them (bytes, end of
    /// stream, room, or an error). A direction whose lane is held (an owned-buffer request
    /// in flight, from another task) is left out of that wait: `try_` says `WouldBlock`
    /// for it, and reporting it ready would make the documented `ready`-then-`try_` loop go
    /// round without yielding while the request holding the lane could never finish (its
    /// shard would never get back to its completions).
    pub(crate) async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        let free = poll_fn(|cx| {
            let read = interest.is_readable() && self.read.poll_free(cx, |_| ()).is_ready();
            let write = interest.is_writable() && self.write.poll_free(cx, |_| ()).is_ready();
            match (read, write) {
                (true, true) => Poll::Ready(Interest::READABLE | Interest::WRITABLE),
                (true, false) => Poll::Ready(Interest::READABLE),
                (false, true) => Poll::Ready(Interest::WRITABLE),
                (false, false) => Poll::Pending,
            }
        })
        .await;
        if free.is_readable() && self.read.has_kept() {
            return Ok(Ready::READABLE);
        }
        let event = self.readiness.ready(&self.fd, free).await?;
        Ok(event.ready())
    }

    /// tokio's `poll_read_ready`: ready once no request holds the read lane and a read
    /// would not wait (kept bytes, or the cache, else a poll kept across calls: only the
    /// task of the latest call is woken).
    pub(crate) fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.read.poll_free(cx, |_| ()));
        if self.read.has_kept() {
            return Poll::Ready(Ok(()));
        }
        self.readiness.poll_read_ready(cx, &self.fd).map_ok(drop)
    }

    /// tokio's `poll_write_ready` (see [`poll_read_ready`](Self::poll_read_ready)).
    pub(crate) fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.write.poll_free(cx, |_| ()));
        self.readiness.poll_write_ready(cx, &self.fd).map_ok(drop)
    }

    /// Waits until a read would not wait (see [`ready`](Self::ready)).
    pub(crate) async fn readable(&self) -> io::Result<()> {
        self.ready(Interest::READABLE).await.map(drop)
    }

    /// Waits until a write would not wait (see [`ready`](Self::ready)).
    pub(crate) async fn writable(&self) -> io::Result<()> {
        self.ready(Interest::WRITABLE).await.map(drop)
    }

    pub(crate) fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let got = self.readiness.clear_on_would_block(Interest::READABLE, || {
            try_read_in_lane(&self.fd, &self.read, buf)
        });
        self.note_try_read(&got, buf.len());
        got
    }

    /// As [`try_read`](Self::try_read), into the next chunk of `buf`, which it then advances
    /// (tokio's `try_read_buf`; a full `Vec` or `BytesMut` grows its chunk first).
    #[cfg(feature = "bytes")]
    pub(crate) fn try_read_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        // SAFETY: `try_read_in_lane_uninit` only writes bytes into the chunk, never reads it,
        // and never writes uninitialised bytes.
        let dst = unsafe { buf.chunk_mut().as_uninit_slice_mut() };
        let room = dst.len();
        let got = self.readiness.clear_on_would_block(Interest::READABLE, || {
            ringsteal_rt::io::try_read_in_lane_uninit(&self.fd, &self.read, dst)
        });
        if let Ok(n) = got {
            // SAFETY: the read initialised the first n bytes of the chunk (n <= room).
            unsafe { buf.advance_mut(n) };
        }
        self.note_try_read(&got, room);
        got
    }

    /// tokio's `poll_peek`: what a read would return, left for it, once the stream is ready
    /// (the wait of [`poll_read_ready`](Self::poll_read_ready)).
    pub(crate) fn poll_peek(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.poll_read_ready(cx))?;
            let got = self.readiness.clear_on_would_block(Interest::READABLE, || {
                try_peek_in_lane(&self.fd, &self.read, buf)
            });
            match got {
                // Not ready after all: the cache is cleared, so the next round waits.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Ok(0) if !buf.is_empty() => {
                    self.readiness.record(Ready::READ_CLOSED);
                    return Poll::Ready(Ok(0));
                }
                done => return Poll::Ready(done),
            }
        }
    }

    /// After a `try_` read into `room` bytes: a read was made, and, as after an inline read,
    /// filling all of them may have left more.
    fn note_try_read(&self, got: &io::Result<usize>, room: usize) {
        if let Ok(n) = *got {
            self.hints.read();
            self.hints.set_bytes_queued(n > 0 && n == room);
            if n == 0 && room > 0 {
                // The end of the stream, which a cached readiness from before it does not
                // say: the next wait reports it, as a poll would.
                self.readiness.record(Ready::READ_CLOSED);
            }
        }
    }

    pub(crate) fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.readiness.clear_on_would_block(Interest::WRITABLE, || {
            try_write_in_lane(&self.fd, &self.write, buf)
        })
    }

    pub(crate) fn try_read_vectored(&self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
        // The buffers one call fills at most (`IOV_MAX`).
        let room: usize = bufs
            .iter()
            .take(libc::UIO_MAXIOV as usize)
            .map(|b| b.len())
            .sum();
        let got = self.readiness.clear_on_would_block(Interest::READABLE, || {
            try_read_vectored_in_lane(&self.fd, &self.read, bufs)
        });
        self.note_try_read(&got, room);
        got
    }

    pub(crate) fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.readiness.clear_on_would_block(Interest::WRITABLE, || {
            try_write_vectored_in_lane(&self.fd, &self.write, bufs)
        })
    }

    /// Runs `f`, the caller's own non-blocking system call, holding the lanes of the
    /// directions in `interest` (tokio's `try_io`): `WouldBlock` without calling it while a
    /// request holds one, as `try_read` does, and `Other` for reading while an abandoned
    /// read's bytes are kept (`f` would read past them; `try_read` takes them). An error an
    /// abandoned read met (a reset, which the kernel reports once) is returned instead of
    /// calling `f`; a kept end of stream is dropped (the socket says it again).
    pub(crate) fn try_io<R>(
        &self,
        interest: Interest,
        f: impl FnOnce() -> io::Result<R>,
    ) -> io::Result<R> {
        let in_flight = |what: &str| {
            io::Error::new(
                io::ErrorKind::WouldBlock,
                format!("a {what} of this stream is in flight"),
            )
        };
        let mut read = match interest.is_readable() {
            true => Some(self.read.try_acquire().ok_or_else(|| in_flight("read"))?),
            false => None,
        };
        if let Some(guard) = read.as_mut() {
            if guard.has_leftover() {
                return Err(io::Error::other(
                    "bytes an abandoned read kept come first: take them with try_read",
                ));
            }
            if let Some(Err(e)) = guard.take_end() {
                return Err(e);
            }
        }
        let _write = match interest.is_writable() {
            true => Some(self.write.try_acquire().ok_or_else(|| in_flight("write"))?),
            false => None,
        };
        self.readiness.clear_on_would_block(interest, f)
    }

    /// [`try_io`](Self::try_io) each time [`ready`](Self::ready) says the stream is, until
    /// `f` says something other than `WouldBlock` (tokio's `async_io`).
    pub(crate) async fn async_io<R>(
        &self,
        interest: Interest,
        mut f: impl FnMut() -> io::Result<R>,
    ) -> io::Result<R> {
        loop {
            self.ready(interest).await?;
            match self.try_io(interest, &mut f) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                done => return done,
            }
        }
    }
}
