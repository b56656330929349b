//! A `Child` whose wait was started on one shard or runtime and is awaited somewhere else: the
//! wait goes on where it is awaited, as with tokio's handles. Shard 0 runs only inside
//! `block_on` (ADR-0002), and a runtime's shutdown cancels what is in flight on its rings, so
//! a wait left on the ring it was first polled on would hang, or fail with `ECANCELED`.

mod common;

use std::pin::pin;
use std::sync::mpsc;
use std::time::Duration;

use common::{poll_once, with_every_runtime};
use ringsteal_rt::Placement;

/// How long the moved wait may take once the child has exited (a hang guard).
const WAIT_LIMIT: Duration = Duration::from_secs(30);

/// A `cat` whose stdin the caller holds, with a wait started (and left in flight) on the
/// current shard.
async fn cat_with_a_kept_wait() -> (ringsteal_process::Child, ringsteal_process::ChildStdin) {
    let (mut child, stdin, _) = common::cat_held_open(false);
    {
        let wait = pin!(child.wait());
        assert!(poll_once(wait).await.is_pending(), "cat ended on its own");
    }
    (child, stdin)
}

#[test]
fn a_wait_started_in_block_on_completes_on_another_shard_while_shard_0_is_idle() {
    with_every_runtime("wait moved off shard 0", 2, |config, rt| {
        let handle = rt.handle();
        let (mut child, stdin) = rt.block_on(cat_with_a_kept_wait());
        // No thread is inside `block_on` now: shard 0 does not run. The wait is awaited on
        // shard 1.
        let (tx, rx) = mpsc::channel();
        handle.spawn_with(Placement::Pinned(1), async move {
            let _ = tx.send(child.wait().await.map(|status| (status, child.id())));
        });
        drop(stdin); // cat exits
        let (status, id) = rx
            .recv_timeout(WAIT_LIMIT)
            .unwrap_or_else(|e| panic!("{config:?}: the moved wait never completed: {e}"))
            .unwrap_or_else(|e| panic!("{config:?}: the moved wait failed: {e}"));
        assert!(status.success(), "{config:?}: {status:?}");
        assert_eq!(id, None, "{config:?}: reaped");
    });
}

#[test]
fn a_wait_started_on_a_runtime_that_was_dropped_completes_on_the_next() {
    with_every_runtime("wait moved to a new runtime", 1, |config, rt| {
        let (mut child, stdin) = rt.block_on(cat_with_a_kept_wait());
        let pid = child.id().unwrap();
        // Its shutdown cancels the wait in flight on its ring.
        drop(rt);
        drop(stdin); // cat exits
        let next = config.runtime(1);
        let status = next
            .block_on(child.wait())
            .unwrap_or_else(|e| panic!("{config:?}: the wait failed on the next runtime: {e}"));
        assert!(status.success(), "{config:?}: {status:?}");
        assert_eq!(child.id(), None);
        assert_eq!(common::child_state(pid), common::ChildState::Gone);
    });
}

#[test]
fn try_wait_after_a_wait_cancelled_by_its_runtime_reports_the_exit() {
    with_every_runtime("try_wait after a cancelled wait", 1, |config, rt| {
        let (mut child, stdin) = rt.block_on(cat_with_a_kept_wait());
        let pid = child.id().unwrap();
        // Its shutdown cancels the wait in flight on its ring.
        drop(rt);
        drop(stdin); // cat exits
        exited_not_reaped(pid);
        let status = child
            .try_wait()
            .unwrap_or_else(|e| panic!("{config:?}: try_wait failed: {e}"))
            .unwrap_or_else(|| panic!("{config:?}: the child has exited"));
        assert!(status.success(), "{config:?}: {status:?}");
        assert_eq!(common::child_state(pid), common::ChildState::Gone);
    });
}

/// Blocks until child `pid` has exited, leaving it to be reaped (`waitid` with `WNOWAIT`).
fn exited_not_reaped(pid: u32) {
    // SAFETY: an all-zero siginfo_t is valid; waitid writes it.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: plain system call on our own child, writing into `info`.
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT,
        )
    };
    assert_eq!(r, 0, "waitid: {}", std::io::Error::last_os_error());
}
