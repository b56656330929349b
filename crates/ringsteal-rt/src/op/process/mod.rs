//! Child-process operations: waiting for a child named by a pidfd, with `IORING_OP_WAITID`
//! (Linux 6.7) where the kernel has it, or by polling the pidfd for its exit (5.3,
//! [`poll_readable`](super::poll_readable)) and then reaping it with
//! `waitid(P_PIDFD, WNOHANG)` ([`try_reap_pidfd`]). One file per opcode family; what a child *is*
//! (spawning, pipes, reaping dropped children) belongs to the `ringsteal-process` crate.

mod waitid;

pub use waitid::{wait_exit_pidfd, waitid_pidfd, WaitId};

use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use ringsteal_uring::abi::IORING_OP_WAITID;

use super::SharedFd;

/// Whether a wait on the current runtime may use `IORING_OP_WAITID`: the kernel has it and
/// the runtime's builder did not take it away (`without_feature(Feature::Waitid)`, a testing
/// switch that forces the pidfd-poll path). Off a runtime, whether the kernel has it.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// let kernel_has_it = ringsteal_uring::Features::get()
///     .is_ok_and(|f| f.opcode_supported(ringsteal_uring::abi::IORING_OP_WAITID));
/// rt.block_on(async { assert_eq!(ringsteal_rt::op::waitid_available(), kernel_has_it) });
/// ```
pub fn waitid_available() -> bool {
    super::support::has_opcode(IORING_OP_WAITID)
}

/// The exit status in a `siginfo_t` filled by `waitid(WEXITED)`, or `None` if it names no
/// child (`si_pid == 0`: `WNOHANG` found none that had exited).
pub fn exit_status_from_siginfo(info: &libc::siginfo_t) -> Option<ExitStatus> {
    // SAFETY: waitid fills the SIGCHLD fields; on a zeroed siginfo_t they read as 0.
    let (pid, status) = unsafe { (info.si_pid(), info.si_status()) };
    if pid == 0 {
        return None;
    }
    // The wait(2) status word that `ExitStatus` decodes.
    let raw = match info.si_code {
        libc::CLD_EXITED => (status & 0xff) << 8,
        libc::CLD_KILLED => status & 0x7f,
        libc::CLD_DUMPED => (status & 0x7f) | 0x80,
        libc::CLD_STOPPED | libc::CLD_TRAPPED => ((status & 0xff) << 8) | 0x7f,
        _ => 0xffff, // CLD_CONTINUED
    };
    Some(ExitStatus::from_raw(raw))
}

/// `waitid(P_PIDFD, pidfd, WEXITED | WNOHANG)`: reaps the child if it has exited (`Some`),
/// `None` if it is still running. `ECHILD` if it was already reaped.
pub fn try_reap_pidfd(pidfd: &SharedFd) -> io::Result<Option<ExitStatus>> {
    waitid_now(pidfd, libc::WEXITED | libc::WNOHANG)
}

/// Like [`try_reap_pidfd`], but leaves an exited child waitable (`WNOWAIT`): only looks.
pub fn peek_exit_pidfd(pidfd: &SharedFd) -> io::Result<Option<ExitStatus>> {
    waitid_now(pidfd, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT)
}

fn waitid_now(pidfd: &SharedFd, options: i32) -> io::Result<Option<ExitStatus>> {
    // SAFETY: all-zero is a valid siginfo_t (and the "no child" answer of WNOHANG).
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `info` is a valid siginfo_t to write; the pidfd is open (we hold it).
        let r = unsafe {
            libc::waitid(
                libc::P_PIDFD,
                pidfd.as_raw_fd() as libc::id_t,
                &mut info,
                options,
            )
        };
        if r == 0 {
            return Ok(exit_status_from_siginfo(&info));
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}
