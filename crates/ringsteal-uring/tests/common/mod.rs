//! Helpers shared by the behaviour tests: bounded waits (hang guards, never synchronisation),
//! scratch files, and a full descriptor table (for tests in a process of their own).

#![allow(dead_code)]

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use ringsteal_uring::{io_uring_cqe, Ring, Wait};

/// How long any single test may wait for the kernel before it is declared hung. Generous: the
/// machine may be loaded; a passing test never waits this long.
pub(crate) const HANG_GUARD: Duration = Duration::from_secs(20);

/// Submits what is queued, then collects CQEs until `n` have arrived. Panics if they do not
/// arrive within [`HANG_GUARD`].
pub(crate) fn wait_cqes(ring: &mut Ring, n: usize) -> Vec<io_uring_cqe> {
    let deadline = Instant::now() + HANG_GUARD;
    let mut out = Vec::with_capacity(n);
    loop {
        while out.len() < n {
            match ring.pop_cqe() {
                Some(cqe) => out.push(cqe),
                None => break,
            }
        }
        if out.len() >= n {
            return out;
        }
        let left = deadline
            .checked_duration_since(Instant::now())
            .unwrap_or_else(|| {
                panic!(
                    "hung: {} of {n} completions after {HANG_GUARD:?}",
                    out.len()
                )
            });
        let want = (n - out.len()) as u32;
        match ring.submit_and_wait_timeout(want, Some(left)) {
            Ok(Wait::Completed | Wait::Interrupted | Wait::TimedOut) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("io_uring_enter failed: {e}"),
        }
    }
}

/// Waits for exactly one CQE and returns it.
pub(crate) fn wait_one(ring: &mut Ring) -> io_uring_cqe {
    wait_cqes(ring, 1)[0]
}

/// A fresh path in the test scratch directory (not created).
pub(crate) fn scratch_path(name: &str) -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("ringsteal-uring-{name}-{}-{n}", std::process::id()))
}

/// `len` bytes that differ at every position and repeat only every 251 bytes, so a dropped,
/// duplicated or reordered chunk shows.
pub(crate) fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

/// Sets `RLIMIT_NOFILE` (process-wide: only for a test alone in its process).
pub(crate) fn set_nofile(cur: libc::rlim_t, max: libc::rlim_t) {
    let lim = libc::rlimit {
        rlim_cur: cur,
        rlim_max: max,
    };
    // SAFETY: setrlimit reads the valid `lim`.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) }, 0);
}

/// Lowers the open-file limit and opens descriptors until none is left; returns them and the
/// limit to restore (with [`set_nofile`]).
pub(crate) fn fill_fd_table() -> (Vec<std::os::fd::OwnedFd>, libc::rlimit) {
    use std::os::fd::FromRawFd;
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the valid `old`.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut old) }, 0);
    set_nofile(256, old.rlim_max);
    let mut filler = Vec::new();
    loop {
        // SAFETY: a NUL-terminated path; the result is checked.
        let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            break;
        }
        // SAFETY: a fresh descriptor, owned from here on.
        filler.push(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) });
    }
    (filler, old)
}
