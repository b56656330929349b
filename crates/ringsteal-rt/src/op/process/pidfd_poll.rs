//! `IORING_OP_POLL_ADD` on a pidfd: completes when the child has exited (the fallback for
//! kernels without `IORING_OP_WAITID`; the caller then reaps with `waitid(WNOHANG)`).

use std::io;
use std::os::fd::AsRawFd;

use ringsteal_uring::opcode;

use crate::op::{cqe_result, Op, Operation, SharedFd, Sqes};

/// Completes once the process `pidfd` names has exited (its pidfd turns readable, Linux 5.3).
/// Does not reap it: follow with [`try_reap_pidfd`](super::try_reap_pidfd).
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
/// rt.block_on(ringsteal_rt::op::pidfd_exit(&pidfd)).unwrap();
/// let status = ringsteal_rt::op::try_reap_pidfd(&pidfd).unwrap().expect("it has exited");
/// assert!(status.success());
/// ```
pub fn pidfd_exit(pidfd: &SharedFd) -> Op<PidfdExit> {
    Op::new(PidfdExit {
        pidfd: pidfd.clone(),
    })
}

/// The operation of [`pidfd_exit`].
#[derive(Debug)]
pub struct PidfdExit {
    pidfd: SharedFd,
}

// SAFETY: a poll references no memory; the op holds the pidfd open until its CQE. A one-shot
// POLL_ADD posts exactly one CQE.
unsafe impl Operation for PidfdExit {
    type Output = io::Result<()>;

    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::poll_add(
            self.pidfd.as_raw_fd(),
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
