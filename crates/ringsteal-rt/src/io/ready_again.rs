//! [`ReadyAgain`]: waiting, after a non-blocking call said `EAGAIN`, until the descriptor may
//! take it: one poll request for the call's events, and after a few refusals in a row that
//! the poll did not foresee, a pause before it too, so the retries do not spin.
//!
//! Some descriptors' polls answer at once while the call still refuses: a pipe end whose
//! poll says ready, or an unconnected Unix datagram socket whose receiver's queue is full
//! (its poll looks only at its own send buffer). Their retries back off, 1 ms doubling to
//! 64 ms.
//!
//! May not: make the call (the caller does, between waits).

use std::io;
use std::time::Duration;

use crate::op::{poll_add, SharedFd};

/// Refusals in a row after which [`ReadyAgain::wait`] also pauses.
const RETRIES_BEFORE_BACKOFF: u32 = 3;

/// The longest pause, as a power of two milliseconds (64 ms).
const LONGEST_PAUSE_SHIFT: u32 = 6;

/// The waits between the attempts of one non-blocking call that said `EAGAIN`: make one per
/// call, and [`wait`](Self::wait) after each refusal.
///
/// ```
/// use ringsteal_rt::io::ReadyAgain;
/// use ringsteal_rt::op::SharedFd;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let a = SharedFd::new(a.into());
///     let mut again = ReadyAgain::new(libc::POLLOUT);
///     // An empty socket is writable at once.
///     again.wait(&a).await.unwrap();
/// });
/// ```
#[derive(Debug)]
pub struct ReadyAgain {
    events: i16,
    refusals: u32,
    poll_may_miss: bool,
}

impl ReadyAgain {
    /// Waits for `events` (`POLLIN`, `POLLOUT`).
    pub fn new(events: i16) -> Self {
        Self {
            events,
            refusals: 0,
            poll_may_miss: false,
        }
    }

    /// For a call whose readiness the descriptor's poll may never report: a connected Unix
    /// datagram socket sending to another address than its peer polls writable only when
    /// the *peer* has room. Each poll is then also bounded (1 ms doubling to 64 ms), so the
    /// call is tried again anyway.
    pub fn poll_may_miss(mut self) -> Self {
        self.poll_may_miss = true;
        self
    }

    /// After the call was refused (`EAGAIN`): until `fd` polls ready for the events, after a
    /// pause if the call has been refused more than a few times in a row (or, with
    /// [`poll_may_miss`](Self::poll_may_miss), at most a pause). A failed poll request ends
    /// it with that error.
    pub async fn wait(&mut self, fd: &SharedFd) -> io::Result<()> {
        self.refusals += 1;
        if self.refusals > RETRIES_BEFORE_BACKOFF {
            let shift = (self.refusals - RETRIES_BEFORE_BACKOFF - 1).min(LONGEST_PAUSE_SHIFT);
            crate::time::sleep(Duration::from_millis(1 << shift)).await;
        }
        let poll = poll_add(fd, self.events as u32);
        if !self.poll_may_miss {
            return poll.await.map(drop);
        }
        let shift = (self.refusals - 1).min(LONGEST_PAUSE_SHIFT);
        match crate::time::timeout(Duration::from_millis(1 << shift), poll).await {
            Ok(polled) => polled.map(drop),
            Err(_) => Ok(()), // the poll may never say it: try the call again
        }
    }
}
