//! tokio's readiness methods on a stream: `ready`, `readable` and `writable` wait (one
//! one-shot `IORING_OP_POLL_ADD` each), `try_read` and `try_write` make one non-blocking
//! system call in the direction's lane or return `WouldBlock`
//! (`ringsteal_rt::io::try_read_in_lane`).
//!
//! May not: hold a lane across an await (a readiness wait takes no lane, so it never keeps
//! an owned-buffer read or write waiting; it waits for the lane to be free first).

use std::future::poll_fn;
use std::io;

use ringsteal_rt::io::{try_read_in_lane, try_write_in_lane, Interest, Lane, Ready};
use ringsteal_rt::op;

use super::StreamCore;

impl StreamCore {
    /// Waits until no request holds the lanes of the directions in `interest`, then until
    /// the read lane has bytes an abandoned read kept (if reads are of interest) or the
    /// kernel reports the socket ready for one of them (bytes, end of stream, room, or an
    /// error, which is always reported).
    pub(crate) async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        if interest.is_readable() {
            until_free(&self.read).await;
        }
        if interest.is_writable() {
            until_free(&self.write).await;
        }
        if interest.is_readable() && self.read.has_leftover() {
            return Ok(Ready::READABLE);
        }
        let revents = op::poll_add(&self.fd, interest.poll_events()).await?;
        Ok(Ready::from_poll_events(revents, interest))
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
        let got = try_read_in_lane(&self.fd, &self.read, buf);
        if let Ok(n) = got {
            // A read was made; as after an inline read, a full buffer may have left more.
            self.hints.read();
            self.hints.set_bytes_queued(n > 0 && n == buf.len());
        }
        got
    }

    pub(crate) fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        try_write_in_lane(&self.fd, &self.write, buf)
    }
}

/// Waits until no request holds `lane` (without taking it). While one does, `try_read` and
/// `try_write` say `WouldBlock`; reporting readiness then would make the documented
/// `readable`-then-`try_read` loop go round without yielding, and the request holding the
/// lane could never finish (its shard would never get back to its completions).
async fn until_free(lane: &Lane) {
    poll_fn(|cx| lane.poll_free(cx, |_| ())).await;
}
