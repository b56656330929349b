//! Idle CPU: an idle runtime blocks every shard in the kernel, waking only for its timers,
//! and uses no measurable CPU, with `IdleStrategy::Park` and with `SpinThenPark`. One test in
//! its own binary, because `getrusage(RUSAGE_SELF)` measures the whole process.

mod common;

use std::time::{Duration, Instant};

use common::*;
use ringsteal_rt::{spawn_with, IdleStrategy, Placement};

/// What the process used while a 2-shard runtime sleeps for one second in `block_on` and its
/// other shard has nothing to do, and the second's length.
fn idle_second(config: Config, idle: IdleStrategy) -> (ProcessUsage, Duration) {
    let rt = config.builder(2).idle(idle).build().unwrap();
    // Warm up: both shards have run something and gone back to sleep.
    rt.block_on(async {
        spawn_with(Placement::Pinned(1), async {}).await.unwrap();
        ringsteal_rt::time::sleep(Duration::from_millis(20)).await;
    });
    let (usage, wall) = (ProcessUsage::now(), Instant::now());
    rt.block_on(ringsteal_rt::time::sleep(Duration::from_secs(1)));
    (usage.elapsed(), wall.elapsed())
}

#[test]
fn an_idle_runtime_uses_no_measurable_cpu_whether_it_parks_or_spins_first() {
    let cases = [
        (Config::MsgRing, IdleStrategy::Park),
        (Config::EventFd, IdleStrategy::Park),
        (Config::CoopTaskrun, IdleStrategy::Park),
        (Config::Plain, IdleStrategy::Park),
        (
            Config::MsgRing,
            IdleStrategy::SpinThenPark(Duration::from_micros(50)),
        ),
        (
            Config::EventFd,
            IdleStrategy::SpinThenPark(Duration::from_micros(50)),
        ),
    ];
    let results = hang_guard("idle cpu", HANG_LIMIT, move || {
        cases
            .iter()
            .map(|&(config, idle)| (config, idle, idle_second(config, idle)))
            .collect::<Vec<_>>()
    });
    let limit = idle_limit();
    let mut over = Vec::new();
    for (config, idle, (used, wall)) in results {
        println!(
            "idle for {wall:?} under {config:?}, {idle:?}: {:?} of CPU (user+sys), {} sleeps",
            used.cpu, used.sleeps
        );
        assert!(wall >= Duration::from_secs(1), "the sleep returned early");
        if let Some(why) = limit.exceeded_by(used) {
            over.push(format!("{config:?}/{idle:?}: {why}"));
        }
    }
    assert!(over.is_empty(), "an idle second cost too much: {over:?}");
}
