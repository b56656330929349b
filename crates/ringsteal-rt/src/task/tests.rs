//! Specifications of the task cell, state machine and join protocol, with a scheduler that
//! needs no runtime and no kernel, so they run under Miri (`scripts/miri.sh`).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use super::*;

thread_local! {
    static OWNED: OwnedTasks = OwnedTasks::new();
}

/// Queues woken tasks in a shared deque; "binds" tasks to the current thread's owner list.
#[derive(Clone, Default)]
struct TestScheduler {
    queue: Arc<Mutex<VecDeque<Notified>>>,
}

impl Schedule for TestScheduler {
    unsafe fn schedule(this: std::ptr::NonNull<Self>, task: Notified) {
        // SAFETY: the caller passes a live scheduler; the queue is cloned out before queuing.
        let queue = unsafe { this.as_ref() }.queue.clone();
        queue.lock().unwrap().push_back(task);
    }
    fn bind(&self, task: &TaskRef) {
        task.header().set_home(0);
        OWNED.with(|o| o.push(task));
    }
    fn release(&self, task: &TaskRef) {
        OWNED.with(|o| o.remove(task));
    }
}

impl TestScheduler {
    fn spawn<F: Future + 'static>(&self, f: F) -> JoinHandle<F::Output> {
        let (task, join) = new_task(f, self.clone(), HOME_UNSET);
        self.queue.lock().unwrap().push_back(task);
        join
    }

    /// Runs queued tasks until none is left.
    fn run(&self) -> usize {
        let mut n = 0;
        loop {
            let next = self.queue.lock().unwrap().pop_front();
            match next {
                Some(t) => {
                    t.run();
                    n += 1;
                }
                None => return n,
            }
        }
    }
}

/// Polls a future once with a waker that counts wakes.
fn poll_once<F: Future + Unpin>(f: &mut F, wakes: &Arc<CountingWaker>) -> Poll<F::Output> {
    let waker = Waker::from(wakes.clone());
    Pin::new(f).poll(&mut Context::from_waker(&waker))
}

#[derive(Default)]
struct CountingWaker(AtomicUsize);
impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Counts drops, to check futures and outputs are dropped exactly once.
#[derive(Clone, Default)]
struct DropCounter(Arc<AtomicUsize>);
struct Tracked(DropCounter);
impl Drop for Tracked {
    fn drop(&mut self) {
        self.0 .0.fetch_add(1, Ordering::SeqCst);
    }
}
impl DropCounter {
    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// A future that is pending until its shared slot says ready, storing its waker there.
#[derive(Clone, Default)]
struct Gate(Arc<Mutex<(bool, Option<Waker>)>>);
impl Gate {
    fn open(&self) {
        let w = {
            let mut g = self.0.lock().unwrap();
            g.0 = true;
            g.1.take()
        };
        if let Some(w) = w {
            w.wake();
        }
    }
    fn wait(&self) -> GateWait {
        GateWait(self.clone())
    }
}
struct GateWait(Gate);
impl Future for GateWait {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut g = (self.0).0.lock().unwrap();
        if g.0 {
            Poll::Ready(())
        } else {
            g.1 = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}

#[test]
fn a_task_runs_and_its_output_reaches_the_join_handle() {
    let s = TestScheduler::default();
    let mut join = s.spawn(async { 40 + 2 });
    assert_eq!(s.run(), 1);
    assert!(join.is_finished());
    let wakes = Arc::new(CountingWaker::default());
    assert_eq!(
        poll_once(&mut join, &wakes).map(Result::unwrap),
        Poll::Ready(42)
    );
}

#[test]
fn the_join_waker_is_woken_when_the_task_completes() {
    let s = TestScheduler::default();
    let gate = Gate::default();
    let g = gate.clone();
    let mut join = s.spawn(async move {
        g.wait().await;
        7
    });
    s.run();
    let wakes = Arc::new(CountingWaker::default());
    assert!(poll_once(&mut join, &wakes).is_pending());
    // A second poll with the same waker keeps it (will_wake), a different one replaces it.
    assert!(poll_once(&mut join, &wakes).is_pending());
    let other = Arc::new(CountingWaker::default());
    assert!(poll_once(&mut join, &other).is_pending());
    gate.open();
    s.run();
    assert_eq!(wakes.0.load(Ordering::SeqCst), 0);
    assert_eq!(other.0.load(Ordering::SeqCst), 1);
    assert_eq!(
        poll_once(&mut join, &other).map(Result::unwrap),
        Poll::Ready(7)
    );
}

#[test]
fn a_wake_during_the_poll_requeues_the_task_once() {
    let s = TestScheduler::default();
    let polls = Arc::new(AtomicUsize::new(0));
    let p = polls.clone();
    let join = s.spawn(std::future::poll_fn(move |cx| {
        if p.fetch_add(1, Ordering::SeqCst) < 3 {
            // Wake twice while running: only one requeue may result.
            cx.waker().wake_by_ref();
            #[allow(clippy::waker_clone_wake)] // waking by value is the behaviour under test
            cx.waker().clone().wake();
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }));
    assert_eq!(s.run(), 4);
    assert_eq!(polls.load(Ordering::SeqCst), 4);
    drop(join);
}

#[test]
fn aborting_an_idle_task_drops_its_future_and_reports_cancelled() {
    let s = TestScheduler::default();
    let drops = DropCounter::default();
    let t = Tracked(drops.clone());
    let mut join = s.spawn(async move {
        let _t = t;
        std::future::pending::<()>().await;
    });
    s.run();
    assert_eq!(drops.get(), 0);
    join.abort();
    assert_eq!(s.run(), 1, "abort queues the idle task once");
    assert_eq!(drops.get(), 1);
    let wakes = Arc::new(CountingWaker::default());
    match poll_once(&mut join, &wakes) {
        Poll::Ready(Err(e)) => assert!(e.is_cancelled()),
        _ => panic!("expected a cancelled error"),
    }
}

#[test]
fn aborting_before_the_first_poll_never_runs_the_future() {
    let s = TestScheduler::default();
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    let mut join = s.spawn(async move { r.fetch_add(1, Ordering::SeqCst) });
    join.abort();
    join.abort(); // twice is harmless
    s.run();
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    let wakes = Arc::new(CountingWaker::default());
    assert!(matches!(poll_once(&mut join, &wakes), Poll::Ready(Err(e)) if e.is_cancelled()));
}

#[test]
fn a_panic_is_caught_and_delivered_as_a_join_error() {
    let s = TestScheduler::default();
    let n = std::hint::black_box(1);
    let mut join = s.spawn(async move { panic!("boom {n}") });
    let mut ok = s.spawn(async { 1 });
    s.run();
    let wakes = Arc::new(CountingWaker::default());
    match poll_once(&mut join, &wakes) {
        Poll::Ready(Err(e)) => {
            assert!(e.is_panic());
            assert_eq!(
                e.to_string(),
                format!("task {} panicked with message \"boom 1\"", e.id())
            );
            assert_eq!(*e.into_panic().downcast::<String>().unwrap(), "boom 1");
        }
        _ => panic!("expected a panic error"),
    }
    assert!(matches!(poll_once(&mut ok, &wakes), Poll::Ready(Ok(1))));
}

#[test]
fn an_output_nobody_joins_is_dropped_by_the_runtime() {
    let s = TestScheduler::default();
    let drops = DropCounter::default();
    let d = drops.clone();
    drop(s.spawn(async move { Tracked(d) }));
    s.run();
    assert_eq!(drops.get(), 1);
}

#[test]
fn an_output_not_yet_read_is_dropped_with_the_join_handle() {
    let s = TestScheduler::default();
    let drops = DropCounter::default();
    let d = drops.clone();
    let join = s.spawn(async move { Tracked(d) });
    s.run();
    assert_eq!(drops.get(), 0, "the output waits for its reader");
    drop(join);
    assert_eq!(drops.get(), 1);
}

#[test]
fn an_abort_handle_outlives_the_join_handle() {
    let s = TestScheduler::default();
    let join = s.spawn(std::future::pending::<()>());
    let abort = join.abort_handle();
    let abort2 = abort.clone();
    drop(join);
    s.run();
    assert!(!abort.is_finished());
    abort2.abort();
    s.run();
    assert!(abort.is_finished());
}

#[test]
fn shutdown_cancels_started_tasks_and_drops_queued_ones() {
    let s = TestScheduler::default();
    let drops = DropCounter::default();
    let (a, b) = (Tracked(drops.clone()), Tracked(drops.clone()));
    let mut started = s.spawn(async move {
        let _a = a;
        std::future::pending::<()>().await;
    });
    s.run();
    let mut queued = s.spawn(async move {
        let _b = b;
    });
    // Shut down: cancel what the owner list holds, drop what the queue holds.
    while let Some(t) = OWNED.with(OwnedTasks::pop) {
        shutdown(t);
    }
    let left: Vec<_> = s.queue.lock().unwrap().drain(..).collect();
    drop(left);
    assert_eq!(drops.get(), 2);
    let wakes = Arc::new(CountingWaker::default());
    assert!(matches!(poll_once(&mut started, &wakes), Poll::Ready(Err(e)) if e.is_cancelled()));
    assert!(matches!(poll_once(&mut queued, &wakes), Poll::Ready(Err(e)) if e.is_cancelled()));
}

#[test]
fn a_waker_kept_after_completion_frees_the_task_when_dropped() {
    let s = TestScheduler::default();
    let kept: Arc<Mutex<Option<Waker>>> = Arc::default();
    let k = kept.clone();
    let join = s.spawn(std::future::poll_fn(move |cx| {
        *k.lock().unwrap() = Some(cx.waker().clone());
        Poll::Ready(())
    }));
    s.run();
    drop(join);
    let w = kept.lock().unwrap().take().unwrap();
    w.wake_by_ref(); // waking a completed task does nothing
    assert_eq!(s.run(), 0);
    drop(w); // the last reference: frees the task (Miri checks no leak and no double free)
}

#[test]
fn wakes_from_other_threads_race_with_polls_without_losing_one() {
    let s = TestScheduler::default();
    let counter = Arc::new(AtomicUsize::new(0));
    let shared_waker: Arc<Mutex<Option<Waker>>> = Arc::default();
    let (c, sw) = (counter.clone(), shared_waker.clone());
    const N: usize = if cfg!(miri) { 20 } else { 2000 };
    let join = s.spawn(std::future::poll_fn(move |cx| {
        *sw.lock().unwrap() = Some(cx.waker().clone());
        if c.load(Ordering::SeqCst) >= N {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }));
    s.run();
    let (c, sw) = (counter.clone(), shared_waker.clone());
    let waker_thread = std::thread::spawn(move || {
        for _ in 0..N {
            c.fetch_add(1, Ordering::SeqCst);
            let w = sw.lock().unwrap().clone();
            if let Some(w) = w {
                w.wake();
            }
        }
    });
    let local = RefCell::new(0);
    while !join.is_finished() {
        *local.borrow_mut() += s.run();
        std::thread::yield_now();
    }
    waker_thread.join().unwrap();
    s.run();
    assert!(join.is_finished());
}
