//! A shard sleeps while its ring's `IORING_SQ_TASKRUN` flag is set with no work behind it.
//!
//! The kernel can leave the flag set after the work it announced has run, until deferred
//! work next runs. A shard that took the flag for pending completions entered the kernel
//! for nothing hundreds of thousands of times a second, for seconds, instead of sleeping (a
//! job runner under load saw 2.8 million enters in one run).

use std::time::{Duration, Instant};

use crate::shard::context;
use crate::{spawn_with, Placement, Runtime};

#[test]
fn an_idle_shard_sleeps_though_its_taskrun_flag_stays_set() {
    let rt = Runtime::builder().shards(2).build().unwrap();
    let shared = rt.shared();
    let shard_1 = &shared.shards[1];
    rt.block_on(async {
        spawn_with(Placement::Pinned(1), async {
            context::with_shard(|s| {
                s.unwrap()
                    .driver
                    .borrow()
                    .ring()
                    .mark_taskrun_without_work()
            });
        })
        .await
        .unwrap();
        // Shard 1 has nothing left to do: wait until it says it is going to sleep.
        let deadline = Instant::now() + Duration::from_secs(20);
        while !shard_1.sleeping.is_set() {
            assert!(Instant::now() < deadline, "shard 1 never went idle");
            crate::yield_now().await;
        }
        // While shard 0 completes 20,000 requests (tens of milliseconds at least), a shard
        // asleep in the kernel enters it no more; a shard that trusts the flag enters it
        // hundreds of thousands of times a second.
        let before = shard_1.counters.enters.get();
        for _ in 0..20_000 {
            crate::op::nop().await.unwrap();
        }
        let enters = shard_1.counters.enters.get() - before;
        assert!(
            enters < 20,
            "idle shard 1 entered the kernel {enters} times"
        );
    });
}
