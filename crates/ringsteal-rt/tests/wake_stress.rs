//! Stress of the sleep/wake protocol: pairs of tasks pinned on two shards hand a token
//! back and forth with random small delays (spins of random length, occasional yields,
//! rare longer pauses that let the other shard fall asleep), until a target number of
//! cross-shard wakes has happened. A lost wakeup stalls a pair forever, which the hang guard
//! turns into a failure. Run under MSG_RING and under eventfd doorbells.
//!
//! Each mechanism runs 1,000,000 cross-shard wakes (about 8 s in a debug build on two
//! cores). Four pairs keep the shards busy enough to go fast and idle often enough to sleep
//! (one sleep and doorbell per five to ten wakes): more pairs rarely sleep, fewer are slow.
//! `RINGSTEAL_STRESS=<n>` runs `n` instead (`scripts/stress.sh`: a release build, more).

mod common;

use std::future::poll_fn;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use common::*;
use ringsteal_rt::{spawn_with, Placement, Runtime, WakeMechanism};

const DEFAULT_WAKES: u64 = 1_000_000;
const PAIRS: usize = 4;

fn target_wakes() -> u64 {
    std::env::var("RINGSTEAL_STRESS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_WAKES)
}

/// One direction of a pair: a sequence number and the waiting task's waker.
#[derive(Default)]
struct Slot {
    state: Mutex<(u64, Option<Waker>)>,
}

impl Slot {
    /// Publishes `seq`; returns true if it woke a waiting task.
    fn send(&self, seq: u64) -> bool {
        let waker = {
            let mut st = self.state.lock().unwrap();
            st.0 = seq;
            st.1.take()
        };
        match waker {
            Some(w) => {
                w.wake();
                true
            }
            None => false,
        }
    }

    async fn recv(&self, seq: u64) {
        poll_fn(|cx| {
            let mut st = self.state.lock().unwrap();
            if st.0 >= seq {
                return Poll::Ready(());
            }
            match &st.1 {
                Some(w) if w.will_wake(cx.waker()) => {}
                _ => st.1 = Some(cx.waker().clone()),
            }
            Poll::Pending
        })
        .await
    }
}

/// A random small delay before each hand-off.
async fn jitter(rng: &mut Rng) {
    match rng.below(256) {
        0 => spin_for(rng.below(20_000)),
        1..=8 => ringsteal_rt::yield_now().await,
        _ => spin_for(rng.below(64)),
    }
}

struct Totals {
    wakes: AtomicU64,
    handoffs: AtomicU64,
    stop: std::sync::atomic::AtomicBool,
}

/// Runs the pairs until `target` wakes happened; returns (wakes, hand-offs).
fn run_pairs(rt: &Runtime, target: u64) -> (u64, u64) {
    let totals = Arc::new(Totals {
        wakes: AtomicU64::new(0),
        handoffs: AtomicU64::new(0),
        stop: std::sync::atomic::AtomicBool::new(false),
    });
    let t = totals.clone();
    rt.block_on(async move {
        let mut handles = Vec::new();
        for pair in 0..PAIRS {
            let (ping, pong) = (Arc::new(Slot::default()), Arc::new(Slot::default()));
            let (a, b) = (pair % 2, 1 - pair % 2);
            let (pi, po, tt) = (ping.clone(), pong.clone(), t.clone());
            // The leader decides when to stop: it sends `u64::MAX` as its last sequence.
            handles.push(spawn_with(Placement::Pinned(a), async move {
                let mut rng = Rng::new(pair as u64 * 2 + 1);
                let mut seq = 0;
                loop {
                    seq += 1;
                    jitter(&mut rng).await;
                    let last = tt.stop.load(SeqCst);
                    let sent = if last { u64::MAX } else { seq };
                    if pi.send(sent) {
                        tt.wakes.fetch_add(1, SeqCst);
                    }
                    tt.handoffs.fetch_add(1, SeqCst);
                    if last {
                        return;
                    }
                    po.recv(seq).await;
                    if tt.wakes.load(SeqCst) >= target {
                        tt.stop.store(true, SeqCst);
                    }
                }
            }));
            let (pi, po, tt) = (ping, pong, t.clone());
            handles.push(spawn_with(Placement::Pinned(b), async move {
                let mut rng = Rng::new(pair as u64 * 2 + 2);
                let mut seq = 0;
                loop {
                    seq += 1;
                    pi.recv(seq).await;
                    if pi.state.lock().unwrap().0 == u64::MAX {
                        return;
                    }
                    jitter(&mut rng).await;
                    if po.send(seq) {
                        tt.wakes.fetch_add(1, SeqCst);
                    }
                    tt.handoffs.fetch_add(1, SeqCst);
                }
            }));
        }
        for h in handles {
            h.await.unwrap();
        }
    });
    (totals.wakes.load(SeqCst), totals.handoffs.load(SeqCst))
}

/// The stress tests share the machine's two cores: run them one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn stress(name: &'static str, wake: WakeMechanism) {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let target = target_wakes();
    // Generous: a debug build of the default count takes about 8 s here.
    let limit = Duration::from_secs(60 + target / 10_000);
    hang_guard(name, limit, move || {
        let rt = match Runtime::builder().shards(2).wake(wake).build() {
            Ok(rt) => rt,
            Err(e) if wake == WakeMechanism::MsgRing && !kernel_has_msg_ring() => {
                println!("{name}: skipped, this kernel has no MSG_RING: {e}");
                return;
            }
            Err(e) => panic!("{name}: {e}"),
        };
        let before = rt.handle().stats().total();
        let start = Instant::now();
        let (wakes, handoffs) = run_pairs(&rt, target);
        let took = start.elapsed();
        let d = rt.handle().stats().total();
        println!(
            "{name}: {wakes} cross-shard wakes ({handoffs} hand-offs, {PAIRS} pairs) in {took:?}; \
             remote wakes {}, parks {}, MSG_RING doorbells {}, eventfd doorbells {}",
            d.remote_wakes - before.remote_wakes,
            d.parks - before.parks,
            d.msg_ring_doorbells - before.msg_ring_doorbells,
            d.eventfd_doorbells - before.eventfd_doorbells,
        );
        assert!(wakes >= target, "{name}: only {wakes} wakes");
        // The protocol was exercised: shards went to sleep and were rung awake.
        let doorbells = (d.msg_ring_doorbells - before.msg_ring_doorbells)
            + (d.eventfd_doorbells - before.eventfd_doorbells);
        assert!(d.parks - before.parks > 100, "{name}: shards hardly slept");
        assert!(doorbells > 100, "{name}: hardly any doorbell was rung");
        match wake {
            WakeMechanism::EventFd => {
                assert_eq!(d.msg_ring_doorbells, before.msg_ring_doorbells)
            }
            _ => assert!(d.msg_ring_doorbells > before.msg_ring_doorbells),
        }
    });
}

#[test]
fn cross_shard_wakes_with_random_delays_all_complete_under_msg_ring() {
    stress("stress MsgRing", WakeMechanism::MsgRing);
}

#[test]
fn cross_shard_wakes_with_random_delays_all_complete_under_eventfd() {
    stress("stress EventFd", WakeMechanism::EventFd);
}
