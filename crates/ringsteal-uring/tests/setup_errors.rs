//! When io_uring cannot be used, creating a ring returns an error that names the cause and the
//! fix, never a panic. EPERM is produced for real: a forked child installs a seccomp filter
//! that answers `io_uring_setup` with EPERM, as container runtimes do, and then tries.

mod common;
#[path = "common/seccomp_filter.rs"]
mod seccomp_filter;

use std::io;
use std::sync::mpsc;
use std::thread;

use ringsteal_uring::{Ring, RingBuilder, SetupError, Unavailable};

/// The seccomp test needs the audit architecture value of the filter; it is defined for the
/// architectures ringsteal is tested on.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
))]
mod seccomp {
    use super::*;

    /// Exit codes of the child, each naming what went wrong.
    const OK: i32 = 0;
    const NO_NEW_PRIVS_FAILED: i32 = 20;
    const SECCOMP_FAILED: i32 = 21;
    const RING_CREATED: i32 = 30;
    const WRONG_CAUSE: i32 = 31;
    const WRONG_ERRNO: i32 = 32;
    const TEXT_LACKS_SECCOMP: i32 = 33;
    const TEXT_LACKS_FIX: i32 = 34;
    const WRONG_IO_KIND: i32 = 35;

    /// Runs in the forked child: no printing, no locks; only the calls under test.
    fn child() -> i32 {
        match seccomp_filter::refuse(libc::SYS_io_uring_setup, libc::EPERM) {
            Ok(()) => {}
            Err(seccomp_filter::NotInstalled::NoNewPrivs) => return NO_NEW_PRIVS_FAILED,
            Err(seccomp_filter::NotInstalled::Seccomp) => return SECCOMP_FAILED,
        }
        let err = match Ring::new(4) {
            Ok(_) => return RING_CREATED,
            Err(err) => err,
        };
        if !matches!(err.cause(), Unavailable::Refused { .. }) {
            return WRONG_CAUSE;
        }
        if err.errno() != libc::EPERM {
            return WRONG_ERRNO;
        }
        let text = err.to_string();
        if !text.contains("seccomp") {
            return TEXT_LACKS_SECCOMP;
        }
        if !(text.contains("Fix:") && text.contains("allows io_uring_setup")) {
            return TEXT_LACKS_FIX;
        }
        if io::Error::from(err).kind() != io::ErrorKind::PermissionDenied {
            return WRONG_IO_KIND;
        }
        OK
    }

    #[test]
    fn a_seccomp_filter_refusing_io_uring_setup_is_reported_as_refused_naming_seccomp_and_the_fix()
    {
        // SAFETY: fork() in a test process; the child runs only `child`, which makes the calls
        // under test and leaves through _exit without unwinding or running atexit handlers.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork: {}", io::Error::last_os_error());
        if pid == 0 {
            let code = std::panic::catch_unwind(child).unwrap_or(99);
            // SAFETY: terminating the forked child immediately is always sound.
            unsafe { libc::_exit(code) };
        }

        // Wait for the child on a helper thread, so a hung child fails the test instead of
        // hanging it.
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut status = 0;
            // SAFETY: waits for our own child; `status` is a valid out-pointer.
            let ret = unsafe { libc::waitpid(pid, &mut status, 0) };
            let _ = tx.send((ret, status));
        });
        let (ret, status) = rx.recv_timeout(common::HANG_GUARD).unwrap_or_else(|_| {
            // SAFETY: killing our own child, which has not been reaped yet.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("the forked child hung");
        });
        assert_eq!(ret, pid, "waitpid: {}", io::Error::last_os_error());
        assert!(
            libc::WIFEXITED(status),
            "the child died: status {status:#x}"
        );
        let code = libc::WEXITSTATUS(status);
        let why = match code {
            OK => return,
            NO_NEW_PRIVS_FAILED => "prctl(PR_SET_NO_NEW_PRIVS) failed",
            SECCOMP_FAILED => "seccomp(SECCOMP_SET_MODE_FILTER) failed",
            RING_CREATED => "the ring was created despite the filter",
            WRONG_CAUSE => "the error's cause is not Unavailable::Refused",
            WRONG_ERRNO => "the error's errno is not EPERM",
            TEXT_LACKS_SECCOMP => "the error text does not name seccomp",
            TEXT_LACKS_FIX => "the error text does not give the fix",
            WRONG_IO_KIND => "the io::Error kind is not PermissionDenied",
            _ => "the child panicked or exited unexpectedly",
        };
        panic!("{why} (child exit code {code})");
    }
}

#[test]
fn enosys_is_reported_as_not_implemented_naming_the_kernel_requirement() {
    let err = SetupError::from_errno(libc::ENOSYS, 0, 64);
    assert_eq!(err.cause(), &Unavailable::NotImplemented);
    let text = err.to_string();
    for needle in ["ENOSYS", "CONFIG_IO_URING", "5.15"] {
        assert!(text.contains(needle), "{needle:?} missing from: {text}");
    }
    assert_eq!(io::Error::from(err).kind(), io::ErrorKind::Unsupported);
}

#[test]
fn enomem_is_reported_as_out_of_memory_naming_the_memlock_limit_and_how_to_raise_it() {
    let err = SetupError::from_errno(libc::ENOMEM, 0, 4096);
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the valid, owned `lim`.
    let ret = unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) };
    assert_eq!(ret, 0);
    let expected = (lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur);
    assert_eq!(err.cause(), &Unavailable::OutOfMemory { memlock: expected });
    let text = err.to_string();
    for needle in [
        "ENOMEM",
        "4096 entries",
        "RLIMIT_MEMLOCK",
        "ulimit -l",
        "LimitMEMLOCK",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from: {text}");
    }
    if let Some(bytes) = expected {
        let kib = format!("{} KiB", bytes / 1024);
        assert!(
            text.contains(&kib),
            "the limit ({kib}) is missing from: {text}"
        );
    }
    assert_eq!(io::Error::from(err).kind(), io::ErrorKind::OutOfMemory);
}

#[test]
fn entry_counts_the_kernel_rejects_are_an_error_not_a_panic() {
    let err = Ring::new(0).expect_err("a ring of zero entries");
    assert!(err.is_invalid_arguments(), "{err}");
    let err = RingBuilder::new(1 << 30)
        .build()
        .expect_err("far beyond the kernel maximum without CLAMP");
    assert!(err.is_invalid_arguments(), "{err}");
    assert!(err.to_string().contains("EINVAL"), "{err}");
}

#[test]
fn setup_flags_this_binding_cannot_drive_are_refused_with_an_error_naming_them() {
    use ringsteal_uring::abi::{
        IORING_SETUP_CQE32, IORING_SETUP_NO_MMAP, IORING_SETUP_REGISTERED_FD_ONLY,
        IORING_SETUP_SQE128,
    };
    for (flag, name) in [
        (IORING_SETUP_SQE128, "SQE128"),
        (IORING_SETUP_CQE32, "CQE32"),
        (IORING_SETUP_NO_MMAP, "NO_MMAP"),
        (IORING_SETUP_REGISTERED_FD_ONLY, "REGISTERED_FD_ONLY"),
        (1 << 31, "0x80000000"),
    ] {
        let err = match RingBuilder::new(8).clamp().flags(flag).build() {
            Ok(_) => panic!("a ring set up with {name} was built"),
            Err(err) => err,
        };
        assert_eq!(
            err.cause(),
            &Unavailable::UnsupportedFlags { flags: flag },
            "{name}"
        );
        assert!(!err.is_invalid_arguments(), "not a kernel refusal: {name}");
        let text = err.to_string();
        assert!(text.contains(name), "{name} missing from: {text}");
        assert_eq!(io::Error::from(err).kind(), io::ErrorKind::InvalidInput);
    }
    // What it supports still builds.
    RingBuilder::new(8).clamp().build().unwrap();
}
