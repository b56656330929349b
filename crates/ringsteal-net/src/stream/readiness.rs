//! tokio's readiness methods on a stream: `readable` and `writable` wait (one one-shot
//! `IORING_OP_POLL_ADD` each), `try_read` and `try_write` make one non-blocking system call
//! in the direction's lane or return `WouldBlock` (`ringsteal_rt::io::try_read_in_lane`).
//!
//! May not: hold a lane across an await (a readiness wait takes no lane, so it never keeps
//! an owned-buffer read or write waiting; it waits for the lane to be free first).

use std::future::poll_fn;
use std::io;

use ringsteal_rt::io::{try_read_in_lane, try_write_in_lane, Lane};
use ringsteal_rt::op;

use super::StreamCore;

/// What `readable` waits for: bytes, the peer's end of stream (`POLLRDHUP`) or an error
/// (`POLLERR` and `POLLHUP` are always reported).
const READABLE: u32 = (libc::POLLIN | libc::POLLRDHUP) as u32;

impl StreamCore {
    /// Waits until a read would not wait: no request holds the read lane, and it has bytes
    /// kept by an abandoned read or the kernel reports the socket readable (bytes, end of
    /// stream or an error).
    pub(crate) async fn readable(&self) -> io::Result<()> {
        until_free(&self.read).await;
        if self.read.has_leftover() {
            return Ok(());
        }
        op::poll_add(&self.fd, READABLE).await.map(drop)
    }

    /// Waits until no request holds the write lane and the kernel reports room in the send
    /// buffer (or an error).
    pub(crate) async fn writable(&self) -> io::Result<()> {
        until_free(&self.write).await;
        op::poll_add(&self.fd, libc::POLLOUT as u32).await.map(drop)
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
