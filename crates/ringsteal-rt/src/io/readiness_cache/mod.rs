//! [`ReadinessCache`]: tokio's readiness model for a descriptor shared by `&` (an
//! [`AsyncFd`](crate::io::AsyncFd), the sockets' readiness waits and `poll_*` methods).
//!
//! Each wait that finds nothing ready in the cache is a one-shot `IORING_OP_POLL_ADD` on
//! the ring of the shard that polls (the readiness driver planned for hosts that refuse
//! io_uring answers the same waits from its epoll set). What a poll reports is cached
//! (`state.rs`) until a caller clears it after the descriptor said `EAGAIN`, as in tokio's
//! edge-triggered model; so a descriptor that stays ready costs no poll per call. While the
//! descriptor reports an error that may stay (an unread error-queue entry), waits watch for
//! changes with a multishot poll instead (`wait.rs`), so that they sleep as tokio's do.
//!
//! Owns: the cached readiness, whether the last poll saw a lasting error, and the polls of
//! the `poll_*_ready` calls, one kept per direction across calls.
//! May not: read or write the descriptor (the caller does, between a wait and a clear).

mod state;
mod wait;

pub use state::ReadyEvent;

use std::future::poll_fn;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::sync::Mutex;
use std::task::{ready, Context, Poll};

use self::state::ReadyState;
use self::wait::{only_an_error, Wait};
use crate::io::{Interest, Ready};

const READ: usize = 0;
const WRITE: usize = 1;

/// The readiness of one descriptor, cached between waits as tokio caches it: a wait returns
/// at once while what it asks for is cached, and otherwise asks the kernel (a one-shot
/// `POLL_ADD` on the polling shard's ring) and caches the answer; a caller whose system
/// call said `WouldBlock` [clears](Self::clear) what it was given.
///
/// What [`AsyncFd`](crate::io::AsyncFd) and the sockets' readiness waits and `poll_*`
/// methods are built on. A kept poll armed on another shard's ring is replaced by one
/// armed on the polling shard. An error the descriptor keeps reporting (an unread entry in
/// a socket's error queue) is reported once, as tokio's edge-triggered epoll reports it:
/// once a caller has cleared it, waits sleep until the descriptor changes. Whoever holds one
/// must drop it before the descriptor closes (declare it first): its kept polls name the
/// descriptor by number, and dropping them asks for their cancel.
///
/// ```
/// use std::future::poll_fn;
/// use std::io::{ErrorKind, Read};
/// use ringsteal_rt::io::ReadinessCache;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     a.set_nonblocking(true).unwrap();
///     let cache = ReadinessCache::new();
///     std::io::Write::write_all(&mut &b, b"hi").unwrap();
///     let mut buf = [0; 8];
///     loop {
///         let event = poll_fn(|cx| cache.poll_read_ready(cx, &a)).await.unwrap();
///         match (&a).read(&mut buf) {
///             Err(e) if e.kind() == ErrorKind::WouldBlock => cache.clear(event),
///             got => break assert_eq!(got.unwrap(), 2),
///         }
///     }
/// });
/// ```
#[derive(Debug, Default)]
pub struct ReadinessCache {
    /// The polls of `poll_read_ready` and `poll_write_ready`, kept across their calls.
    polls: [Mutex<Option<Wait>>; 2],
    state: ReadyState,
    /// How many one-shot polls in a row reported an error and nothing else asked for, up
    /// to [`LASTING`]: from two on the error is taken to stay (a poll is armed only while
    /// the cache has nothing, so between two such polls a caller's system call said
    /// `WouldBlock` without taking the error, or two waiters saw it at once), and waits are
    /// edge-triggered (`wait.rs`) until a report no longer has it. One alone is usually a
    /// pending socket error that the next `recv` returns and clears.
    errors_alone: AtomicU8,
}

/// [`ReadinessCache::errors_alone`] from which the error is taken to stay.
const LASTING: u8 = 2;

impl ReadinessCache {
    /// An empty cache: the first wait asks the kernel.
    pub fn new() -> Self {
        Self::default()
    }

    /// Waits, with a poll of its own, until the cache has something for `interest` on `fd`.
    ///
    /// Cancel-safe: dropped, it has consumed nothing.
    ///
    /// # Errors
    /// The poll's (`EBADF`, a runtime shutting down under the wait, ...).
    pub async fn ready(&self, fd: &impl AsRawFd, interest: Interest) -> io::Result<ReadyEvent> {
        let fd = fd.as_raw_fd();
        let mut poll = None;
        poll_fn(|cx| self.poll_cache_or(cx, fd, interest, &mut poll)).await
    }

    /// Polls for read readiness of `fd`, as tokio's `poll_read_ready`: only the task of the
    /// latest call is woken (one poll is kept for reads across calls).
    ///
    /// # Errors
    /// As for [`ready`](Self::ready).
    pub fn poll_read_ready(
        &self,
        cx: &mut Context<'_>,
        fd: &impl AsRawFd,
    ) -> Poll<io::Result<ReadyEvent>> {
        self.poll_kept(cx, fd.as_raw_fd(), READ)
    }

    /// Polls for write readiness of `fd`, as tokio's `poll_write_ready` (see
    /// [`poll_read_ready`](Self::poll_read_ready)).
    ///
    /// # Errors
    /// As for [`ready`](Self::ready).
    pub fn poll_write_ready(
        &self,
        cx: &mut Context<'_>,
        fd: &impl AsRawFd,
    ) -> Poll<io::Result<ReadyEvent>> {
        self.poll_kept(cx, fd.as_raw_fd(), WRITE)
    }

    /// What the cache has for `interest` now, without waiting.
    pub fn get(&self, interest: Interest) -> Option<ReadyEvent> {
        self.state.get(interest)
    }

    /// Adds what a system call learned to the cache (a read that returned the end of the
    /// stream: `Ready::READ_CLOSED`, which stays), so a wait after it says so at once, as
    /// a poll would have.
    pub fn record(&self, ready: Ready) {
        self.state.record(ready);
    }

    /// Clears what `event` reported (the system call it allowed said `WouldBlock`), unless
    /// the cache recorded something since.
    pub fn clear(&self, event: ReadyEvent) {
        self.state.clear(event);
    }

    /// Runs `io`, a non-blocking system call in the direction of `interest`, and clears what
    /// the cache had for it if the call says `WouldBlock`: what a `try_` method does, so
    /// that a `poll_*_ready` after it waits for the kernel instead of answering ready again.
    ///
    /// # Errors
    /// `io`'s.
    pub fn clear_on_would_block<R>(
        &self,
        interest: Interest,
        io: impl FnOnce() -> io::Result<R>,
    ) -> io::Result<R> {
        let seen = self.get(interest);
        let result = io();
        if let (Some(event), Err(e)) = (seen, &result) {
            if e.kind() == io::ErrorKind::WouldBlock {
                self.clear(event);
            }
        }
        result
    }

    /// Counts the one-shot polls in a row that reported an error alone; an edge-triggered
    /// wait keeps the count at [`LASTING`] while its reports still have the error.
    fn note_errors(&self, edge: bool, revents: u32, events: u32) {
        let count = self.errors_alone.load(Relaxed);
        let next = if edge {
            if revents & libc::POLLERR as u32 != 0 {
                LASTING
            } else {
                0
            }
        } else if only_an_error(revents, events) {
            (count + 1).min(LASTING)
        } else {
            0
        };
        if next != count {
            self.errors_alone.store(next, Relaxed);
        }
    }

    /// Waits with the direction's kept poll.
    fn poll_kept(
        &self,
        cx: &mut Context<'_>,
        fd: RawFd,
        direction: usize,
    ) -> Poll<io::Result<ReadyEvent>> {
        let interest = if direction == READ {
            Interest::READABLE
        } else {
            Interest::WRITABLE
        };
        let mut kept = self.polls[direction]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        self.poll_cache_or(cx, fd, interest, &mut kept)
    }

    /// What the cache has for `interest`, else the result of `poll` (armed if it is not),
    /// recorded in the cache, until the cache has something.
    fn poll_cache_or(
        &self,
        cx: &mut Context<'_>,
        fd: RawFd,
        interest: Interest,
        poll: &mut Option<Wait>,
    ) -> Poll<io::Result<ReadyEvent>> {
        let events = interest.poll_events();
        loop {
            if let Some(event) = self.state.get(interest) {
                // A poll armed for an earlier call is not needed now: cancel it.
                *poll = None;
                return Poll::Ready(Ok(event));
            }
            // A kept poll armed on another shard's ring (the value moved between tasks, or
            // out of a `block_on`: shard 0 runs only inside one) would complete only when
            // that shard ran, if ever: arm one here instead. A poll consumes nothing, and a
            // new one reports the descriptor's state at once.
            if poll.as_ref().is_some_and(Wait::armed_elsewhere) {
                *poll = None;
            }
            let wait = poll.get_or_insert_with(|| {
                Wait::new(fd, events, self.errors_alone.load(Relaxed) >= LASTING)
            });
            let edge = wait.is_edge();
            let revents = ready!(wait.poll(cx, events));
            *poll = None;
            let revents = revents?;
            self.note_errors(edge, revents, events);
            self.state
                .record(Ready::from_poll_events(revents, interest));
        }
    }
}
