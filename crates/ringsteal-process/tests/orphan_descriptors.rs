//! Dropped children that keep running do not keep a descriptor each: a program that starts
//! many long-running children and drops them (as tokio allows) must not run out of
//! descriptors. The first `ORPHANS_WATCHED_MAX` keep their pidfds (watched, no CPU); the rest
//! are swept by pid, and are reaped too. A test binary of its own: it counts the process's
//! descriptors and the reaper's orphans, which other tests' children would change.

mod common;

use std::time::Duration;

use common::{child_state, spawn_dropped_sleep, wait_until_reaped, ChildState, Config};
use ringsteal_process::ORPHANS_WATCHED_MAX;

fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn kill(pids: &[u32]) {
    for &pid in pids {
        // SAFETY: signals our own child, not yet reaped (the test checks it is alive first).
        assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) }, 0);
    }
}

#[test]
fn many_dropped_running_children_hold_a_bounded_number_of_descriptors_and_are_all_reaped() {
    const CHILDREN: usize = 3 * ORPHANS_WATCHED_MAX;
    let rt = Config::ALL[0].runtime(1);
    let before = open_descriptors();
    let pids: Vec<u32> =
        rt.block_on(async { (0..CHILDREN).map(|_| spawn_dropped_sleep("600")).collect() });
    assert!(pids.iter().all(|&p| child_state(p) == ChildState::Alive));
    assert!(pids
        .iter()
        .all(|&p| ringsteal_process::orphan_reaper_waits_for(p)));
    assert_eq!(ringsteal_process::orphans_watched(), ORPHANS_WATCHED_MAX);
    let held = open_descriptors().saturating_sub(before);
    // The watched pidfds, the reaper's epoll set and doorbell, and a little slack for what
    // the runtime itself opened meanwhile.
    assert!(
        held <= ORPHANS_WATCHED_MAX + 2 + 4,
        "{CHILDREN} dropped children hold {held} descriptors"
    );

    // The swept ones first, while every watched one still runs: only the sweep can reap them.
    let (watched, swept) = pids.split_at(ORPHANS_WATCHED_MAX);
    kill(swept);
    let left = wait_until_reaped(swept, Duration::from_secs(30));
    assert!(left.is_empty(), "swept orphans not reaped: {left:?}");
    assert!(watched.iter().all(|&p| child_state(p) == ChildState::Alive));
    kill(watched);
    let left = wait_until_reaped(watched, Duration::from_secs(30));
    assert!(left.is_empty(), "watched orphans not reaped: {left:?}");
    drop(rt);
}
