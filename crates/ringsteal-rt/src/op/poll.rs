//! `IORING_OP_POLL_ADD`, one-shot: wait until a descriptor is readable, without reading.
//! Used for what has no read to wait with (a pidfd turns readable when its process exits) and
//! where a read would consume what another waiter needs (a shared eventfd).

use std::io;
use std::os::fd::AsRawFd;

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
