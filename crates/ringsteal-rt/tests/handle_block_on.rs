//! `RuntimeHandle::block_on`: synchronous code (a blocking-pool closure, a plain thread)
//! runs a future on the runtime and waits for it, as with tokio's `Handle::block_on`; the
//! future and its output may borrow from the caller; a panic in the future comes back to the
//! caller, and a call on a shard thread is refused.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use common::with_every_runtime;
use ringsteal_rt::RuntimeHandle;

#[test]
fn blocking_code_waits_for_a_future_that_does_io_on_the_shards() {
    with_every_runtime("handle block_on", 2, |config, rt| {
        let from_pool = rt.block_on(async {
            ringsteal_rt::spawn_blocking(|| {
                RuntimeHandle::current().block_on(async {
                    for _ in 0..100 {
                        ringsteal_rt::op::nop().await.unwrap();
                    }
                    ringsteal_rt::spawn(async { 40 }).await.unwrap() + 2
                })
            })
            .await
            .unwrap()
        });
        assert_eq!(from_pool, 42, "{config:?}");
        // A plain thread with a handle, while the runtime's own thread is outside `block_on`
        // (shard 0 does not run then; the other shard takes the task).
        let handle = rt.handle();
        let from_thread = std::thread::spawn(move || {
            handle.block_on(async { ringsteal_rt::current_shard().is_some() })
        })
        .join()
        .unwrap();
        assert!(from_thread, "{config:?}: the future ran on a shard");
    });
}

#[test]
fn the_future_and_its_output_may_borrow_from_the_caller() {
    with_every_runtime("handle block_on borrowing", 2, |config, rt| {
        let handle = rt.handle();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let words = vec!["ring".to_string(), "steal".to_string()];
                let mut lengths = Vec::new();
                // The future reads `words` and pushes into `lengths`, on a shard, with I/O
                // between; the output is a reference into `words`.
                let longest: &str = handle.block_on(async {
                    for w in &words {
                        ringsteal_rt::op::nop().await.unwrap();
                        lengths.push(w.len());
                    }
                    words.iter().max_by_key(|w| w.len()).unwrap().as_str()
                });
                assert_eq!(longest, "steal", "{config:?}");
                assert_eq!(lengths, [4, 5], "{config:?}");
            });
        });
    });
}

#[test]
fn a_panic_in_the_future_is_resumed_in_the_caller() {
    common::quiet_intentional_panics();
    with_every_runtime("handle block_on panic", 1, |config, rt| {
        // From the blocking pool while the runtime's thread drives shard 0 (`block_on`).
        let caught = rt.block_on(async {
            ringsteal_rt::spawn_blocking(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    RuntimeHandle::current()
                        .block_on(async { panic!("intentional: from the future") })
                }))
                .unwrap_err()
            })
            .await
            .unwrap()
        });
        assert_eq!(
            caught.downcast_ref::<&str>(),
            Some(&"intentional: from the future"),
            "{config:?}"
        );
    });
}

#[test]
fn a_call_on_a_shard_is_refused_with_a_clear_panic() {
    common::quiet_intentional_panics();
    with_every_runtime("handle block_on on a shard", 1, |config, rt| {
        let err = rt.block_on(async {
            ringsteal_rt::spawn(async {
                RuntimeHandle::current().block_on(async { 1 });
            })
            .await
            .unwrap_err()
        });
        let message = err.into_panic();
        let message = message
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| message.downcast_ref::<&str>().copied())
            .unwrap_or_default()
            .to_owned();
        assert!(
            message.contains("on a ringsteal shard"),
            "{config:?}: {message}"
        );
    });
}

#[test]
fn a_block_on_whose_task_never_ran_lets_the_runtime_shut_down() {
    // One shard, and the runtime's thread leaves `block_on` before the blocking closure
    // spawns: the task waits in the runtime's queue for a `block_on` that never comes. The
    // drop must cancel it (the closure's `block_on` then panics as documented) rather than
    // wait for the closure for ever (an unbounded shutdown timeout).
    let panicked = common::hang_guard("drop with a block_on waiting", HANG, || {
        let rt = ringsteal_rt::Runtime::builder()
            .shards(1)
            .shutdown_timeout(std::time::Duration::MAX)
            .build()
            .unwrap();
        let handle = rt.handle();
        let (go, wait_for_go) = std::sync::mpsc::channel();
        let (done, result) = std::sync::mpsc::channel();
        rt.block_on(async move {
            drop(ringsteal_rt::spawn_blocking(move || {
                wait_for_go.recv().unwrap();
                // The future holds a borrow of this frame's flag, set when it is dropped: it
                // must be dropped (the task cancelled) before the call unwinds past the frame.
                let dropped = AtomicBool::new(false);
                let guard = SetOnDrop(&dropped);
                let waited = catch_unwind(AssertUnwindSafe(|| {
                    handle.block_on(async move {
                        let _guard = guard;
                        1
                    })
                }));
                done.send(waited.is_err() && dropped.load(Ordering::Acquire))
                    .unwrap();
            }));
        });
        let stats = rt.handle();
        go.send(()).unwrap();
        common::spin_until(|| stats.stats().spawned_external >= 1);
        drop(rt);
        result.recv().unwrap()
    });
    assert!(
        panicked,
        "the task could not have run: its block_on panics, after the runtime dropped its future"
    );
}

/// Sets its flag when dropped.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

const HANG: std::time::Duration = std::time::Duration::from_secs(60);
