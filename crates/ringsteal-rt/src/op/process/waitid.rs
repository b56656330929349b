//! `IORING_OP_WAITID` on a pidfd: waits for the child to exit and reaps it, in the kernel
//! ([`waitid_pidfd`]), or waits for the exit and leaves the child to be reaped
//! ([`wait_exit_pidfd`]: `WNOWAIT`).

use std::io;
use std::os::fd::AsRawFd;
use std::process::ExitStatus;

use ringsteal_uring::opcode;

use super::exit_status_from_siginfo;
use crate::op::{cqe_result, Op, Operation, SharedFd, Sqes};

/// Waits for the child `pidfd` names to exit and reaps it (`IORING_OP_WAITID`, Linux 6.7:
/// check [`waitid_available`](super::waitid_available)); yields its exit status. `ECHILD` if
/// the child was already reaped; a kernel without the opcode fails it with `EINVAL`.
/// Dropping the op before it completes cancels the wait and leaves the child unreaped.
///
/// ```
/// use std::os::fd::{FromRawFd, OwnedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// if !ringsteal_rt::op::waitid_available() { return; }
/// let child = std::process::Command::new("sh").args(["-c", "exit 7"]).spawn().unwrap();
/// // SAFETY: pidfd_open returns a new descriptor or -1. The child is not reaped yet (nothing
/// // else waits for it), so its pid still names it.
/// let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, child.id() as libc::pid_t, 0) };
/// assert!(fd >= 0);
/// // SAFETY: the descriptor is new and ours.
/// let pidfd = ringsteal_rt::op::SharedFd::new(unsafe { OwnedFd::from_raw_fd(fd as i32) });
/// let status = rt.block_on(ringsteal_rt::op::waitid_pidfd(&pidfd)).unwrap();
/// assert_eq!(status.code(), Some(7));
/// ```
pub fn waitid_pidfd(pidfd: &SharedFd) -> Op<WaitId> {
    WaitId::op(pidfd, libc::WEXITED)
}

/// Waits for the child `pidfd` names to exit and yields its exit status, but leaves it
/// waitable (`IORING_OP_WAITID` with `WNOWAIT`, Linux 6.7: check
/// [`waitid_available`](super::waitid_available)): the child stays a zombie, holding its pid,
/// until someone reaps it, e.g. with [`try_reap_pidfd`](super::try_reap_pidfd). So the op
/// consumes nothing: dropped or cancelled at any point, even after the kernel completed it,
/// it loses no exit status, and another wait can take its place on another ring.
///
/// ```
/// use std::os::fd::{FromRawFd, OwnedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// if !ringsteal_rt::op::waitid_available() { return; }
/// let child = std::process::Command::new("sh").args(["-c", "exit 7"]).spawn().unwrap();
/// // SAFETY: pidfd_open returns a new descriptor or -1. The child is not reaped yet (nothing
/// // else waits for it), so its pid still names it.
/// let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, child.id() as libc::pid_t, 0) };
/// assert!(fd >= 0);
/// // SAFETY: the descriptor is new and ours.
/// let pidfd = ringsteal_rt::op::SharedFd::new(unsafe { OwnedFd::from_raw_fd(fd as i32) });
/// let status = rt.block_on(ringsteal_rt::op::wait_exit_pidfd(&pidfd)).unwrap();
/// assert_eq!(status.code(), Some(7));
/// // Still there to be reaped, with the same status.
/// let reaped = ringsteal_rt::op::try_reap_pidfd(&pidfd).unwrap();
/// assert_eq!(reaped, Some(status));
/// ```
pub fn wait_exit_pidfd(pidfd: &SharedFd) -> Op<WaitId> {
    WaitId::op(pidfd, libc::WEXITED | libc::WNOWAIT)
}

/// The operation of [`waitid_pidfd`] and [`wait_exit_pidfd`]: yields the child's exit
/// status, or fails with `ErrorKind::Unsupported` where the runtime may not use
/// `IORING_OP_WAITID` (Linux 6.7). `ringsteal_process::Child::wait` is built on it (and
/// polls the pidfd instead where it is missing).
///
/// ```
/// use std::os::fd::{FromRawFd, OwnedFd};
///
/// if !ringsteal_rt::op::waitid_available() { return; }
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// let child = std::process::Command::new("true").spawn().unwrap();
/// // SAFETY: pidfd_open returns a new descriptor or -1; the unreaped child keeps its pid.
/// let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, child.id() as libc::pid_t, 0) };
/// assert!(fd >= 0);
/// // SAFETY: the descriptor is new and ours.
/// let pidfd = ringsteal_rt::op::SharedFd::new(unsafe { OwnedFd::from_raw_fd(fd as i32) });
/// let status = rt.block_on(ringsteal_rt::op::waitid_pidfd(&pidfd)).unwrap();
/// assert!(status.success());
/// ```
pub struct WaitId {
    pidfd: SharedFd,
    /// The `waitid` options: `WEXITED`, with or without `WNOWAIT`.
    options: i32,
    /// Written by the kernel when the child exits; lives in the op cell until the CQE.
    info: SigInfo,
}

impl WaitId {
    fn op(pidfd: &SharedFd, options: i32) -> Op<WaitId> {
        Op::new(WaitId {
            pidfd: pidfd.clone(),
            options,
            // SAFETY: all-zero is a valid siginfo_t.
            info: SigInfo(unsafe { std::mem::zeroed() }),
        })
    }
}

/// A `siginfo_t` that may move between threads.
struct SigInfo(libc::siginfo_t);

// SAFETY: plain data written by the kernel; its pointer-typed fields (`si_addr`, `si_value`)
// are never dereferenced here, and SIGCHLD's are integers anyway.
unsafe impl Send for SigInfo {}

impl std::fmt::Debug for WaitId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaitId")
            .field("pidfd", &self.pidfd)
            .field("options", &self.options)
            .finish()
    }
}

// SAFETY: the SQE points at `self.info`, which the op owns; the pidfd stays open (the op holds
// a clone) until the CQE. WAITID posts exactly one CQE.
unsafe impl Operation for WaitId {
    const REQUIRES: Option<u8> = Some(ringsteal_uring::abi::IORING_OP_WAITID);
    type Output = io::Result<ExitStatus>;

    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::waitid(
            libc::P_PIDFD,
            self.pidfd.as_raw_fd(),
            &mut self.info.0,
            self.options,
        ))
    }

    fn complete(self, results: &[(i32, u32)]) -> Self::Output {
        cqe_result(results[0].0)?;
        exit_status_from_siginfo(&self.info.0)
            .ok_or_else(|| io::Error::other("waitid completed without naming the child"))
    }

    fn fail(self, err: io::Error) -> Self::Output {
        Err(err)
    }
}
