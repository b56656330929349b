//! `Builder::sqpoll`: shards whose rings have a kernel poller thread do I/O, wake each other,
//! exchange messages and keep time; a shard wakes its poller after the poller went to sleep
//! (`IORING_SQ_NEED_WAKEUP`); and where the kernel refuses SQPOLL the runtime falls back and
//! says why. (This machine allows SQPOLL; a refusal at ring setup is forced by a builder
//! switch that asks the kernel for something it always refuses, and SQPOLL missing from the
//! runtime's feature set by `without_feature`.)

mod common;

use std::ffi::CString;
use std::time::Duration;

use common::{hang_guard, Rng, HANG_LIMIT};
use ringsteal_rt::op::{self, SharedFd};
use ringsteal_rt::{
    Feature, Placement, RingMode, RingRefusal, Runtime, RuntimeHandle, WakeMechanism,
};

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
                let tid = std::sync::Arc::new(std::sync::atomic::AtomicI32::new(0));
                let t = tid.clone();
                let receiver = handle.spawn_with(Placement::Pinned(1), async move {
                    // SAFETY: gettid has no preconditions.
                    t.store(
                        unsafe { libc::gettid() },
                        std::sync::atomic::Ordering::SeqCst,
                    );
                    let a = ringsteal_rt::recv_msg().await;
                    let b = ringsteal_rt::recv_msg().await;
                    (a, b)
                });
                ringsteal_rt::time::sleep(Duration::from_millis(3)).await;
                // Until shard 1 waits in the kernel (the hang guard bounds it).
                loop {
                    let tid = tid.load(std::sync::atomic::Ordering::SeqCst);
                    if tid != 0 && common::blocked_in_io_uring_enter(tid) {
                        break;
                    }
                    ringsteal_rt::time::sleep(Duration::from_millis(1)).await;
                }
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
fn more_requests_at_once_than_an_sqpoll_ring_has_slots_all_complete() {
    hang_guard("sqpoll full SQ", HANG_LIMIT, || {
        // Four SQ slots (the least a ring gets), 256 requests made in one poll: the SQ fills
        // while the poller thread has not read it yet, and each further push waits for it to
        // make room (the driver's push loop); every request must still be submitted once and
        // complete.
        let rt = Runtime::builder()
            .shards(1)
            .sqpoll(Duration::from_millis(1))
            .ring_entries(4)
            .build()
            .unwrap();
        assert_eq!(
            rt.handle().ring_setups()[0].as_ref().unwrap().mode,
            RingMode::SqPoll
        );
        rt.block_on(async {
            let mut ops: Vec<_> = (0..256).map(|_| Some(op::nop())).collect();
            let mut done = 0;
            std::future::poll_fn(|cx| {
                for slot in ops.iter_mut() {
                    if let Some(op) = slot {
                        if let std::task::Poll::Ready(res) =
                            std::future::Future::poll(std::pin::Pin::new(op), cx)
                        {
                            res.expect("a nop completes");
                            *slot = None;
                            done += 1;
                        }
                    }
                }
                if done == ops.len() {
                    std::task::Poll::Ready(())
                } else {
                    std::task::Poll::Pending
                }
            })
            .await;
        });
    });
}

/// Asserts that every shard of `rt` has the mode a runtime without SQPOLL gets, with SQPOLL
/// refused first (`errno`: the kernel's answer, or `None` for not tried); returns that mode.
fn assert_fell_back_to_the_best_mode(rt: &Runtime, errno: Option<i32>) -> RingMode {
    let best = Runtime::builder().shards(1).build().unwrap().ring_modes()[0].unwrap();
    assert_ne!(best, RingMode::SqPoll);
    for setup in rt.handle().ring_setups() {
        let setup = setup.expect("every shard's ring exists once built");
        assert_eq!(setup.mode, best, "{setup}");
        let sqpoll = RingRefusal {
            mode: RingMode::SqPoll,
            errno,
        };
        assert_eq!(setup.refused.first(), Some(&sqpoll), "{setup}");
    }
    best
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
        let best = assert_fell_back_to_the_best_mode(&rt, Some(libc::EINVAL));
        assert_eq!(rt.ring_modes(), vec![Some(best); 2]);
        for setup in rt.ring_setups() {
            let text = setup.expect("built").to_string();
            assert!(text.contains("SQPOLL refused"), "{text}");
        }
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
    let cases = [
        (
            RingMode::SqPoll,
            Some(libc::EPERM),
            ["SQPOLL refused", "CAP_SYS_ADMIN"],
        ),
        (
            RingMode::DeferTaskrun,
            Some(libc::EINVAL),
            ["DEFER_TASKRUN", "does not support"],
        ),
        (RingMode::SqPoll, None, ["SQPOLL not tried", "feature set"]),
    ];
    for (mode, errno, wanted) in cases {
        let text = RingRefusal { mode, errno }.to_string();
        for w in wanted {
            assert!(text.contains(w), "{mode:?}, {errno:?}: {text}");
        }
    }
}

#[test]
fn sqpoll_missing_from_the_feature_set_is_not_tried_and_doorbells_stay_ring_sqes() {
    hang_guard("sqpoll not in the feature set", HANG_LIMIT, || {
        let rt = Runtime::builder()
            .shards(2)
            .wake(WakeMechanism::MsgRing)
            .sqpoll(Duration::from_millis(5))
            .without_feature(Feature::Sqpoll)
            .build()
            .expect("SQPOLL missing is not a build error");
        assert!(!rt.features().supports(Feature::Sqpoll));
        assert_fell_back_to_the_best_mode(&rt, None);
        let handle = rt.handle();
        rt.block_on(async move {
            assert_eq!(file_round_trip(b"no sqpoll").await, b"no sqpoll");
            for i in 0..50u64 {
                let t = handle.spawn_with(Placement::Pinned(1), async move { i + 1 });
                assert_eq!(t.await.unwrap(), i + 1);
            }
            // No SQPOLL ring, so no reason to ring doorbells by system call: shard-to-shard
            // doorbells are MSG_RING SQEs of the sender's ring, which its submissions count.
            let stats = handle.stats();
            assert!(
                stats.shards.iter().any(|s| s.msg_ring_doorbells > 0),
                "{stats:?}"
            );
            for s in &stats.shards {
                assert!(s.sqes_submitted >= s.msg_ring_doorbells, "{s:?}");
            }
        });
    });
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
