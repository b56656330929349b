//! Loom models of the state word (`scripts/loom.sh`): every interleaving of a release with a
//! waiter's registration, of two would-be holders, of `poll_free` with a request, and of the
//! kept bytes handed from one holder to the next. A critical section touches a loom
//! `UnsafeCell`, so two holders at once, or a holder that does not see its predecessor's
//! writes, fail the model as a data race.

use std::sync::atomic::AtomicBool as Flag;
use std::sync::atomic::AtomicUsize as Count;
use std::sync::atomic::Ordering::SeqCst;
use std::task::Wake;

use loom::cell::UnsafeCell;
use loom::thread;

use super::*;

struct Counted(Count);

impl Wake for Counted {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

fn counted_waker() -> (Arc<Counted>, Waker) {
    let count = Arc::new(Counted(Count::new(0)));
    let waker = Waker::from(count.clone());
    (count, waker)
}

/// What one holder does: claims `inside` (a second holder would find it claimed) and
/// writes `cell` (loom reports a race unless the previous holder's write happened before).
struct Section {
    inside: Flag,
    cell: UnsafeCell<usize>,
}

// SAFETY: `cell` is only touched through `with_mut`, which loom tracks: two accesses not
// ordered by happens-before fail the model instead of racing (loom runs one thread at a time).
unsafe impl Sync for Section {}

impl Section {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            inside: Flag::new(false),
            cell: UnsafeCell::new(0),
        })
    }

    fn enter(&self) {
        assert!(!self.inside.swap(true, SeqCst), "two holders at once");
        // SAFETY: loom checks that no other access to the cell is concurrent with this.
        self.cell.with_mut(|n| unsafe { *n += 1 });
        self.inside.store(false, SeqCst);
    }
}

/// A thread that, like a request, takes the lane if it is free, enters `section`, lets go.
fn spawn_request(lane: &Lane, section: &Arc<Section>) -> thread::JoinHandle<()> {
    let (lane, section) = (lane.clone(), section.clone());
    thread::spawn(move || {
        if let Some(g) = lane.try_acquire() {
            section.enter();
            drop(g);
        }
    })
}

/// A request lets go while a waiter registers: the waiter takes the lane at once or is
/// woken, and then takes it.
fn a_waiter_racing_a_release_takes_the_lane_or_is_woken(poll_free: bool) {
    loom::model(move || {
        let lane = Lane::new();
        let guard = lane.try_acquire().unwrap();
        let releasing = thread::spawn(move || drop(guard));
        let (count, waker) = counted_waker();
        let mut cx = Context::from_waker(&waker);
        let mut acquire = lane.acquire();
        let first = if poll_free {
            lane.poll_free(&mut cx, |_| ()).is_ready()
        } else {
            Pin::new(&mut acquire).poll(&mut cx).is_ready()
        };
        releasing.join().unwrap();
        if !first {
            assert!(
                count.0.load(SeqCst) >= 1,
                "registered, never woken: lost wake"
            );
            let again = if poll_free {
                lane.poll_free(&mut cx, |_| ()).is_ready()
            } else {
                Pin::new(&mut acquire).poll(&mut cx).is_ready()
            };
            assert!(again, "woken, but the lane is still held");
        }
    });
}

#[test]
fn loom_a_release_racing_an_acquire_never_loses_the_wake() {
    a_waiter_racing_a_release_takes_the_lane_or_is_woken(false);
}

#[test]
fn loom_a_release_racing_a_poll_free_never_loses_the_wake() {
    a_waiter_racing_a_release_takes_the_lane_or_is_woken(true);
}

#[test]
fn loom_two_acquirers_never_both_hold_and_each_sees_the_others_writes() {
    loom::model(|| {
        let lane = Lane::new();
        let section = Section::new();
        let other = spawn_request(&lane, &section);
        let (_count, waker) = counted_waker();
        let mut cx = Context::from_waker(&waker);
        if let Poll::Ready(g) = Pin::new(&mut lane.acquire()).poll(&mut cx) {
            section.enter();
            drop(g);
        }
        other.join().unwrap();
    });
}

#[test]
fn loom_poll_free_never_runs_while_a_request_holds_the_lane() {
    loom::model(|| {
        let lane = Lane::new();
        let section = Section::new();
        let request = spawn_request(&lane, &section);
        let (count, waker) = counted_waker();
        let mut cx = Context::from_waker(&waker);
        let ran = lane.poll_free(&mut cx, |_| section.enter()).is_ready();
        request.join().unwrap();
        if !ran {
            assert!(count.0.load(SeqCst) >= 1, "poll_free waited, never woken");
            assert!(lane.poll_free(&mut cx, |_| section.enter()).is_ready());
        }
        assert!(!lane.is_held());
    });
}

#[test]
fn loom_two_poll_frees_and_a_request_take_turns() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(|| {
        let lane = Lane::new();
        let section = Section::new();
        let request = spawn_request(&lane, &section);
        let (l, s) = (lane.clone(), section.clone());
        let polling = thread::spawn(move || {
            let (_count, waker) = counted_waker();
            let _ = l.poll_free(&mut Context::from_waker(&waker), |_| s.enter());
        });
        let (_count, waker) = counted_waker();
        let _ = lane.poll_free(&mut Context::from_waker(&waker), |_| section.enter());
        request.join().unwrap();
        polling.join().unwrap();
    });
}

#[test]
fn loom_the_next_holder_sees_the_bytes_the_last_one_kept() {
    loom::model(|| {
        let lane = Lane::new();
        let kept = Arc::new(Flag::new(false));
        let (l, k) = (lane.clone(), kept.clone());
        let abandoned = thread::spawn(move || {
            if let Some(mut g) = l.try_acquire() {
                g.keep(b"x");
                k.store(true, SeqCst);
                drop(g);
            }
        });
        if let Some(mut g) = lane.try_acquire() {
            let expect = kept.load(SeqCst);
            assert_eq!(g.has_leftover(), expect, "the LEFTOVER bit lags the bytes");
            let (n, _) = g.take_leftover(Vec::with_capacity(4));
            assert_eq!(n, usize::from(expect));
            assert!(!g.has_leftover());
        }
        abandoned.join().unwrap();
    });
}

/// A queued waiter, a release and a newcomer race: the lane goes to the waiter (handed over,
/// never taken by the newcomer first), which is woken and then holds it.
#[test]
fn loom_a_release_hands_the_lane_to_the_queued_waiter_not_a_newcomer() {
    loom::model(|| {
        let lane = Lane::new();
        let guard = lane.try_acquire().unwrap();
        let (count, waker) = counted_waker();
        let mut cx = Context::from_waker(&waker);
        let mut waiting = lane.acquire();
        assert!(Pin::new(&mut waiting).poll(&mut cx).is_pending(), "queued");
        let releasing = thread::spawn(move || drop(guard));
        let l = lane.clone();
        let newcomer = thread::spawn(move || l.try_acquire().is_some());
        releasing.join().unwrap();
        assert!(
            !newcomer.join().unwrap(),
            "a newcomer overtook the queued waiter"
        );
        assert!(count.0.load(SeqCst) >= 1, "handed over, never woken");
        let held = Pin::new(&mut waiting).poll(&mut cx);
        assert!(held.is_ready(), "woken, but the lane was not handed over");
        drop(held);
        assert!(!lane.is_held());
    });
}

/// A queued waiter is dropped while the holder lets go: the lane ends with the next waiter
/// (handed on if it had been handed to the dropped one), or free if there is none.
fn a_dropped_waiter_hands_the_lane_on(second_waiter: bool) {
    loom::model(move || {
        let lane = Lane::new();
        let guard = lane.try_acquire().unwrap();
        let (_count, waker) = counted_waker();
        let mut cx = Context::from_waker(&waker);
        let mut first = lane.acquire();
        assert!(Pin::new(&mut first).poll(&mut cx).is_pending());
        let mut second = lane.acquire();
        if second_waiter {
            assert!(Pin::new(&mut second).poll(&mut cx).is_pending());
        }
        let releasing = thread::spawn(move || drop(guard));
        drop(first);
        releasing.join().unwrap();
        if second_waiter {
            let held = Pin::new(&mut second).poll(&mut cx);
            assert!(held.is_ready(), "the lane was lost with the dropped waiter");
        } else {
            drop(second);
            assert!(!lane.is_held(), "the lane stayed held for a dropped waiter");
            assert!(lane.try_acquire().is_some());
        }
    });
}

#[test]
fn loom_a_waiter_dropped_during_a_release_hands_the_lane_to_the_next() {
    a_dropped_waiter_hands_the_lane_on(true);
}

#[test]
fn loom_a_lone_waiter_dropped_during_a_release_leaves_the_lane_free() {
    a_dropped_waiter_hands_the_lane_on(false);
}
