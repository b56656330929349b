//! A swept orphan that is already a zombie when the program starts ignoring `SIGCHLD` is
//! still reaped: the kernel reaps only the children that exit after that, so the sweep reaps
//! the zombies it has once before it lets its pids go (it let them go unreaped: the change's
//! review). A test binary of its own: it ignores `SIGCHLD` for the whole process.

mod common;

use std::time::Duration;

use common::{child_state, spawn_dropped_sleep, wait_until_reaped, ChildState, Config};
use ringsteal_process::ORPHANS_WATCHED_MAX;

#[test]
fn a_swept_zombie_is_reaped_when_sigchld_becomes_ignored() {
    let rt = Config::ALL[0].runtime(1);
    let sleepers: Vec<u32> = rt.block_on(async {
        (0..ORPHANS_WATCHED_MAX)
            .map(|_| spawn_dropped_sleep("600"))
            .collect()
    });
    let swept = rt.block_on(async { spawn_dropped_sleep("2.5") });
    assert!(ringsteal_process::orphan_reaper_waits_for(swept));
    // It exits 2.5 s in; the sweep, backed off to a second by then, leaves it a zombie for a while.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child_state(swept) == ChildState::Alive {
        assert!(
            std::time::Instant::now() < deadline,
            "the child never exited"
        );
        std::thread::sleep(Duration::from_millis(1)); // polling /proc, not a wait on the reaper
    }
    // SAFETY: sets SIGCHLD's disposition for this process, which runs only this test.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) };
    let left = wait_until_reaped(&[swept], Duration::from_secs(30));
    assert!(left.is_empty(), "the zombie was let go unreaped: {left:?}");
    for &pid in &sleepers {
        // SAFETY: signals our own child, not yet reaped.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    }
    // With SIGCHLD ignored, the kernel reaps them as they die (the watched ones' pidfds see
    // them gone).
    let left = wait_until_reaped(&sleepers, Duration::from_secs(30));
    assert!(left.is_empty(), "{left:?}");
    drop(rt);
    // Back to the default, for whatever runs at exit (ASan's leak check waits for a child).
    // SAFETY: as above.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
}
