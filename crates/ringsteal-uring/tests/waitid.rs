//! `IORING_OP_WAITID` on real children, named by a pidfd: the request waits for the child to
//! exit, reaps it and writes its status; a second wait finds no child.

mod common;

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

use common::wait_cqes;
use ringsteal_uring::abi::IORING_OP_WAITID;
use ringsteal_uring::{opcode, Features, Ring};

fn waitid_supported() -> bool {
    let ok = Features::get()
        .expect("io_uring is available")
        .opcode_supported(IORING_OP_WAITID);
    if !ok {
        eprintln!("skipped: this kernel has no IORING_OP_WAITID (Linux 6.7+)");
    }
    ok
}

fn pidfd_open(pid: u32) -> OwnedFd {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    assert!(fd >= 0, "pidfd_open: {}", std::io::Error::last_os_error());
    // SAFETY: the descriptor is new and ours alone.
    unsafe { OwnedFd::from_raw_fd(fd as i32) }
}

/// Spawns `sh -c script` and waits for it through the ring; returns (res, si_code, si_status).
fn wait_through_ring(script: &str) -> (i32, i32, i32, u32) {
    let child = Command::new("sh")
        .args(["-c", script])
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn sh");
    let pid = child.id();
    // Not reaped by anyone else: the pid still names this child.
    let pidfd = pidfd_open(pid);
    let mut ring = Ring::new(4).expect("ring");
    // SAFETY: all-zero is a valid siginfo_t.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let sqe = opcode::waitid(libc::P_PIDFD, pidfd.as_raw_fd(), &mut info, libc::WEXITED)
        .with_user_data(5);
    // SAFETY: `info` and `pidfd` outlive the request: its CQE is reaped below.
    unsafe { ring.push(&sqe) }.unwrap();
    let cqe = wait_cqes(&mut ring, 1)[0];
    assert_eq!(cqe.user_data, 5);
    // SAFETY: the kernel filled the CHLD fields of `info`.
    let (status, from) = unsafe { (info.si_status(), info.si_pid()) };
    drop(child);
    (cqe.res, info.si_code, status, from as u32 ^ pid)
}

#[test]
fn waitid_reports_the_exit_code_of_a_child_named_by_its_pidfd() {
    if !waitid_supported() {
        return;
    }
    let (res, code, status, pid_mismatch) = wait_through_ring("exit 3");
    assert_eq!(
        res,
        0,
        "waitid failed: {}",
        std::io::Error::from_raw_os_error(-res)
    );
    assert_eq!(code, libc::CLD_EXITED);
    assert_eq!(status, 3);
    assert_eq!(pid_mismatch, 0, "si_pid is the child's pid");
}

#[test]
fn waitid_reports_the_signal_that_killed_a_child() {
    if !waitid_supported() {
        return;
    }
    let (res, code, status, _) = wait_through_ring("kill -TERM $$");
    assert_eq!(res, 0);
    assert_eq!(code, libc::CLD_KILLED);
    assert_eq!(status, libc::SIGTERM);
}

#[test]
#[allow(clippy::zombie_processes)] // reaped through the ring, which is the point
fn a_second_waitid_on_a_reaped_child_fails_with_echild() {
    if !waitid_supported() {
        return;
    }
    let child = Command::new("true").spawn().expect("spawn true");
    let pidfd = pidfd_open(child.id());
    let mut ring = Ring::new(4).expect("ring");
    // SAFETY: all-zero is a valid siginfo_t.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    for (round, want) in [(1, 0), (2, -libc::ECHILD)] {
        let sqe = opcode::waitid(libc::P_PIDFD, pidfd.as_raw_fd(), &mut info, libc::WEXITED)
            .with_user_data(round);
        // SAFETY: `info` and `pidfd` outlive the request: its CQE is reaped right here.
        unsafe { ring.push(&sqe) }.unwrap();
        let cqe = wait_cqes(&mut ring, 1)[0];
        assert_eq!((cqe.user_data, cqe.res), (round, want));
    }
}
