//! An SQPOLL runtime's poller threads stop using CPU once their idle time has passed: an idle
//! SQPOLL runtime costs no more CPU than any other. One test in its own binary, because
//! `getrusage(RUSAGE_SELF)` measures the whole process, the pollers included.

mod common;

use std::time::{Duration, Instant};

use common::{cpu_time, hang_guard, idle_cpu_limit, HANG_LIMIT};
use ringsteal_rt::{spawn_with, Placement, RingMode, Runtime};

/// CPU used over `window` of doing nothing, `settle` after both shards submitted something
/// on SQPOLL rings whose pollers sleep after `idle`.
fn cpu_after_io(idle: Duration, settle: Duration, window: Duration) -> Duration {
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
    let (cpu, wall) = (cpu_time(), Instant::now());
    rt.block_on(ringsteal_rt::time::sleep(window));
    assert!(wall.elapsed() >= window);
    cpu_time() - cpu
}

#[test]
fn sqpoll_threads_stop_using_cpu_after_their_idle_time() {
    let (polling, idle) = hang_guard("sqpoll idle cpu", HANG_LIMIT, || {
        // The measure sees the pollers: for 300 ms after the last submission they still poll.
        let ms = Duration::from_millis;
        let polling = cpu_after_io(ms(1000), Duration::ZERO, ms(300));
        // Pollers that sleep after 5 ms: a second later, nothing runs.
        let idle = cpu_after_io(ms(5), ms(50), Duration::from_secs(1));
        (polling, idle)
    });
    println!("pollers busy for 300 ms: {polling:?} of CPU; an idle second: {idle:?}");
    assert!(
        polling >= Duration::from_millis(30),
        "the CPU measure does not see the SQPOLL threads ({polling:?}), so the idle check would prove nothing"
    );
    assert!(
        idle < idle_cpu_limit(),
        "an idle second cost {idle:?} of CPU"
    );
}
