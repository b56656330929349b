//! An SQPOLL runtime's poller threads stop using CPU once their idle time has passed: an idle
//! SQPOLL runtime costs no more CPU than any other. One test in its own binary, because
//! `getrusage(RUSAGE_SELF)` measures the whole process, the pollers included.

mod common;

use std::time::{Duration, Instant};

use common::{hang_guard, idle_limit, ProcessUsage, HANG_LIMIT};
use ringsteal_rt::{spawn_with, Placement, RingMode, Runtime};

/// What the process used over `window` of doing nothing, `settle` after both shards submitted
/// something on SQPOLL rings whose pollers sleep after `idle`.
fn usage_after_io(idle: Duration, settle: Duration, window: Duration) -> ProcessUsage {
    let rt = Runtime::builder().shards(2).sqpoll(idle).build().unwrap();
    assert_eq!(rt.ring_modes(), vec![Some(RingMode::SqPoll); 2]);
    rt.block_on(async {
        ringsteal_rt::op::nop().await.unwrap();
        spawn_with(Placement::Pinned(1), async {
            ringsteal_rt::op::nop().await.unwrap()
        })
        .await
        .unwrap();
        ringsteal_rt::time::sleep(settle).await;
    });
    let (usage, wall) = (ProcessUsage::now(), Instant::now());
    rt.block_on(ringsteal_rt::time::sleep(window));
    assert!(wall.elapsed() >= window);
    usage.elapsed()
}

#[test]
fn sqpoll_threads_stop_using_cpu_after_their_idle_time() {
    let (polling, idle) = hang_guard("sqpoll idle cpu", HANG_LIMIT, || {
        // The measure sees the pollers: for 300 ms after the last submission they still poll.
        let ms = Duration::from_millis;
        let polling = usage_after_io(ms(1000), Duration::ZERO, ms(300));
        // Pollers that sleep after 5 ms: a second later, nothing runs.
        let idle = usage_after_io(ms(5), ms(50), Duration::from_secs(1));
        (polling, idle)
    });
    println!("pollers busy for 300 ms: {polling:?}; an idle second: {idle:?}");
    let limit = idle_limit();
    assert!(
        polling.cpu >= limit.cpu,
        "the CPU measure does not see the SQPOLL threads poll past the idle limit \
         ({polling:?}), so the idle check would prove nothing"
    );
    if let Some(why) = limit.exceeded_by(idle) {
        panic!("an idle second cost {why}");
    }
}
