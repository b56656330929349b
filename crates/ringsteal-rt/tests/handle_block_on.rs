//! `RuntimeHandle::block_on`: synchronous code (a blocking-pool closure, a plain thread)
//! runs a future on the runtime and waits for it, as with tokio's `Handle::block_on`; a panic
//! in the future comes back to the caller, and a call on a shard thread is refused.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};

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
