//! [`SleepFlag`]: a shard's `sleeping` flag and both halves of the sleep/wake protocol.
//!
//! * The sleeper (the shard, out of work) calls [`prepare_sleep`](SleepFlag::prepare_sleep):
//!   it sets `sleeping = true` and issues a SeqCst fence. It then re-checks every queue it
//!   can be fed through, and only then blocks in `io_uring_enter`. When it finds work, or
//!   when it wakes, it calls [`wake_up`](SleepFlag::wake_up).
//! * A waker pushes into one of those queues, then calls
//!   [`claim_doorbell`](SleepFlag::claim_doorbell): a SeqCst fence, a read of `sleeping`, and
//!   if it is true a *swap* to false. Only the caller whose swap saw `true` rings the doorbell.
//!
//! The two fences order the sleeper's store before its re-check and the waker's push before
//! its read, so at least one side sees the other: the sleeper finds the work, or the waker
//! finds the flag. A wake is never lost. The swap makes the doorbell one per sleep, however
//! many wakers race. The queues themselves need no ordering stronger than their own.
//!
//! Owns: the flag. May not: know about queues or doorbells (the caller re-checks and rings).
//! Built on the `crate::loom` shim: `--cfg loom` model-checks it (`scripts/loom.sh`).

use std::sync::atomic::Ordering::{Relaxed, SeqCst};

use crate::loom::sync::atomic::{fence, AtomicBool};

/// Whether a shard is (about to be) blocked in the kernel, waiting for a doorbell.
pub(crate) struct SleepFlag(AtomicBool);

impl SleepFlag {
    /// A flag that starts asleep (`true`) or awake.
    pub(crate) fn new(asleep: bool) -> Self {
        Self(AtomicBool::new(asleep))
    }

    /// True while the shard is (about to be) asleep. For tests that must wait for a sleep.
    #[cfg(test)]
    pub(crate) fn is_set(&self) -> bool {
        self.0.load(SeqCst)
    }

    /// Sleeper side: publishes the intent to sleep. The caller must re-check its queues after
    /// this and call [`wake_up`](Self::wake_up) if it finds work or when it wakes.
    ///
    /// The flag is written with a swap, not a store: the same instruction on x86 (`xchg`),
    /// and a read-modify-write is ordered after a racing waker's swap in the flag's
    /// modification order, which lets loom model the race exactly (a plain store and a
    /// concurrent swap are left unordered by loom, tokio-rs/loom#282, which then reports lost
    /// wakeups that C11 forbids).
    pub(crate) fn prepare_sleep(&self) {
        self.0.swap(true, SeqCst);
        fence(SeqCst);
    }

    /// Sleeper side: awake again (found work after `prepare_sleep`, or returned from the
    /// kernel). A doorbell claimed meanwhile still arrives and makes the next sleep return at
    /// once, which is harmless.
    pub(crate) fn wake_up(&self) {
        self.0.store(false, Relaxed);
    }

    /// Marks a shard that nobody drives as asleep, so wakes ring its doorbell and the
    /// doorbell waits in its ring for the thread that comes to drive it.
    pub(crate) fn mark_asleep(&self) {
        self.0.store(true, SeqCst);
    }

    /// Waker side: after pushing work, claims the doorbell if the shard sleeps. True means the
    /// caller must ring it (exactly one caller per sleep gets true).
    pub(crate) fn claim_doorbell(&self) -> bool {
        fence(SeqCst);
        self.claim_after_fence()
    }

    /// As [`claim_doorbell`](Self::claim_doorbell), for a caller that already issued the
    /// SeqCst fence after its push (one fence before looking at several shards).
    pub(crate) fn claim_after_fence(&self) -> bool {
        self.0.load(Relaxed) && self.0.swap(false, SeqCst)
    }
}

/// Loom models of the protocol, with the work queue reduced to a relaxed counter (the fences
/// alone must carry the ordering) and the doorbell to a counted event the sleeper blocks on,
/// as it blocks in `io_uring_enter`:
///
/// * a sleeper running the shard loop (take work, sleep, wake, repeat) against one waker
///   that wakes it once or twice: a lost wakeup leaves it blocked forever, which loom
///   reports as a deadlock; doorbells never outnumber sleeps;
/// * the same against two waker threads, with a preemption bound of 3 (unbounded, loom
///   explored it for 19 minutes here without finishing, or finding a fault);
/// * a single sleep against two racing wakers: no lost wakeup, one doorbell between them;
/// * the broken order (re-check before publishing), which the model must catch.
#[cfg(all(test, loom))]
mod loom_tests {
    use std::sync::atomic::Ordering::Relaxed;

    use loom::sync::atomic::AtomicUsize;
    use loom::sync::{Arc, Condvar, Mutex};
    use loom::thread;

    use super::SleepFlag;

    /// One shard as the protocol sees it.
    struct Shard {
        flag: SleepFlag,
        /// Items ever pushed into the shard's queues.
        pushed: AtomicUsize,
        /// Doorbells ever rung (what the kernel would post into the ring).
        rung: Mutex<usize>,
        bell: Condvar,
    }

    impl Shard {
        fn new() -> Arc<Self> {
            Arc::new(Self {
                flag: SleepFlag::new(false),
                pushed: AtomicUsize::new(0),
                rung: Mutex::new(0),
                bell: Condvar::new(),
            })
        }

        /// What a waker does: push, then ring only if it claims the doorbell.
        fn wake(&self) {
            self.pushed.fetch_add(1, Relaxed);
            if self.flag.claim_doorbell() {
                *self.rung.lock().unwrap() += 1;
                self.bell.notify_one();
            }
        }

        /// Blocks until more doorbells have been rung than `seen`; returns the new count.
        fn block_in_kernel(&self, seen: usize) -> usize {
            let mut rung = self.rung.lock().unwrap();
            while *rung == seen {
                rung = self.bell.wait(rung).unwrap();
            }
            *rung
        }
    }

    /// What the sleeper saw: sleeps it prepared and doorbells rung in all.
    struct Outcome {
        sleeps: usize,
        rung: usize,
    }

    /// The shard loop: take whatever is queued; when nothing is, sleep by the protocol.
    /// Returns once it has taken `total` items, with the number of sleeps it prepared.
    fn run_sleeper(shard: &Shard, total: usize) -> usize {
        let (mut taken, mut seen_rings, mut sleeps) = (0, 0, 0);
        while taken < total {
            let available = shard.pushed.load(Relaxed);
            if available > taken {
                taken = available;
                continue;
            }
            sleeps += 1;
            shard.flag.prepare_sleep();
            if shard.pushed.load(Relaxed) > taken {
                shard.flag.wake_up();
                continue;
            }
            seen_rings = shard.block_in_kernel(seen_rings);
            shard.flag.wake_up();
        }
        sleeps
    }

    /// The looping sleeper against `wakers` waker threads that wake it `wakes` times each.
    fn model(wakers: usize, wakes: usize) -> Outcome {
        let shard = Shard::new();
        let handles: Vec<_> = (0..wakers)
            .map(|_| {
                let s = shard.clone();
                thread::spawn(move || (0..wakes).for_each(|_| s.wake()))
            })
            .collect();
        let sleeps = run_sleeper(&shard, wakers * wakes);
        for h in handles {
            h.join().unwrap();
        }
        let rung = *shard.rung.lock().unwrap();
        Outcome { sleeps, rung }
    }

    #[test]
    fn loom_two_wakes_from_one_waker_are_never_lost_and_ring_at_most_once_per_sleep() {
        loom::model(|| {
            let out = model(1, 2);
            assert!(
                out.rung <= out.sleeps,
                "{} doorbells for {} sleeps",
                out.rung,
                out.sleeps
            );
        });
    }

    #[test]
    fn loom_one_wake_racing_a_looping_sleeper_is_never_lost_and_rings_at_most_once() {
        loom::model(|| {
            let out = model(1, 1);
            assert!(
                out.rung <= out.sleeps,
                "{} doorbells for {} sleeps",
                out.rung,
                out.sleeps
            );
            assert!(out.rung <= 1, "one wake rang {} doorbells", out.rung);
        });
    }

    #[test]
    fn loom_two_wakers_racing_a_looping_sleeper_lose_no_wake() {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(3);
        builder.check(|| {
            let out = model(2, 1);
            assert!(
                out.rung <= out.sleeps,
                "{} doorbells for {} sleeps",
                out.rung,
                out.sleeps
            );
        });
    }

    /// The sleeper sleeps exactly once (no loop) against `wakers` wakers. Returns whether its
    /// re-check found work, and the doorbells rung.
    fn single_sleep(wakers: usize, check_before_publishing: bool) -> (bool, usize) {
        let shard = Shard::new();
        let handles: Vec<_> = (0..wakers)
            .map(|_| {
                let s = shard.clone();
                thread::spawn(move || s.wake())
            })
            .collect();
        let found = if check_before_publishing {
            // The broken order: re-check, then publish. A push in between goes unseen and
            // its waker sees `sleeping == false`.
            let found = shard.pushed.load(Relaxed) > 0;
            shard.flag.prepare_sleep();
            found
        } else {
            shard.flag.prepare_sleep();
            shard.pushed.load(Relaxed) > 0
        };
        if found {
            shard.flag.wake_up();
        }
        for h in handles {
            h.join().unwrap();
        }
        let rung = *shard.rung.lock().unwrap();
        (found, rung)
    }

    fn assert_no_lost_wake_and_one_doorbell(found: bool, rung: usize) {
        assert!(rung <= 1, "{rung} doorbells for one sleep");
        if !found {
            assert_eq!(
                rung, 1,
                "the sleeper saw no work and no waker rang: lost wakeup"
            );
        }
    }

    #[test]
    fn loom_two_wakers_against_a_single_sleep_ring_one_doorbell_between_them() {
        // Whatever the interleaving, the two wakers' claims yield at most one doorbell, and
        // exactly one if the sleeper's re-check missed both pushes.
        loom::model(|| {
            let (found, rung) = single_sleep(2, false);
            assert_no_lost_wake_and_one_doorbell(found, rung);
        });
    }

    #[test]
    #[should_panic(expected = "lost wakeup")]
    fn loom_model_catches_a_sleeper_that_rechecks_before_publishing() {
        // Checks the model itself: the broken order must lose a wake in some interleaving,
        // or the models above would prove nothing.
        loom::model(|| {
            let (found, rung) = single_sleep(1, true);
            assert_no_lost_wake_and_one_doorbell(found, rung);
        });
    }
}
