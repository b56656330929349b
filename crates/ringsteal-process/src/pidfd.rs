//! The two pidfd system calls libc has no wrapper for: `pidfd_open` (5.3) and
//! `pidfd_send_signal` (5.1). Owns nothing else; reaping lives in `ringsteal_rt::op`.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use ringsteal_rt::op::SharedFd;

/// A pidfd for `pid` (close-on-exec, blocking: a non-blocking pidfd would turn the kernel's
/// `waitid` into `WNOHANG`).
///
/// Race-free only while `pid` cannot have been reused, that is while nothing has reaped the
/// child: see ADR-0012 for why that holds right after `spawn`.
pub(crate) fn open(pid: u32) -> io::Result<OwnedFd> {
    let pid = libc::pid_t::try_from(pid)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "pid out of range"))?;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the descriptor is new and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Why a child can be gone before its pidfd is opened.
pub(crate) const REAPED_ELSEWHERE: &str = "children are reaped by someone else: SIGCHLD is \
     ignored (SIG_IGN or SA_NOCLDWAIT, maybe inherited from the parent process) or another \
     thread reaps with waitpid(-1); ringsteal must reap its own children";

/// The error of a spawn whose child was reaped before it could be tracked: it ran (and
/// exited), but its status is lost.
pub(crate) fn reaped_elsewhere() -> io::Error {
    io::Error::other(format!(
        "the child ran and exited, and was reaped before ringsteal could track it: {REAPED_ELSEWHERE}"
    ))
}

/// True if the kernel reaps this process's children itself as they exit (`SIGCHLD`
/// ignored, or `SA_NOCLDWAIT`): a child's pid may then be reused at any moment.
pub(crate) fn children_reaped_by_kernel() -> bool {
    // SAFETY: all-zero is a valid `sigaction`; with a null new action, sigaction only
    // writes the current one into `old`.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::sigaction(libc::SIGCHLD, std::ptr::null(), &mut old) } != 0 {
        return false;
    }
    old.sa_sigaction == libc::SIG_IGN || old.sa_flags & libc::SA_NOCLDWAIT != 0
}

/// Sends `signal` to the process `pidfd` names. Unlike `kill(pid)`, this can never reach
/// another process that reused the pid after the child was reaped: the kernel answers
/// `ESRCH` instead.
pub(crate) fn send_signal(pidfd: &SharedFd, signal: i32) -> io::Result<()> {
    // SAFETY: the pidfd is open (we hold it); a null siginfo makes the kernel fill in a
    // kill()-like one.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            signal,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
