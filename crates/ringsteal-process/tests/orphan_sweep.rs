//! Swept orphans (dropped running children beyond the ones whose pidfds the reaper keeps) are
//! reaped while more keep arriving: each arrival brings the next sweep forward, never back,
//! so a steady stream of them cannot starve the sweep (it once did: every arrival pushed
//! the sweep 10 ms on, and children arriving faster than that stayed zombies until the
//! stream stopped). A test binary of its own: it fills the reaper's watched slots, which
//! other tests' children would share.

mod common;

use std::time::{Duration, Instant};

use common::{child_state, spawn_dropped_sleep, wait_until_reaped, ChildState, Config};
use ringsteal_process::ORPHANS_WATCHED_MAX;

fn spawn_dropped(rt: &ringsteal_rt::Runtime, seconds: &str) -> u32 {
    rt.block_on(async { spawn_dropped_sleep(seconds) })
}

#[test]
fn swept_orphans_are_reaped_while_more_keep_arriving() {
    let rt = Config::ALL[0].runtime(1);
    // Long sleepers take every watched slot: what comes next is swept.
    let sleepers: Vec<u32> = (0..ORPHANS_WATCHED_MAX)
        .map(|_| spawn_dropped(&rt, "600"))
        .collect();
    assert_eq!(ringsteal_process::orphans_watched(), ORPHANS_WATCHED_MAX);

    // Short children, dropped running, one every 2 ms for 3 s; each exits 20 ms in.
    let start = Instant::now();
    let mut early = Vec::new();
    let mut zombies_seen_late: Option<Vec<u32>> = None;
    while start.elapsed() < Duration::from_secs(3) {
        let pid = spawn_dropped(&rt, "0.02");
        if start.elapsed() < Duration::from_millis(500) {
            early.push(pid);
        }
        // Two seconds in, with the stream still going, the early ones (gone for well over a
        // second) must have been reaped.
        if start.elapsed() > Duration::from_secs(2) && zombies_seen_late.is_none() {
            zombies_seen_late = Some(
                early
                    .iter()
                    .copied()
                    .filter(|&p| child_state(p) == ChildState::Zombie)
                    .collect(),
            );
        }
        std::thread::sleep(Duration::from_millis(2)); // the stream's pace, not a wait
    }
    let zombies_seen_late = zombies_seen_late.expect("checked two seconds in");
    assert!(!early.is_empty());
    assert!(
        zombies_seen_late.is_empty(),
        "{} of {} early orphans still zombies while orphans kept arriving",
        zombies_seen_late.len(),
        early.len()
    );

    for &pid in &sleepers {
        // SAFETY: signals our own child, not yet reaped.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    }
    let left = wait_until_reaped(&sleepers, Duration::from_secs(30));
    assert!(left.is_empty(), "{left:?}");
    drop(rt);
}
