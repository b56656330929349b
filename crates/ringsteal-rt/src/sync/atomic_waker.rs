//! [`AtomicWaker`]: one waker slot shared by one registering side (a future, on any thread)
//! and one waking side (a shard completing an operation).
//!
//! The protocol: the registrant takes a `REGISTERING` lock bit to write the slot; the waker
//! sets `WAKING` and, if it got the slot free, takes the waker out. If a wake arrives while a
//! registration holds the lock, the registrant sees `WAKING` when it releases and wakes
//! itself. Either way the registered waker is woken exactly once and no wake is lost.
//!
//! A waking side that wakes for the last time (an operation's final completion) uses
//! [`take_final`](AtomicWaker::take_final): it leaves `WAKING` set, so it costs one locked
//! instruction instead of two, and a registration after it wakes its own waker at once.

use std::cell::UnsafeCell;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};
use std::task::Waker;

use crate::loom::sync::atomic::AtomicUsize;

const WAITING: usize = 0;
const REGISTERING: usize = 1;
const WAKING: usize = 2;

/// A waker slot for one registrant and one waker.
pub(crate) struct AtomicWaker {
    state: AtomicUsize,
    waker: UnsafeCell<Option<Waker>>,
}

// SAFETY: the slot is accessed only by whoever holds the REGISTERING or WAKING lock bit.
unsafe impl Send for AtomicWaker {}
// SAFETY: as above.
unsafe impl Sync for AtomicWaker {}

impl AtomicWaker {
    pub(crate) fn new() -> Self {
        Self {
            state: AtomicUsize::new(WAITING),
            waker: UnsafeCell::new(None),
        }
    }

    /// Stores `waker` to be woken by whoever next [`take`](Self::take)s it.
    #[inline]
    pub(crate) fn register(&self, waker: &Waker) {
        match self
            .state
            .compare_exchange(WAITING, REGISTERING, Acquire, Acquire)
        {
            Ok(_) => {
                // A waker's clone is user code and may panic: the guard then releases the
                // lock, or every later registration would find it held for ever.
                let guard = Unlock(self);
                // SAFETY: REGISTERING gives exclusive access to the slot.
                let replaced = unsafe {
                    let slot = &mut *self.waker.get();
                    match slot {
                        Some(old) if old.will_wake(waker) => None,
                        _ => slot.replace(waker.clone()),
                    }
                };
                std::mem::forget(guard);
                if let Err(actual) =
                    self.state
                        .compare_exchange(REGISTERING, WAITING, AcqRel, Acquire)
                {
                    // A wake arrived while we held the lock: it left the waker to us.
                    debug_assert_eq!(actual, REGISTERING | WAKING);
                    // SAFETY: the waking side does not touch the slot while REGISTERING is set.
                    let w = unsafe { (*self.waker.get()).take() };
                    self.state.swap(WAITING, AcqRel);
                    if let Some(w) = w {
                        w.wake();
                    }
                }
                // Dropped with the lock released (user code, like the clone).
                drop(replaced);
            }
            Err(WAKING) => {
                // A wake is in progress right now: make sure this poll happens again.
                waker.wake_by_ref();
            }
            Err(_) => {
                // Concurrent registration: impossible with one registrant, harmless anyway.
                waker.wake_by_ref();
            }
        }
    }

    /// Takes the registered waker for the caller to wake (or `None`). Call after publishing
    /// whatever the registrant will check after registering.
    #[inline]
    pub(crate) fn take(&self) -> Option<Waker> {
        match self.state.fetch_or(WAKING, AcqRel) {
            WAITING => {
                // SAFETY: we set WAKING from WAITING: exclusive access to the slot.
                let w = unsafe { (*self.waker.get()).take() };
                self.state.fetch_and(!WAKING, Release);
                w
            }
            _ => None, // a registrant holds the lock and will see WAKING, or a wake is running
        }
    }
}

impl AtomicWaker {
    /// [`register`](Self::register) for a slot no other thread can reach yet (its owner has
    /// not shared it): a plain write, no locked instruction.
    ///
    /// # Safety
    /// Nothing else may access the slot during the call: no `take` or `register` can run
    /// concurrently (the slot is published to other threads only afterwards, by whatever
    /// synchronisation shares its owner).
    #[inline]
    pub(crate) unsafe fn register_unshared(&self, waker: &Waker) {
        debug_assert_eq!(self.state.load(Acquire), WAITING);
        // SAFETY: exclusive access, by the caller's contract.
        unsafe { *self.waker.get() = Some(waker.clone()) };
    }

    /// [`take`](Self::take) for the last wake: call after publishing what the registrant
    /// checks after registering, and never take again. One locked instruction where `take`
    /// needs two, because `WAKING` is left set: a registration that comes later wakes its own
    /// waker at once and keeps nothing in the slot (the registrant, checking after
    /// registering, sees what was published). If the final take meets a registration in
    /// progress, that registrant wakes itself as with `take`, and reopens the slot.
    #[inline]
    pub(crate) fn take_final(&self) -> Option<Waker> {
        match self.state.fetch_or(WAKING, AcqRel) {
            // SAFETY: we set WAKING from WAITING, and a registrant cannot take the lock while
            // WAKING is set: exclusive access to the slot, now and later.
            WAITING => unsafe { (*self.waker.get()).take() },
            // A registrant holds the lock: it sees WAKING when it releases and wakes itself.
            _ => None,
        }
    }
}

/// Releases the `REGISTERING` lock if a waker's clone panics while `register` holds it
/// (dropped only by unwinding: `register` forgets it otherwise), as the end of `register`
/// would: a wake that came meanwhile left the slot's waker to be woken here.
struct Unlock<'a>(&'a AtomicWaker);

impl Drop for Unlock<'_> {
    fn drop(&mut self) {
        let slot = self.0;
        if slot
            .state
            .compare_exchange(REGISTERING, WAITING, AcqRel, Acquire)
            .is_err()
        {
            // SAFETY: REGISTERING is still held by this registration; the waking side does
            // not touch the slot while it is set.
            let w = unsafe { (*slot.waker.get()).take() };
            slot.state.swap(WAITING, AcqRel);
            if let Some(w) = w {
                w.wake();
            }
        }
    }
}

impl Drop for AtomicWaker {
    #[inline]
    fn drop(&mut self) {
        // Exclusive access: nothing else can be using the slot.
        self.waker.get_mut().take();
    }
}

/// Specifications of the slot, runnable under Miri (`scripts/miri.sh`), threads included.
#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize as Counter, Ordering::SeqCst};
    use std::sync::Arc;
    use std::task::{Wake, Waker};

    use super::AtomicWaker;

    #[derive(Default)]
    struct Count(Counter);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    fn counting() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count::default());
        (count.clone(), Waker::from(count))
    }

    #[test]
    fn take_hands_out_the_registered_waker_once() {
        let slot = AtomicWaker::new();
        assert!(slot.take().is_none(), "nothing registered yet");
        let (count, waker) = counting();
        slot.register(&waker);
        slot.take().expect("the registered waker").wake();
        assert_eq!(count.0.load(SeqCst), 1);
        assert!(slot.take().is_none(), "a waker is handed out once");
    }

    #[test]
    fn registering_again_replaces_the_waker_unless_it_wakes_the_same_task() {
        let slot = AtomicWaker::new();
        let (first, w1) = counting();
        let (second, w2) = counting();
        slot.register(&w1);
        slot.register(&w1.clone());
        assert_eq!(
            Arc::strong_count(&first),
            3,
            "the same waker is kept, not cloned again"
        );
        slot.register(&w2);
        assert_eq!(
            Arc::strong_count(&first),
            2,
            "the replaced waker is dropped"
        );
        slot.take().unwrap().wake();
        assert_eq!(first.0.load(SeqCst), 0);
        assert_eq!(second.0.load(SeqCst), 1);
    }

    #[test]
    fn a_waker_whose_clone_panics_leaves_the_slot_usable() {
        use std::task::{RawWaker, RawWakerVTable};
        fn clone(_: *const ()) -> RawWaker {
            panic!("a waker that cannot be cloned")
        }
        fn noop(_: *const ()) {}
        static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, noop, noop, noop);
        // SAFETY: the vtable's functions ignore the data pointer; clone panics, which is the
        // point (a RawWaker's functions may panic).
        let bad = unsafe { Waker::from_raw(RawWaker::new(std::ptr::null(), &VTABLE)) };
        let slot = AtomicWaker::new();
        let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| slot.register(&bad)));
        assert!(res.is_err(), "the clone panicked");
        let (count, good) = counting();
        slot.register(&good);
        slot.take()
            .expect("the slot took the next registration")
            .wake();
        assert_eq!(count.0.load(SeqCst), 1);
    }

    #[test]
    fn after_the_final_take_a_registration_wakes_itself_and_keeps_nothing() {
        let slot = AtomicWaker::new();
        let (first, w1) = counting();
        slot.register(&w1);
        slot.take_final().expect("the registered waker").wake();
        assert_eq!(first.0.load(SeqCst), 1);
        let (late, w2) = counting();
        slot.register(&w2);
        assert_eq!(
            late.0.load(SeqCst),
            1,
            "a late registration is woken at once"
        );
        assert_eq!(Arc::strong_count(&late), 2, "and its waker is not kept");
        assert!(slot.take_final().is_none(), "the slot stays closed");
    }

    #[test]
    fn a_final_wake_racing_a_registration_is_never_lost() {
        registrant_sees_the_flag_or_is_woken(AtomicWaker::take_final);
    }

    #[test]
    fn a_waker_stored_before_sharing_is_taken_like_a_registered_one() {
        let slot = AtomicWaker::new();
        let (count, waker) = counting();
        // SAFETY: the slot is not shared with anything yet.
        unsafe { slot.register_unshared(&waker) };
        let slot = Arc::new(slot);
        let s = slot.clone();
        std::thread::spawn(move || s.take_final().expect("the stored waker").wake())
            .join()
            .unwrap();
        assert_eq!(count.0.load(SeqCst), 1);
    }

    #[test]
    fn dropping_the_slot_drops_the_registered_waker() {
        let (count, waker) = counting();
        let slot = AtomicWaker::new();
        slot.register(&waker);
        drop(waker);
        assert_eq!(Arc::strong_count(&count), 2);
        drop(slot);
        assert_eq!(Arc::strong_count(&count), 1);
        assert_eq!(count.0.load(SeqCst), 0, "dropping is not waking");
    }

    #[test]
    fn a_wake_racing_a_registration_is_never_lost() {
        registrant_sees_the_flag_or_is_woken(AtomicWaker::take);
    }

    /// The waking side publishes a flag, then takes the waker with `take`. The registrant
    /// registers, then checks the flag: it either sees the flag or is woken.
    fn registrant_sees_the_flag_or_is_woken(take: fn(&AtomicWaker) -> Option<Waker>) {
        let rounds = if cfg!(miri) { 30 } else { 2000 };
        for _ in 0..rounds {
            let slot = Arc::new(AtomicWaker::new());
            let flag = Arc::new(AtomicBool::new(false));
            let (count, waker) = counting();
            let (s, f) = (slot.clone(), flag.clone());
            let waking = std::thread::spawn(move || {
                f.store(true, SeqCst);
                if let Some(w) = take(&s) {
                    w.wake();
                }
            });
            slot.register(&waker);
            let saw_flag = flag.load(SeqCst);
            waking.join().unwrap();
            assert!(
                saw_flag || count.0.load(SeqCst) >= 1,
                "registered, saw no flag, and was never woken: lost wake"
            );
        }
    }

    #[test]
    fn a_registration_published_before_a_wake_is_always_woken() {
        // Round after round, the registrant registers, then tells the other thread, which
        // takes the waker and wakes it; the registrant waits for that wake.
        let rounds = if cfg!(miri) { 20 } else { 1000 };
        let slot = Arc::new(AtomicWaker::new());
        let registered = Arc::new(Counter::new(0));
        let (count, waker) = counting();
        let (s, r) = (slot.clone(), registered.clone());
        let waking = std::thread::spawn(move || {
            for round in 1..=rounds {
                while r.load(SeqCst) != round {
                    std::thread::yield_now();
                }
                s.take()
                    .expect("the waker registered before this round")
                    .wake();
            }
        });
        for round in 1..=rounds {
            slot.register(&waker);
            registered.store(round, SeqCst);
            while count.0.load(SeqCst) != round {
                std::thread::yield_now();
            }
        }
        waking.join().unwrap();
        assert_eq!(count.0.load(SeqCst), rounds, "one wake per registration");
        assert!(slot.take().is_none());
    }
}

/// Loom models of the slot's state word (`scripts/loom.sh`): every interleaving of a
/// registrant that registers and then checks a flag against a waking side that publishes the
/// flag and then takes the waker, with `take` and with `take_final`. The registrant must see
/// the flag or be woken. (The slot itself is a std `UnsafeCell`, which loom does not track:
/// the models check the protocol's states, the unit tests above and Miri its memory.)
#[cfg(all(test, loom))]
mod loom_tests {
    use std::sync::atomic::AtomicUsize as Count;
    use std::sync::atomic::Ordering::{Acquire, Release, SeqCst};
    use std::task::{Wake, Waker};

    use loom::sync::atomic::AtomicBool;
    use loom::sync::Arc;
    use loom::thread;

    use super::AtomicWaker;

    struct Counted(Count);

    impl Wake for Counted {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    fn registrant_sees_the_flag_or_is_woken(final_take: bool) {
        loom::model(move || {
            let slot = Arc::new(AtomicWaker::new());
            let flag = Arc::new(AtomicBool::new(false));
            let count = std::sync::Arc::new(Counted(Count::new(0)));
            let waker = Waker::from(count.clone());
            let (s, f) = (slot.clone(), flag.clone());
            let waking = thread::spawn(move || {
                f.store(true, Release);
                let w = if final_take { s.take_final() } else { s.take() };
                if let Some(w) = w {
                    w.wake();
                }
            });
            slot.register(&waker);
            let saw_flag = flag.load(Acquire);
            waking.join().unwrap();
            assert!(
                saw_flag || count.0.load(SeqCst) >= 1,
                "registered, saw no flag, and was never woken: lost wake"
            );
        });
    }

    #[test]
    fn loom_a_take_racing_a_registration_loses_no_wake() {
        registrant_sees_the_flag_or_is_woken(false);
    }

    #[test]
    fn loom_a_final_take_racing_a_registration_loses_no_wake() {
        registrant_sees_the_flag_or_is_woken(true);
    }
}
