//! A [`Sleep`](super::Sleep) polled on a thread that runs no shard (a `spawn_blocking`
//! closure driving it with `futures::executor::block_on`, another executor's thread): its
//! timer goes into a shard's wheel by a command, and the wheel's waker for it wakes the
//! foreign task. tokio's timers work from any thread of a runtime's context; so do these.
//!
//! The wheel holds a [`WheelWaker`]: woken, it marks the timer fired and wakes the task;
//! dropped unfired (the runtime shut down and cleared the wheel) it marks the timer gone, and
//! a poll then panics as tokio's does for a timer whose runtime shut down. A `Sleep` dropped
//! first cancels the entry by its key, or, while the command is still on its way, marks the
//! timer cancelled so that the shard never inserts it (the key's lock orders the two).
//!
//! Owns: the foreign timer's state and the wheel's waker for it. May not: touch a wheel
//! (the shard inserts and removes, `shard/commands.rs`).

use std::sync::atomic::{AtomicU8, Ordering::AcqRel, Ordering::Acquire};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use super::wheel::TimerKey;
use crate::sync::atomic_waker::AtomicWaker;

/// The wheel's entry fired (or the deadline had passed when the shard came to insert it).
const FIRED: u8 = 1;
/// The wheel let go of its waker without firing: the runtime shut down.
const GONE: u8 = 2;
/// The `Sleep` no longer wants the timer.
const CANCELLED: u8 = 4;

/// A timer set from off the shards, shared by its `Sleep` and the wheel's waker.
pub(crate) struct ForeignTimer {
    deadline: Instant,
    flags: AtomicU8,
    /// The foreign task's waker.
    waker: AtomicWaker,
    /// The wheel entry, once the shard inserted it. Its lock orders an insertion against a
    /// cancel (see the module docs).
    key: Mutex<Option<TimerKey>>,
}

impl ForeignTimer {
    /// A timer for `deadline` that will wake `waker`.
    pub(crate) fn new(deadline: Instant, waker: &Waker) -> Arc<Self> {
        let timer = Arc::new(Self {
            deadline,
            flags: AtomicU8::new(0),
            waker: AtomicWaker::new(),
            key: Mutex::new(None),
        });
        timer.waker.register(waker);
        timer
    }

    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// `Ready(true)` once fired, `Ready(false)` if the runtime shut down first; registers
    /// `cx`'s waker otherwise.
    pub(crate) fn poll(&self, cx: &mut Context<'_>) -> Poll<bool> {
        if let Some(done) = self.done() {
            return Poll::Ready(done);
        }
        self.waker.register(cx.waker());
        // A fire between the look and the registration woke the old waker: look again.
        match self.done() {
            Some(done) => Poll::Ready(done),
            None => Poll::Pending,
        }
    }

    fn done(&self) -> Option<bool> {
        let flags = self.flags.load(Acquire);
        if flags & FIRED != 0 {
            Some(true)
        } else if flags & GONE != 0 {
            Some(false)
        } else {
            None
        }
    }

    /// The waker the foreign task registered last (to carry over to a reset timer).
    pub(crate) fn take_waker(&self) -> Option<Waker> {
        self.waker.take()
    }

    /// Marks the timer unwanted and returns the wheel entry to remove, if the shard has
    /// inserted it; if it has not, it never will.
    pub(crate) fn cancel(&self) -> Option<TimerKey> {
        self.flags.fetch_or(CANCELLED, AcqRel);
        lock(&self.key).take()
    }

    /// The shard's side: unless cancelled, lets `insert` put the timer in the wheel, with
    /// the waker its argument makes, and keeps the key it returns. `insert` returns `None`
    /// without making a waker when the wheel is past the deadline: the timer fires at once.
    pub(crate) fn insert_with(
        self: &Arc<Self>,
        insert: impl FnOnce(&dyn Fn() -> Waker) -> Option<TimerKey>,
    ) {
        let mut key = lock(&self.key);
        if self.flags.load(Acquire) & CANCELLED != 0 {
            return;
        }
        let waker = || Waker::from(Arc::new(WheelWaker(self.clone())));
        match insert(&waker) {
            Some(k) => *key = Some(k),
            None => {
                drop(key);
                self.fire();
            }
        }
    }

    /// Marks the timer gone and wakes its task, unless it fired or was cancelled: the
    /// runtime let go of it unfired (its wheel was cleared at shutdown, or the command that
    /// carried it was given up), and its task must hear of it.
    pub(crate) fn abandon(&self) {
        let before = self.flags.fetch_or(GONE, AcqRel);
        if before & (FIRED | CANCELLED) == 0 {
            if let Some(w) = self.waker.take() {
                w.wake();
            }
        }
    }

    fn fire(&self) {
        self.flags.fetch_or(FIRED, AcqRel);
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What the wheel holds for a foreign timer.
struct WheelWaker(Arc<ForeignTimer>);

impl Wake for WheelWaker {
    fn wake(self: Arc<Self>) {
        self.0.fire();
    }
}

impl Drop for WheelWaker {
    fn drop(&mut self) {
        // Dropped without firing: removed for a cancel (nobody looks), or cleared at
        // shutdown (the task must hear of it, or it would wait for ever).
        self.0.abandon();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    use super::*;

    /// Counts its wakes.
    #[derive(Default)]
    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    fn timer() -> (Arc<ForeignTimer>, Arc<Count>) {
        let count = Arc::new(Count::default());
        let t = ForeignTimer::new(Instant::now(), &Waker::from(count.clone()));
        (t, count)
    }

    fn poll(t: &ForeignTimer) -> Poll<bool> {
        let waker = Waker::from(Arc::new(Count::default()));
        t.poll(&mut Context::from_waker(&waker))
    }

    fn key(n: u32) -> TimerKey {
        TimerKey::for_tests(n)
    }

    #[test]
    fn a_timer_cancelled_before_the_shard_came_is_never_inserted() {
        let (t, _) = timer();
        assert_eq!(t.cancel(), None);
        t.insert_with(|_| panic!("inserted after a cancel"));
    }

    #[test]
    fn a_timer_cancelled_after_insertion_hands_back_its_key() {
        let (t, _) = timer();
        t.insert_with(|_| Some(key(7)));
        assert_eq!(t.cancel(), Some(key(7)));
        assert_eq!(t.cancel(), None);
    }

    #[test]
    fn the_wheels_waker_fires_the_timer_and_wakes_its_task() {
        let (t, woken) = timer();
        let mut held = None;
        t.insert_with(|make| {
            held = Some(make());
            Some(key(1))
        });
        held.unwrap().wake();
        assert_eq!(woken.0.load(SeqCst), 1);
        assert_eq!(poll(&t), Poll::Ready(true));
    }

    #[test]
    fn a_poll_registers_its_waker_for_the_fire() {
        let (t, first) = timer();
        let mut held = None;
        t.insert_with(|make| {
            held = Some(make());
            Some(key(1))
        });
        let second = Arc::new(Count::default());
        let waker = Waker::from(second.clone());
        assert!(t.poll(&mut Context::from_waker(&waker)).is_pending());
        held.unwrap().wake();
        assert_eq!((first.0.load(SeqCst), second.0.load(SeqCst)), (0, 1));
    }

    #[test]
    fn a_timer_past_its_deadline_fires_at_insertion() {
        let (t, woken) = timer();
        t.insert_with(|_| None);
        assert_eq!(woken.0.load(SeqCst), 1);
        assert_eq!(poll(&t), Poll::Ready(true));
    }

    #[test]
    fn a_wheel_that_drops_the_waker_unfired_tells_the_task_its_runtime_is_gone() {
        let (t, woken) = timer();
        let mut held = None;
        t.insert_with(|make| {
            held = Some(make());
            Some(key(1))
        });
        drop(held);
        assert_eq!(woken.0.load(SeqCst), 1);
        assert_eq!(poll(&t), Poll::Ready(false));
    }

    #[test]
    fn an_abandoned_command_tells_the_task_too_unless_cancelled() {
        let (t, woken) = timer();
        t.abandon();
        assert_eq!(woken.0.load(SeqCst), 1);
        assert_eq!(poll(&t), Poll::Ready(false));
        let (t, woken) = timer();
        t.cancel();
        t.abandon();
        assert_eq!(woken.0.load(SeqCst), 0);
    }

    /// A shard inserting (and at once firing or dropping) while the `Sleep`'s thread cancels:
    /// every round ends with the key handed to exactly one side, and no deadlock.
    #[test]
    fn insertion_and_cancel_race_without_losing_the_key() {
        let rounds = if cfg!(miri) { 20 } else { 2000 };
        for round in 0..rounds {
            let (t, _) = timer();
            let shard = {
                let t = t.clone();
                std::thread::spawn(move || {
                    let mut inserted = false;
                    t.insert_with(|make| {
                        inserted = true;
                        // The wheel's waker, dropped at once as a removal would.
                        drop(make());
                        Some(key(round))
                    });
                    inserted
                })
            };
            let cancelled = t.cancel();
            let inserted = shard.join().unwrap();
            let left = t.cancel();
            assert_eq!(
                inserted,
                cancelled.is_some() || left.is_some(),
                "round {round}: the key was lost"
            );
            assert!(!(cancelled.is_some() && left.is_some()));
        }
    }
}
