//! Listeners for SIGUSR1 (this binary's signal): several on different shards all wake; a
//! delivery before the first `recv` is not lost; deliveries between two `recv`s coalesce; a
//! cancelled `recv` loses nothing, nor does a dropped listener (its next one reports what it
//! did not); listeners come and go without piling up descriptors.

mod common;

use std::time::Duration;

use common::{raise_here, send_to_self, with_each_wake};
use ringsteal_rt::Placement;
use ringsteal_signal::{signal, SignalKind};

const USR1: SignalKind = SignalKind::user_defined1();

#[test]
fn several_listeners_on_different_shards_all_wake_each_time() {
    let _serial = common::serial();
    with_each_wake("listeners on every shard", 3, |wake, rt| {
        rt.block_on(async move {
            for round in 0..3 {
                // Two listeners per shard, each waiting in its own task there.
                let mut waits = Vec::new();
                for shard in 0..3 {
                    for _ in 0..2 {
                        let mut usr1 = signal(USR1).unwrap();
                        waits.push(ringsteal_rt::spawn_with(
                            Placement::Pinned(shard),
                            async move {
                                let got = usr1.recv().await;
                                (got, ringsteal_rt::current_shard())
                            },
                        ));
                    }
                }
                // Let every task start waiting (some may see the signal before, some after:
                // both must work). `kill`: any thread of the process may take it, later.
                ringsteal_rt::time::sleep(Duration::from_millis(round * 2)).await;
                send_to_self(libc::SIGUSR1);
                let mut shards = Vec::new();
                for w in waits {
                    let (got, shard) = w.await.unwrap();
                    assert_eq!(got, Some(()), "{wake:?} round {round}");
                    shards.push(shard.unwrap());
                }
                shards.sort();
                assert_eq!(shards, [0, 0, 1, 1, 2, 2], "{wake:?}");
            }
        });
    });
}

#[test]
fn a_delivery_before_the_first_recv_is_not_lost_and_deliveries_coalesce() {
    let _serial = common::serial();
    with_each_wake("early delivery", 1, |wake, rt| {
        rt.block_on(async move {
            let mut usr1 = signal(USR1).unwrap();
            raise_here(libc::SIGUSR1);
            raise_here(libc::SIGUSR1);
            assert_eq!(usr1.recv().await, Some(()), "{wake:?}");
            // Both came before that recv: they count as one.
            let more = ringsteal_rt::time::timeout(Duration::from_millis(20), usr1.recv()).await;
            assert!(more.is_err(), "{wake:?}: a second delivery appeared");
            // A listener created after a delivery does not see it.
            let mut late = signal(USR1).unwrap();
            let nothing = ringsteal_rt::time::timeout(Duration::from_millis(5), late.recv()).await;
            assert!(nothing.is_err(), "{wake:?}");
            raise_here(libc::SIGUSR1);
            assert_eq!(usr1.recv().await, Some(()));
            assert_eq!(late.recv().await, Some(()));
        });
    });
}

#[test]
fn a_cancelled_recv_loses_no_delivery() {
    let _serial = common::serial();
    with_each_wake("cancelled recv", 2, |wake, rt| {
        rt.block_on(async move {
            let mut usr1 = signal(USR1).unwrap();
            // The read is in flight on shard 0 when the future is dropped.
            let cut = ringsteal_rt::time::timeout(Duration::from_millis(2), usr1.recv()).await;
            assert!(cut.is_err(), "{wake:?}");
            raise_here(libc::SIGUSR1);
            // Picked up on the other shard.
            let got =
                ringsteal_rt::spawn_with(Placement::Pinned(1), async move { usr1.recv().await })
                    .await
                    .unwrap();
            assert_eq!(got, Some(()), "{wake:?}");
        });
    });
}

#[test]
fn listeners_that_come_and_go_reuse_their_eventfds() {
    let _serial = common::serial();
    let rt = common::runtime(ringsteal_rt::WakeMechanism::Auto, 1);
    let open_fds = || std::fs::read_dir("/proc/self/fd").unwrap().count();
    rt.block_on(async {
        // Warm up: a few slots exist.
        let keep: Vec<_> = (0..4).map(|_| signal(USR1).unwrap()).collect();
        drop(keep);
        let before = open_fds();
        for i in 0..2000 {
            let mut usr1 = signal(USR1).unwrap();
            if i % 2 == 0 {
                // Half of them with a read in flight when dropped.
                let cut = ringsteal_rt::time::timeout(Duration::ZERO, usr1.recv()).await;
                assert!(cut.is_err());
            }
        }
        let after = open_fds();
        assert!(
            after <= before + 8,
            "2000 short-lived listeners left {} more descriptors open",
            after - before
        );
    });
}

#[test]
fn a_burst_of_listeners_gives_its_eventfds_back_once_gone() {
    // One `ctrl_c()` per connection of a busy server: hundreds of listeners at once. Once
    // they are gone, only a few eventfds stay (16 kept for the next listeners), not one per
    // listener of the peak for good (with a limit of 1024 descriptors, a burst of 1000
    // listeners left the process unable to open a file).
    let _serial = common::serial();
    with_each_wake("listener burst", 2, |wake, rt| {
        rt.block_on(async move {
            let open_fds = || std::fs::read_dir("/proc/self/fd").unwrap().count();
            let before = open_fds();
            let burst: Vec<_> = (0..400).map(|_| signal(USR1).unwrap()).collect();
            assert!(open_fds() >= before + 400 - 16, "{wake:?}");
            // Half of them with a wait in flight when dropped.
            let mut burst = burst;
            for usr1 in burst.iter_mut().step_by(2) {
                let cut = ringsteal_rt::time::timeout(Duration::ZERO, usr1.recv()).await;
                assert!(cut.is_err());
            }
            drop(burst);
            // The cancelled waits hold their eventfds until the ring has reaped their end.
            let deadline = std::time::Instant::now() + Duration::from_secs(20);
            while open_fds() > before + 16 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{wake:?}: {} more descriptors left open",
                    open_fds() - before
                );
                ringsteal_rt::yield_now().await;
            }
            // Listeners still hear the signal, on reused and on new slots alike.
            let mut many: Vec<_> = (0..40).map(|_| signal(USR1).unwrap()).collect();
            raise_here(libc::SIGUSR1);
            for usr1 in &mut many {
                assert_eq!(usr1.recv().await, Some(()), "{wake:?}");
            }
        });
    });
}

#[test]
fn closing_eventfds_while_signals_arrive_never_writes_into_a_reused_descriptor() {
    // Churn for the close protocol: another thread sends SIGUSR1 to the process without
    // pause while listeners come and go in bursts (closing eventfds each round) and pipes
    // take the freed descriptor numbers. A handler that wrote to a closed number would put
    // 8 bytes into one of those pipes. (The window is a few instructions wide, rarely hit
    // here: `slots.rs`'s unit test checks that a close waits for a handler inside.)
    let _serial = common::serial();
    let rt = common::runtime(ringsteal_rt::WakeMechanism::Auto, 1);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // A listener for the whole test: the signal never takes its default action.
    let mut keeper = signal(USR1).unwrap();
    let sender = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            // At least once (the keeper's `recv` below waits for one).
            loop {
                // To this thread: the handler has run when `raise` returns, so none is left
                // pending once the thread is joined.
                raise_here(libc::SIGUSR1);
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                std::thread::yield_now();
            }
        })
    };
    rt.block_on(async {
        for round in 0..200 {
            let burst: Vec<_> = (0..40).map(|_| signal(USR1).unwrap()).collect();
            drop(burst);
            let mut pipes = Vec::new();
            for _ in 0..24 {
                let mut fds = [0; 2];
                // SAFETY: pipe2 writes two new descriptors into the array.
                let made =
                    unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) };
                assert_eq!(made, 0);
                pipes.push(fds);
            }
            ringsteal_rt::yield_now().await;
            for [r, w] in pipes {
                let mut byte = [0u8; 8];
                // SAFETY: reads into a live buffer from a descriptor made above.
                let n = unsafe { libc::read(r, byte.as_mut_ptr().cast(), 8) };
                assert!(n < 0, "round {round}: a signal handler wrote into a pipe");
                // SAFETY: both are ours, closed once.
                unsafe {
                    libc::close(r);
                    libc::close(w);
                }
            }
        }
    });
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    sender.join().unwrap();
    // Reported, so that no delivery is handed down to the next test's listeners.
    assert_eq!(rt.block_on(keeper.recv()), Some(()));
    drop(keeper);
}

#[test]
fn a_delivery_a_dropped_listener_never_reported_goes_to_the_next_listener() {
    let _serial = common::serial();
    with_each_wake("handed down", 2, |wake, rt| {
        rt.block_on(async move {
            // As a `select!` loop does with `ctrl_c()`: a listener made for one round, the
            // signal comes, another branch wins, the listener is dropped unpolled; the next
            // round's listener must report the delivery.
            let round_1 = signal(USR1).unwrap();
            raise_here(libc::SIGUSR1);
            drop(round_1);
            let mut round_2 = signal(USR1).unwrap();
            let got = ringsteal_rt::time::timeout(Duration::from_secs(20), round_2.recv()).await;
            assert_eq!(got, Ok(Some(())), "{wake:?}: the delivery was lost");
            // Handed to one listener only, and once: round 2 reported it, so a round 3 made
            // after round 2 is dropped starts from now.
            drop(round_2);
            let mut round_3 = signal(USR1).unwrap();
            let nothing =
                ringsteal_rt::time::timeout(Duration::from_millis(5), round_3.recv()).await;
            assert!(
                nothing.is_err(),
                "{wake:?}: a reported delivery was handed down"
            );
            // On another shard too: the hand-down is the process's, not the shard's.
            raise_here(libc::SIGUSR1);
            drop(round_3);
            let got = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let mut round_4 = signal(USR1).unwrap();
                round_4.recv().await
            })
            .await
            .unwrap();
            assert_eq!(got, Some(()), "{wake:?}");
        });
    });
}

#[test]
fn a_delivery_another_listener_reported_is_not_handed_down_but_a_later_one_is() {
    let _serial = common::serial();
    with_each_wake("hand-down after a report", 1, |wake, rt| {
        rt.block_on(async move {
            // A pinned, long-lived listener (a `shutdown_signal()` in `main`) and a per-round
            // one (a `ctrl_c()` in a request's `select!`).
            let mut keeper = signal(USR1).unwrap();
            let round = signal(USR1).unwrap();
            raise_here(libc::SIGUSR1);
            assert_eq!(keeper.recv().await, Some(()), "{wake:?}");
            drop(round); // never reported it, but the keeper did
            let mut next = signal(USR1).unwrap();
            let nothing = ringsteal_rt::time::timeout(Duration::from_millis(5), next.recv()).await;
            assert!(nothing.is_err(), "{wake:?}: a reported delivery came again");
            drop(next);
            // A second delivery that nobody reports before the round listener goes: the next
            // listener reports it, though the keeper reported the first.
            let round = signal(USR1).unwrap();
            raise_here(libc::SIGUSR1);
            drop(round);
            let mut next = signal(USR1).unwrap();
            let got = ringsteal_rt::time::timeout(Duration::from_secs(20), next.recv()).await;
            assert_eq!(
                got,
                Ok(Some(())),
                "{wake:?}: the unreported delivery was lost"
            );
            assert_eq!(keeper.recv().await, Some(()), "{wake:?}");
        });
    });
}

#[test]
fn a_hand_down_once_reported_gives_a_new_listener_nothing_a_live_one_has_pending() {
    let _serial = common::serial();
    with_each_wake("hand-down done with", 1, |wake, rt| {
        rt.block_on(async move {
            // A delivery a dropped listener left goes to the next listener, which reports it.
            let first = signal(USR1).unwrap();
            raise_here(libc::SIGUSR1);
            drop(first);
            let mut live = signal(USR1).unwrap();
            assert_eq!(live.recv().await, Some(()), "{wake:?}");
            // A second delivery, pending for the live listener: a listener made after it must
            // not report it (it came before that listener existed), as in tokio.
            raise_here(libc::SIGUSR1);
            let mut later = signal(USR1).unwrap();
            let at_once = std::future::poll_fn(|cx| std::task::Poll::Ready(later.poll_recv(cx)));
            assert!(
                at_once.await.is_pending(),
                "{wake:?}: a delivery from before the listener was reported"
            );
            assert_eq!(live.recv().await, Some(()), "{wake:?}");
        });
    });
}

#[test]
fn recv_off_a_runtime_is_none_not_a_panic() {
    let _serial = common::serial();
    let mut usr1 = signal(USR1).unwrap();
    let got = block_on_plain_thread(usr1.recv());
    assert_eq!(got, None);
}

fn block_on_plain_thread<F: std::future::Future>(fut: F) -> F::Output {
    use std::task::{Context, Poll, Wake, Waker};
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}
