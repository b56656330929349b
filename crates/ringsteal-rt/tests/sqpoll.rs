//! `Builder::sqpoll`: shards whose rings have a kernel poller thread do I/O, wake each other,
//! exchange messages and keep time; a shard wakes its poller after the poller went to sleep
//! (`IORING_SQ_NEED_WAKEUP`); and where the kernel refuses SQPOLL the runtime falls back and
//! says why. (This machine allows SQPOLL; the refusal is forced by a builder switch that asks
//! the kernel for something it always refuses.)

mod common;

use std::ffi::CString;
use std::time::Duration;

use common::{hang_guard, Rng, HANG_LIMIT};
use ringsteal_rt::op::{self, SharedFd};
use ringsteal_rt::{Placement, RingMode, RingRefusal, Runtime, RuntimeHandle, WakeMechanism};

fn sqpoll_runtime(shards: usize, wake: WakeMechanism, idle: Duration) -> Runtime {
    let rt = Runtime::builder()
        .shards(shards)
        .wake(wake)
        .sqpoll(idle)
        .thread_name(format!("sqpoll-{wake:?}"))
        .build()
        .unwrap();
    let setups = rt.handle().ring_setups();
    for (shard, setup) in setups.iter().enumerate() {
        let setup = setup
            .as_ref()
            .expect("every shard's ring exists once built");
        assert_eq!(
            setup.mode,
            RingMode::SqPoll,
            "shard {shard}: this machine allows SQPOLL, yet: {setup}"
        );
        assert!(setup.refused.is_empty());
    }
    rt
}

/// Writes `data` to a fresh temporary file and reads it back through the ring.
async fn file_round_trip(data: &[u8]) -> Vec<u8> {
    let path = std::env::temp_dir().join(format!(
        "ringsteal-sqpoll-{}-{}",
        std::process::id(),
        common::unique()
    ));
    let c_path = CString::new(path.to_str().unwrap()).unwrap();
    let fd = op::openat(
        None,
        c_path,
        libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC,
        0o600,
    )
    .await
    .expect("open");
    let fd = SharedFd::new(fd);
    let (n, _) = op::write_at(&fd, data.to_vec(), 0).await;
    assert_eq!(n.unwrap(), data.len());
    let (n, buf) = op::read_at(&fd, Vec::with_capacity(data.len() + 8), 0).await;
    assert_eq!(n.unwrap(), data.len());
    std::fs::remove_file(&path).unwrap();
    buf
}

#[test]
fn sqpoll_shards_do_io_wake_each_other_exchange_messages_and_keep_time() {
    for wake in [WakeMechanism::Auto, WakeMechanism::EventFd] {
        hang_guard(&format!("sqpoll [{wake:?}]"), HANG_LIMIT, move || {
            let rt = sqpoll_runtime(2, wake, Duration::from_millis(2));
            let handle = rt.handle();
            rt.block_on(async move {
                // I/O on shard 0's ring and on shard 1's.
                assert_eq!(file_round_trip(b"shard zero").await, b"shard zero");
                let on_one = handle.spawn_with(Placement::Pinned(1), async {
                    file_round_trip(b"shard one").await
                });
                assert_eq!(on_one.await.unwrap(), b"shard one");

                // Cross-shard wakes: a ping-pong between tasks pinned to the two shards.
                let mut total = 0u64;
                for i in 0..200u64 {
                    let t = handle.spawn_with(Placement::Pinned(1), async move { i * 2 });
                    total += t.await.unwrap();
                }
                assert_eq!(total, 200 * 199);

                // Messages into a sleeping shard, and timers.
                let receiver = handle.spawn_with(Placement::Pinned(1), async {
                    let a = ringsteal_rt::recv_msg().await;
                    let b = ringsteal_rt::recv_msg().await;
                    (a, b)
                });
                ringsteal_rt::time::sleep(Duration::from_millis(3)).await;
                handle.send_msg(1, 7).unwrap();
                handle.send_msg(1, u64::MAX).unwrap();
                assert_eq!(receiver.await.unwrap(), (7, u64::MAX));

                // Doorbells went by ring-less MSG_RING (6.13) or the eventfd, never by an SQE
                // the poller would send after the sender let go of the target's fd.
                let stats = handle.stats();
                let msg_ring: u64 = stats.shards.iter().map(|s| s.msg_ring_doorbells).sum();
                let eventfd: u64 = stats.shards.iter().map(|s| s.eventfd_doorbells).sum();
                let send_msg_ring = common::kernel_has_send_msg_ring();
                if wake == WakeMechanism::Auto && send_msg_ring {
                    assert!(msg_ring > 0 && eventfd == 0, "{stats:?}");
                } else {
                    assert!(msg_ring == 0 && eventfd > 0, "{stats:?}");
                }
            });
        });
    }
}

#[test]
fn a_shard_wakes_its_poller_after_the_poller_went_to_sleep() {
    hang_guard("sqpoll need-wakeup", HANG_LIMIT, || {
        // A 1 ms idle time: gaps around it leave the poller awake, falling asleep, or asleep
        // when the next request comes. A lost poller wakeup leaves a request unread and its
        // task waiting forever (the hang guard fails the test).
        let rt = sqpoll_runtime(2, WakeMechanism::Auto, Duration::from_millis(1));
        let handle = rt.handle();
        rt.block_on(async move {
            let mut rng = Rng::new(0x5eed);
            for round in 0..300u32 {
                let gap = Duration::from_micros(rng.below(2500));
                // Sometimes the shard itself sleeps through the gap (a timer), sometimes it
                // busy-waits so its poller idles while the shard is awake.
                if round % 2 == 0 {
                    ringsteal_rt::time::sleep(gap).await;
                } else {
                    let until = std::time::Instant::now() + gap;
                    while std::time::Instant::now() < until {
                        std::hint::spin_loop();
                    }
                }
                op::nop().await.expect("a nop completes");
                if round % 10 == 0 {
                    let far =
                        handle.spawn_with(Placement::Pinned(1), async { op::nop().await.is_ok() });
                    assert!(far.await.unwrap());
                }
            }
        });
    });
}

#[test]
fn a_refused_sqpoll_falls_back_to_the_best_other_mode_and_says_why() {
    hang_guard("sqpoll refused", HANG_LIMIT, || {
        let rt = Runtime::builder()
            .shards(2)
            .sqpoll(Duration::from_millis(5))
            .sqpoll_refused_for_testing(true)
            .build()
            .expect("a refused SQPOLL is not a build error");
        let best = Runtime::builder().shards(1).build().unwrap().ring_modes()[0].unwrap();
        assert_ne!(best, RingMode::SqPoll);
        for setup in rt.handle().ring_setups() {
            let setup = setup.expect("built");
            assert_eq!(setup.mode, best, "{setup}");
            assert_eq!(
                setup.refused.first(),
                Some(&RingRefusal {
                    mode: RingMode::SqPoll,
                    errno: libc::EINVAL
                })
            );
            let text = setup.to_string();
            assert!(text.contains("SQPOLL refused"), "{text}");
        }
        assert_eq!(rt.ring_modes(), vec![Some(best); 2]);
        let handle = rt.handle();
        rt.block_on(async move {
            assert_eq!(file_round_trip(b"fallback").await, b"fallback");
            let on_one = handle.spawn_with(Placement::Pinned(1), async { op::nop().await.is_ok() });
            assert!(on_one.await.unwrap());
        });
    });
}

#[test]
fn the_refusal_texts_name_the_cause() {
    let eperm = RingRefusal {
        mode: RingMode::SqPoll,
        errno: libc::EPERM,
    }
    .to_string();
    assert!(
        eperm.contains("SQPOLL refused") && eperm.contains("CAP_SYS_ADMIN"),
        "{eperm}"
    );
    let einval = RingRefusal {
        mode: RingMode::DeferTaskrun,
        errno: libc::EINVAL,
    }
    .to_string();
    assert!(
        einval.contains("DEFER_TASKRUN") && einval.contains("does not support"),
        "{einval}"
    );
}

#[test]
fn sqpoll_runs_with_the_plain_and_coop_fallbacks_disabled_too() {
    hang_guard("sqpoll without taskrun", HANG_LIMIT, || {
        let rt = Runtime::builder()
            .shards(1)
            .defer_taskrun(false)
            .coop_taskrun(false)
            .sqpoll(Duration::from_millis(1))
            .build()
            .unwrap();
        assert_eq!(rt.ring_modes(), vec![Some(RingMode::SqPoll)]);
        let handle: RuntimeHandle = rt.handle();
        let n = rt.block_on(async move {
            let tasks: Vec<_> = (0..64u64)
                .map(|i| handle.spawn(async move { op::nop().await.map(|_| i).unwrap() }))
                .collect();
            let mut sum = 0;
            for t in tasks {
                sum += t.await.unwrap();
            }
            sum
        });
        assert_eq!(n, 64 * 63 / 2);
    });
}
