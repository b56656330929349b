//! A MSG_RING doorbell the kernel refuses falls back to the target's eventfd (ADR-0006).

use std::os::fd::AsRawFd;
use std::time::Duration;

use crate::shard::context;
use crate::{spawn_with, Placement, Runtime, WakeMechanism};

/// A 2-shard runtime whose shard 1 refuses every MSG_RING doorbell: its ring fd, as other
/// shards see it, is made a file that is not a ring (an `-EBADFD` completion on the
/// sender's ring). Runs `body` with it, then puts the real ring fd back before the runtime
/// is dropped. `None` (and a note) on a kernel without MSG_RING, where every doorbell is an
/// eventfd write anyway.
fn with_msg_ring_refused_by_shard_1<R>(body: impl FnOnce(&Runtime) -> R) -> Option<R> {
    if !ringsteal_uring::Features::get().is_ok_and(|f| f.msg_ring()) {
        eprintln!("SKIPPED: no MSG_RING");
        return None;
    }
    let rt = Runtime::builder()
        .shards(2)
        .wake(WakeMechanism::Auto)
        .build()
        .unwrap();
    let not_a_ring = std::fs::File::open("/dev/null").unwrap();
    let shared = rt.shared();
    let remote = &shared.shards[1];
    let (ring_fd, eventfd) = (remote.ring_fd(), remote.eventfd());
    remote.publish_fds(not_a_ring.as_raw_fd(), Some(eventfd));
    let out = body(&rt);
    remote.publish_fds(ring_fd, Some(eventfd));
    Some(out)
}

/// Every MSG_RING doorbell to shard 1 fails. Each round needs shard 1 woken from its park;
/// without the fallback the first such round hangs.
#[test]
fn a_refused_msg_ring_doorbell_falls_back_to_the_eventfd() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        tx.send(with_msg_ring_refused_by_shard_1(|rt| {
            let shared = rt.shared();
            let remote = &shared.shards[1];
            let before = remote.counters.eventfd_doorbells.get();
            rt.block_on(async {
                for i in 0..50u32 {
                    // Shard 1 asleep first, so the spawn needs a doorbell (on a loaded machine it
                    // may not have parked yet when the last round's task is done).
                    let deadline = std::time::Instant::now() + Duration::from_secs(20);
                    while !shared.shards[1].sleeping.is_set() {
                        assert!(std::time::Instant::now() < deadline, "shard 1 never slept");
                        crate::yield_now().await;
                    }
                    let got = spawn_with(Placement::Pinned(1), async move { i });
                    assert_eq!(got.await.unwrap(), i);
                }
            });
            remote.counters.eventfd_doorbells.get() - before
        }))
        .unwrap();
    });
    let fallbacks = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("HUNG: a refused MSG_RING doorbell was lost (shard 1 never woke)");
    if let Some(fallbacks) = fallbacks {
        assert!(fallbacks > 0, "no doorbell took the eventfd path");
    }
}

/// A doorbell deferred (the driver was borrowed) by the `block_on` future's last poll is rung
/// when `block_on` returns, not at the next `block_on`: the woken task on shard 1 runs while
/// this thread waits outside the runtime.
#[test]
fn a_doorbell_deferred_as_block_on_returns_is_rung() {
    use std::future::poll_fn;
    use std::sync::{mpsc, Arc, Mutex};
    use std::task::{Poll, Waker};

    if !ringsteal_uring::Features::get().is_ok_and(|f| f.msg_ring()) {
        eprintln!("SKIPPED: no MSG_RING");
        return;
    }
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let rt = Runtime::builder()
            .shards(2)
            .wake(WakeMechanism::Auto)
            .build()
            .unwrap();
        let mut deferred_rounds = 0;
        for _ in 0..20 {
            let slot: Arc<Mutex<Option<Waker>>> = Arc::default();
            let (ran_tx, ran_rx) = mpsc::channel();
            let s = slot.clone();
            rt.block_on(async move {
                let mut first = true;
                drop(spawn_with(
                    Placement::Pinned(1),
                    poll_fn(move |cx| {
                        if std::mem::take(&mut first) {
                            *s.lock().unwrap() = Some(cx.waker().clone());
                            return Poll::Pending;
                        }
                        ran_tx.send(()).unwrap();
                        Poll::Ready(())
                    }),
                ));
            });
            // The task has parked and shard 1 is out of work (about to sleep, or asleep).
            while slot.lock().unwrap().is_none() {
                std::hint::spin_loop();
            }
            let waker = slot.lock().unwrap().take().unwrap();
            let deferred = rt.block_on(async move {
                context::with_shard(|s| {
                    let s = s.expect("block_on runs shard 0");
                    // Asleep (or about to block): a wake now must ring its doorbell.
                    while !s.shared.shards[1].sleeping.is_set() {
                        std::hint::spin_loop();
                    }
                    let _busy = s.driver.borrow_mut();
                    waker.wake();
                    !s.pending_doorbells.borrow().is_empty()
                })
            });
            deferred_rounds += usize::from(deferred);
            // Outside block_on: only the deferred doorbell, if rung, wakes shard 1.
            if ran_rx.recv_timeout(Duration::from_secs(20)).is_err() {
                tx.send(Err(())).unwrap();
                return;
            }
        }
        tx.send(Ok(deferred_rounds)).unwrap();
    });
    let deferred = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the test thread finished")
        .expect("HUNG: a doorbell deferred as block_on returned was never rung");
    assert!(deferred > 0, "no round deferred a doorbell");
}

/// A doorbell rung by the `block_on` future's last poll that the kernel refuses (here
/// `-EBADFD`: shard 1's ring descriptor, as senders see it, is not a ring) still wakes its
/// target: leaving `block_on` reaps the refusal and falls back to the eventfd, instead of
/// leaving it in shard 0's ring until the next `block_on` while shard 1 sleeps with work.
#[test]
fn a_doorbell_refused_as_block_on_returns_falls_back_to_the_eventfd() {
    use std::sync::mpsc;

    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        tx.send(with_msg_ring_refused_by_shard_1(|rt| {
            let shared = rt.shared();
            let remote = &shared.shards[1];
            let mut result = Ok(());
            for round in 0..20 {
                // Shard 1 asleep first, so the spawn needs a doorbell.
                let deadline = std::time::Instant::now() + Duration::from_secs(20);
                while !remote.sleeping.is_set() {
                    assert!(std::time::Instant::now() < deadline, "shard 1 never slept");
                    std::thread::yield_now();
                }
                let (ran_tx, ran_rx) = mpsc::channel();
                // The spawn is the future's last act: block_on returns right after it.
                rt.block_on(async move {
                    drop(spawn_with(Placement::Pinned(1), async move {
                        ran_tx.send(()).unwrap()
                    }));
                });
                // Outside block_on: only the fallback, if taken, wakes shard 1.
                if ran_rx.recv_timeout(Duration::from_secs(10)).is_err() {
                    result = Err(round);
                    break;
                }
            }
            result
        }))
        .unwrap();
    });
    let result = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the test thread finished");
    if let Some(Err(round)) = result {
        panic!("round {round}: a doorbell refused as block_on returned never woke shard 1");
    }
}
