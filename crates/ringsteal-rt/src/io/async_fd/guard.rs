//! The guards an [`AsyncFd`] wait returns: what was ready, and the way to clear it when the
//! descriptor says `WouldBlock` ([`try_io`](AsyncFdReadyGuard::try_io)), as tokio's.
//!
//! May not: wait (the `AsyncFd` does).

use std::fmt;
use std::io;
use std::os::fd::AsRawFd;

use super::AsyncFd;
use crate::io::{Ready, ReadyEvent};

/// Clears what `event` (a guard's) reported, and forgets it.
fn clear_all<T: AsRawFd>(async_fd: &AsyncFd<T>, event: &mut Option<ReadyEvent>) {
    if let Some(event) = event.take() {
        async_fd.clear(event);
    }
}

/// Clears the states of `ready` among those `event` (a guard's) reported.
fn clear_matching<T: AsRawFd>(async_fd: &AsyncFd<T>, event: &mut Option<ReadyEvent>, ready: Ready) {
    if let Some(event) = event.as_mut() {
        let clear = event.ready.intersection(ready);
        async_fd.clear(ReadyEvent {
            tick: event.tick,
            ready: clear,
        });
        event.ready = event.ready.clearing(clear);
    }
}

/// `result`, unless it is `WouldBlock`: then the guard's readiness is cleared, and the
/// caller is told to wait again.
fn unless_would_block<T: AsRawFd, R>(
    async_fd: &AsyncFd<T>,
    event: &mut Option<ReadyEvent>,
    result: io::Result<R>,
) -> Result<io::Result<R>, TryIoError> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
            clear_all(async_fd, event);
            Err(TryIoError(()))
        }
        result => Ok(result),
    }
}

/// What [`try_io`](AsyncFdReadyGuard::try_io) returns when the call said `WouldBlock`: the
/// readiness was cleared, so wait again.
///
/// ```
/// use ringsteal_rt::io::AsyncFd;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
///     a.set_nonblocking(true).unwrap();
///     let a = AsyncFd::new(a).unwrap();
///     let mut guard = a.writable().await.unwrap();
///     let would_block = guard.try_io(|_| -> std::io::Result<()> {
///         Err(std::io::ErrorKind::WouldBlock.into())
///     });
///     assert!(would_block.is_err());
///     assert!(guard.ready().is_empty(), "cleared");
/// });
/// ```
#[derive(Debug)]
pub struct TryIoError(());

impl fmt::Display for TryIoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the operation would block; its readiness was cleared")
    }
}

impl std::error::Error for TryIoError {}

/// What [`AsyncFd::ready`] (and `readable`, `writable`) returns: the descriptor was ready
/// for what [`ready`](Self::ready) says. Make the system call in [`try_io`](Self::try_io),
/// which clears the readiness if the call says `WouldBlock`; or clear it yourself with
/// [`clear_ready`](Self::clear_ready). Dropped without either, the readiness stays, and the
/// next wait returns at once.
///
/// ```
/// use std::io::Read;
/// use ringsteal_rt::io::AsyncFd;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     a.set_nonblocking(true).unwrap();
///     let a = AsyncFd::new(a).unwrap();
///     std::io::Write::write_all(&mut &b, b"!").unwrap();
///     let mut guard = a.readable().await.unwrap();
///     assert!(guard.ready().is_readable());
///     let mut buf = [0; 4];
///     let n = guard.try_io(|fd| fd.get_ref().read(&mut buf)).unwrap().unwrap();
///     assert_eq!(&buf[..n], b"!");
///     // Nothing more: the next read says WouldBlock, which clears the readiness.
///     assert!(guard.try_io(|fd| fd.get_ref().read(&mut buf)).is_err());
///     assert!(guard.ready().is_empty());
/// });
/// ```
pub struct AsyncFdReadyGuard<'a, T: AsRawFd> {
    async_fd: &'a AsyncFd<T>,
    event: Option<ReadyEvent>,
}

impl<'a, T: AsRawFd> AsyncFdReadyGuard<'a, T> {
    pub(super) fn new(async_fd: &'a AsyncFd<T>, event: ReadyEvent) -> Self {
        Self {
            async_fd,
            event: Some(event),
        }
    }

    /// What was ready (empty once cleared).
    pub fn ready(&self) -> Ready {
        self.event.map_or(Ready::EMPTY, |e| e.ready)
    }

    /// Forgets the readiness this guard reported (but a closed side, which stays), so the
    /// next wait asks the kernel again; readiness seen by a wait that ended after this
    /// guard's stays. Call it after the descriptor said `WouldBlock`.
    pub fn clear_ready(&mut self) {
        clear_all(self.async_fd, &mut self.event);
    }

    /// Clears only the states of `ready` among those this guard reported (for a guard of
    /// both directions whose read said `WouldBlock` while writes still may go on).
    pub fn clear_ready_matching(&mut self, ready: Ready) {
        clear_matching(self.async_fd, &mut self.event, ready);
    }

    /// Keeps the readiness (what dropping the guard does), as tokio's `retain_ready`.
    pub fn retain_ready(&mut self) {
        self.event = None;
    }

    /// Runs `f` (the system call) and clears the readiness if it says `WouldBlock`: then
    /// `Err(TryIoError)`, and the caller waits again. Any other result is `Ok(result)`.
    ///
    /// # Errors
    /// [`TryIoError`] when `f` returned `WouldBlock`.
    pub fn try_io<R>(
        &mut self,
        f: impl FnOnce(&'a AsyncFd<T>) -> io::Result<R>,
    ) -> Result<io::Result<R>, TryIoError> {
        let result = f(self.async_fd);
        unless_would_block(self.async_fd, &mut self.event, result)
    }

    /// The `AsyncFd` the guard is of.
    pub fn get_ref(&self) -> &'a AsyncFd<T> {
        self.async_fd
    }

    /// The value inside the `AsyncFd`.
    pub fn get_inner(&self) -> &'a T {
        self.async_fd.get_ref()
    }
}

impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFdReadyGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFdReadyGuard")
            .field("async_fd", self.async_fd)
            .field("ready", &self.ready())
            .finish()
    }
}

/// [`AsyncFdReadyGuard`] over an `AsyncFd` lent mutably (`readable_mut`, `ready_mut`, ...),
/// for an inner value whose I/O needs `&mut`.
///
/// ```
/// use std::io::Write;
/// use ringsteal_rt::io::AsyncFd;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     a.set_nonblocking(true).unwrap();
///     let mut a = AsyncFd::new(a).unwrap();
///     let mut guard = a.writable_mut().await.unwrap();
///     let n = guard.try_io(|fd| fd.get_mut().write(b"x")).unwrap().unwrap();
///     assert_eq!(n, 1);
///     drop(b);
/// });
/// ```
pub struct AsyncFdReadyMutGuard<'a, T: AsRawFd> {
    async_fd: &'a mut AsyncFd<T>,
    event: Option<ReadyEvent>,
}

impl<'a, T: AsRawFd> AsyncFdReadyMutGuard<'a, T> {
    pub(super) fn new(async_fd: &'a mut AsyncFd<T>, event: ReadyEvent) -> Self {
        Self {
            async_fd,
            event: Some(event),
        }
    }

    /// What was ready (empty once cleared).
    pub fn ready(&self) -> Ready {
        self.event.map_or(Ready::EMPTY, |e| e.ready)
    }

    /// As [`AsyncFdReadyGuard::clear_ready`].
    pub fn clear_ready(&mut self) {
        clear_all(self.async_fd, &mut self.event);
    }

    /// As [`AsyncFdReadyGuard::clear_ready_matching`].
    pub fn clear_ready_matching(&mut self, ready: Ready) {
        clear_matching(self.async_fd, &mut self.event, ready);
    }

    /// As [`AsyncFdReadyGuard::retain_ready`].
    pub fn retain_ready(&mut self) {
        self.event = None;
    }

    /// As [`AsyncFdReadyGuard::try_io`], with `f` given the `AsyncFd` mutably.
    ///
    /// # Errors
    /// [`TryIoError`] when `f` returned `WouldBlock`.
    pub fn try_io<R>(
        &mut self,
        f: impl FnOnce(&mut AsyncFd<T>) -> io::Result<R>,
    ) -> Result<io::Result<R>, TryIoError> {
        let result = f(self.async_fd);
        unless_would_block(self.async_fd, &mut self.event, result)
    }

    /// The `AsyncFd` the guard is of.
    pub fn get_ref(&self) -> &AsyncFd<T> {
        self.async_fd
    }

    /// The `AsyncFd` the guard is of, mutably.
    pub fn get_mut(&mut self) -> &mut AsyncFd<T> {
        self.async_fd
    }

    /// The value inside the `AsyncFd`.
    pub fn get_inner(&self) -> &T {
        self.async_fd.get_ref()
    }

    /// The value inside the `AsyncFd`, mutably.
    pub fn get_inner_mut(&mut self) -> &mut T {
        self.async_fd.get_mut()
    }
}

impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFdReadyMutGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFdReadyMutGuard")
            .field("async_fd", &*self.async_fd)
            .field("ready", &self.ready())
            .finish()
    }
}
