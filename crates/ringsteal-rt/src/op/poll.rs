//! `IORING_OP_POLL_ADD`, one-shot: wait until a descriptor is readable (or writable),
//! without reading or writing. Used for what has no read to wait with (a pidfd turns readable
//! when its process exits), where a read would consume what another waiter needs (a shared
//! eventfd), and by the readiness path of poll-based I/O (`io/readiness.rs`, ADR-0014).

use std::io;
use std::os::fd::{AsRawFd, RawFd};

use ringsteal_uring::opcode;

use crate::op::{cqe_result, Op, Operation, SharedFd, Sqes};

/// Completes once `fd` is readable (`POLLIN`; also on `POLLERR`/`POLLHUP`). Reads nothing.
/// A pidfd is readable once its process has exited (Linux 5.3): follow with
/// [`try_reap_pidfd`](super::try_reap_pidfd) to reap it.
///
/// ```
/// use std::os::fd::{FromRawFd, OwnedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// let child = std::process::Command::new("true").spawn().unwrap();
/// // SAFETY: pidfd_open returns a new descriptor or -1; the unreaped child keeps its pid.
/// let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, child.id() as libc::pid_t, 0) };
/// assert!(fd >= 0);
/// // SAFETY: the descriptor is new and ours.
/// let pidfd = ringsteal_rt::op::SharedFd::new(unsafe { OwnedFd::from_raw_fd(fd as i32) });
/// rt.block_on(ringsteal_rt::op::poll_readable(&pidfd)).unwrap();
/// let status = ringsteal_rt::op::try_reap_pidfd(&pidfd).unwrap().expect("it has exited");
/// assert!(status.success());
/// ```
pub fn poll_readable(fd: &SharedFd) -> Op<PollReadable> {
    Op::new(PollReadable { fd: fd.clone() })
}

/// The operation of [`poll_readable`].
///
/// ```
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
/// rt.block_on(async {
///     let (rx, tx) = std::os::unix::net::UnixStream::pair().unwrap();
///     let rx = SharedFd::new(rx.into());
///     let writer = ringsteal_rt::spawn_blocking(move || std::io::Write::write_all(&mut &tx, b"!"));
///     op::poll_readable(&rx).await.unwrap(); // readable; nothing consumed
///     writer.await.unwrap().unwrap();
///     let (n, _) = op::recv(&rx, Vec::with_capacity(1), 0).await;
///     assert_eq!(n.unwrap(), 1);
/// });
/// ```
#[derive(Debug)]
pub struct PollReadable {
    fd: SharedFd,
}

// SAFETY: a poll references no memory; the op holds the descriptor open until its CQE. A
// one-shot POLL_ADD posts exactly one CQE.
unsafe impl Operation for PollReadable {
    type Output = io::Result<()>;

    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::poll_add(
            self.fd.as_raw_fd(),
            libc::POLLIN as u32,
            false,
        ))
    }

    fn complete(self, results: &[(i32, u32)]) -> Self::Output {
        cqe_result(results[0].0).map(drop)
    }

    fn fail(self, err: io::Error) -> Self::Output {
        Err(err)
    }
}

/// Completes once `fd` is ready for any of `events` (`libc::POLLIN`, `libc::POLLOUT`, ...;
/// `POLLERR` and `POLLHUP` are always reported) and yields the events that were ready
/// (`revents`). One-shot: one wait, one completion. Touches no memory.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
/// let a = ringsteal_rt::op::SharedFd::new(a.into());
/// // An empty socket with room in its send buffer is writable at once.
/// let revents = rt.block_on(ringsteal_rt::op::poll_add(&a, libc::POLLOUT as u32)).unwrap();
/// assert_ne!(revents & libc::POLLOUT as u32, 0);
/// ```
pub fn poll_add(fd: &SharedFd, events: u32) -> Op<PollAdd> {
    Op::new(PollAdd {
        fd: fd.clone(),
        events,
    })
}

/// The operation of [`poll_add`]: yields the ready events (`revents`).
///
/// ```
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     drop(b); // the peer hangs up
///     let a = SharedFd::new(a.into());
///     let revents = op::poll_add(&a, libc::POLLIN as u32).await.unwrap();
///     assert_ne!(revents & libc::POLLHUP as u32, 0, "POLLHUP is always reported");
/// });
/// ```
#[derive(Debug)]
pub struct PollAdd {
    fd: SharedFd,
    events: u32,
}

// SAFETY: a poll references no memory; the op holds the descriptor open until its CQE. A
// one-shot POLL_ADD posts exactly one CQE.
unsafe impl Operation for PollAdd {
    type Output = io::Result<u32>;

    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::poll_add(self.fd.as_raw_fd(), self.events, false))
    }

    fn complete(self, results: &[(i32, u32)]) -> Self::Output {
        cqe_result(results[0].0)
    }

    fn fail(self, err: io::Error) -> Self::Output {
        Err(err)
    }
}

/// A one-shot `POLL_ADD` on a descriptor the caller owns and names by number
/// ([`AsyncFd`](crate::io::AsyncFd)'s waits): yields the ready events, as [`poll_add`].
pub(crate) fn poll_add_by_number(fd: RawFd, events: u32) -> Op<PollAddByNumber> {
    Op::new(PollAddByNumber { fd, events })
}

/// The operation of [`poll_add_by_number`].
#[derive(Debug)]
pub(crate) struct PollAddByNumber {
    fd: RawFd,
    events: u32,
}

// SAFETY: a poll references no memory and has no effect on the file it watches. It holds no
// descriptor: its maker keeps the number open while it waits, and drops (cancels) the op
// before closing it. Once the kernel has taken the SQE it holds the file itself until the
// poll ends. If the number is closed before that (a wait dropped before its shard
// submitted), the poll fails (`EBADF`) or watches whatever file reused the number until its
// cancel lands, which does nothing to that file. A one-shot POLL_ADD posts exactly one CQE.
unsafe impl Operation for PollAddByNumber {
    type Output = io::Result<u32>;

    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::poll_add(self.fd, self.events, false))
    }

    fn complete(self, results: &[(i32, u32)]) -> Self::Output {
        cqe_result(results[0].0)
    }

    fn fail(self, err: io::Error) -> Self::Output {
        Err(err)
    }
}
