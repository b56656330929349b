//! Shutdown on kernels without `IORING_ASYNC_CANCEL_ANY` (5.15–5.18): the cancel-all a shard
//! drains with fails there with `EINVAL`, so the always-armed eventfd read (ADR-0006) must be
//! cancelled by its own `user_data`, or every shutdown waits its whole timeout. The hidden
//! builder switch `shutdown_cancel_any(false)` takes that path on any kernel.

mod op_support;

use std::time::{Duration, Instant};

use ringsteal_rt::op::{self, SharedFd};
use ringsteal_rt::{Placement, Runtime, WakeMechanism};

use op_support::*;

/// The runtime's shutdown timeout in these tests; dropping must take well under it.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);
const PROMPT: Duration = Duration::from_secs(10);

fn build(shards: usize, wake: WakeMechanism) -> Runtime {
    Runtime::builder()
        .shards(shards)
        .wake(wake)
        .shutdown_timeout(SHUTDOWN_TIMEOUT)
        .shutdown_cancel_any(false)
        .build()
        .expect("build a runtime")
}

#[test]
fn an_idle_runtime_shuts_down_promptly_without_cancel_any() {
    for wake in [WakeMechanism::Auto, WakeMechanism::EventFd] {
        for shards in [1, 2] {
            watchdog(&format!("{wake:?} x{shards}"), move || {
                let rt = build(shards, wake);
                rt.block_on(async {
                    for shard in 0..shards {
                        ringsteal_rt::spawn_with(Placement::Pinned(shard), async {})
                            .await
                            .unwrap();
                    }
                });
                let started = Instant::now();
                drop(rt);
                let took = started.elapsed();
                assert!(took < PROMPT, "{wake:?} x{shards}: shutdown took {took:?}");
            });
        }
    }
}

#[test]
fn reads_in_flight_are_cancelled_and_freed_promptly_without_cancel_any() {
    for shards in [1, 2] {
        watchdog(&format!("x{shards}"), move || {
            let rt = build(shards, WakeMechanism::EventFd);
            let handle = rt.handle();
            let probe = Probe::new(handle.clone());
            let (rx, _tx) = pipe();
            let rx = SharedFd::new(rx);
            rt.block_on(async {
                for shard in 0..shards {
                    let (buf, rx) = (probe.buf(shard, 16), rx.clone());
                    ringsteal_rt::spawn_with(Placement::Pinned(shard), async move {
                        let (res, _buf) = op::read_at(&rx, buf, u64::MAX).await;
                        panic!("a read of an idle pipe completed: {res:?}");
                    });
                }
                // Until every shard has submitted its read (the watchdog bounds this).
                while !handle.stats().shards.iter().all(|s| s.ops_in_flight >= 1) {
                    ringsteal_rt::yield_now().await;
                }
            });
            let started = Instant::now();
            drop(rt);
            let took = started.elapsed();
            assert!(took < PROMPT, "x{shards}: shutdown took {took:?}");
            assert_eq!(probe.drops(), shards, "each buffer freed once");
        });
    }
}
