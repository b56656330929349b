//! [`BlockingPool`]: a queue and up to `max` threads, each kept alive for a while when idle.
//! Never a thread per call: a closure waits in the queue when every thread is busy and the
//! pool is at its maximum.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::shared::config::{Config, ThreadHook, ThreadNameFn};
use crate::task::Notified;
use crate::util::affinity::CpuMask;
use crate::util::sigmask::SignalMask;

/// What a pool thread needs from the runtime it serves: the pool, and the context the thread
/// enters so that the closures it runs find their runtime (`RuntimeHandle::current`).
/// The runtime's `Shared` implements it (`blocking/mod.rs`): the pool is part of `Shared`,
/// so this file may not name it (ADR-0016).
pub(crate) trait PoolHost: Send + Sync + 'static {
    /// Held by a pool thread for as long as it runs.
    type Entered;
    /// The pool of this runtime.
    fn pool(&self) -> &BlockingPool;
    /// Makes `this` the current runtime of the calling (pool) thread until the guard drops.
    fn enter(this: Arc<Self>) -> Self::Entered;
    /// A closure this pool ran has returned (after [`BlockingPool::pending`] counted it out).
    fn closure_finished(&self);
}

struct State {
    queue: VecDeque<Notified>,
    /// Threads waiting for work that no `push` has claimed yet.
    idle: usize,
    /// Wakeups handed out by `push` (each took one thread off `idle`) and not yet taken by a
    /// waiting thread. A thread that wakes and finds none timed out or woke spuriously.
    num_notify: usize,
    /// Threads that may still take work from the queue: what `max` bounds.
    threads: usize,
    /// Threads that left for good and are running their stop hook: no longer counted in
    /// `threads` (a push must not count on one), but waited for by shutdown.
    exiting: usize,
    shutdown: bool,
    /// Join handles of live threads, by thread id; a retiring thread drops its own.
    handles: Vec<(usize, std::thread::JoinHandle<()>)>,
    next_id: usize,
}

pub(crate) struct BlockingPool {
    state: Mutex<State>,
    work: Condvar,
    exited: Condvar,
    max: usize,
    keep_alive: Duration,
    name: String,
    /// `Builder::thread_name_fn`, which names threads instead of `name` when set.
    name_fn: Option<ThreadNameFn>,
    spawned: AtomicU64,
    alive: AtomicUsize,
    /// Closures queued or running: a paused clock does not auto-advance past them.
    pending: AtomicUsize,
    /// The signal mask of the thread that built the runtime: every pool thread takes it,
    /// not the mask of the thread that happened to start it (see `util/sigmask.rs`).
    signal_mask: SignalMask,
    /// Likewise its CPU mask: a pinned shard that starts a pool thread would otherwise
    /// confine it to the shard's CPU (see `util/affinity.rs`).
    cpu_mask: CpuMask,
    /// The builder's `on_thread_start` and `on_thread_stop`.
    on_start: Option<ThreadHook>,
    on_stop: Option<ThreadHook>,
    /// The builder's `thread_stack_size`.
    stack_size: Option<usize>,
}

impl BlockingPool {
    /// A pool whose threads will run with the calling thread's signal and CPU masks: call it
    /// on the thread that builds the runtime.
    pub(crate) fn new(config: &Config) -> Self {
        Self {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                idle: 0,
                num_notify: 0,
                threads: 0,
                exiting: 0,
                shutdown: false,
                handles: Vec::new(),
                next_id: 0,
            }),
            work: Condvar::new(),
            exited: Condvar::new(),
            max: config.blocking_threads,
            keep_alive: config.blocking_keep_alive,
            name: format!("{}-blocking", config.thread_name),
            name_fn: config.thread_name_fn.clone(),
            spawned: AtomicU64::new(0),
            alive: AtomicUsize::new(0),
            pending: AtomicUsize::new(0),
            signal_mask: SignalMask::of_this_thread(),
            cpu_mask: CpuMask::of_this_thread(),
            on_start: config.on_thread_start.clone(),
            on_stop: config.on_thread_stop.clone(),
            stack_size: config.thread_stack_size,
        }
    }

    pub(crate) fn spawned(&self) -> u64 {
        self.spawned.load(Relaxed)
    }

    pub(crate) fn threads(&self) -> usize {
        self.alive.load(Relaxed)
    }

    /// Closures queued or running (SeqCst: read by a shard after publishing `sleeping`).
    pub(crate) fn pending(&self) -> usize {
        self.pending.load(SeqCst)
    }

    /// Queues a blocking task; starts a thread if none is idle and the pool is not full.
    pub(crate) fn push<H: PoolHost>(&self, host: &Arc<H>, task: Notified) {
        self.spawned.fetch_add(1, Relaxed);
        let mut st = self.state.lock();
        if st.shutdown {
            drop(st);
            drop(task); // never runs: its JoinHandle sees a cancelled error
            return;
        }
        self.pending.fetch_add(1, SeqCst);
        st.queue.push_back(task);
        if st.idle > 0 {
            // This thread is now spoken for: the next push must not count on it too (two
            // pushes sharing one idle thread run one after the other, or deadlock if the first
            // waits for the second).
            st.idle -= 1;
            st.num_notify += 1;
            drop(st);
            self.work.notify_one();
            return;
        }
        if st.threads < self.max {
            st.threads += 1;
            st.next_id += 1;
            let id = st.next_id;
            let name = ThreadNameFn::name(&self.name_fn, || format!("{}-{}", self.name, id));
            let host = host.clone();
            match crate::util::thread_builder(name, self.stack_size).spawn(move || worker(host, id))
            {
                Ok(h) => {
                    self.alive.fetch_add(1, Relaxed);
                    // Under the lock, so the thread finds its handle if it retires.
                    st.handles.push((id, h));
                }
                Err(_) => {
                    // No thread now: the task waits for a busy thread to free up. With none
                    // at all, nothing would ever run it (a later spawn may fail the same
                    // way): it is dropped instead, and its JoinHandle yields a cancelled
                    // error rather than waiting for ever. (tokio panics here.)
                    st.threads -= 1;
                    if st.threads == 0 {
                        let task = st.queue.pop_back();
                        self.pending.fetch_sub(1, SeqCst);
                        drop(st);
                        drop(task);
                    }
                }
            }
        }
    }

    /// Stops the pool: queued closures are dropped (their handles see a cancelled error);
    /// running ones are waited for, until `deadline` if given.
    pub(crate) fn shutdown(&self, deadline: Option<Instant>) {
        let (queued, handles) = {
            let mut st = self.state.lock();
            st.shutdown = true;
            (
                std::mem::take(&mut st.queue),
                std::mem::take(&mut st.handles),
            )
        };
        self.work.notify_all();
        self.pending.fetch_sub(queued.len(), SeqCst);
        drop(queued);
        let mut st = self.state.lock();
        while st.threads + st.exiting > 0 {
            match deadline {
                Some(d) => {
                    if self.exited.wait_until(&mut st, d).timed_out() {
                        break;
                    }
                }
                None => self.exited.wait(&mut st),
            }
        }
        let all_exited = st.threads + st.exiting == 0;
        drop(st);
        if all_exited {
            for (_, h) in handles {
                let _ = h.join();
            }
        }
        // Threads still running past the deadline are detached; they exit when their closure
        // returns.
    }
}

impl BlockingPool {
    /// A closure finished: the host may have been waiting for that (a paused clock does not
    /// auto-advance past queued or running closures).
    fn finished_one<H: PoolHost>(&self, host: &H) {
        self.pending.fetch_sub(1, SeqCst);
        host.closure_finished();
    }
}

fn worker<H: PoolHost>(host: Arc<H>, id: usize) {
    let _enter = H::enter(host.clone());
    let pool = host.pool();
    pool.signal_mask.apply_to_this_thread();
    pool.cpu_mask.apply_to_this_thread();
    ThreadHook::run(&pool.on_start);
    let mut st = pool.state.lock();
    loop {
        if let Some(task) = st.queue.pop_front() {
            drop(st);
            task.run_as_current();
            pool.finished_one(&*host);
            st = pool.state.lock();
            continue;
        }
        if st.shutdown {
            break;
        }
        if !wait_for_work(pool, &mut st) {
            // Retiring while the pool runs on: drop (detach) our own handle so a long-lived
            // pool does not collect one per thread it ever started. Shutdown waits on
            // `threads` instead.
            if let Some(i) = st.handles.iter().position(|(h, _)| *h == id) {
                drop(st.handles.swap_remove(i));
            }
            break;
        }
    }
    // Off the count under the lock that saw the queue empty: from here this thread takes no
    // work, and a push that counted it would queue a closure nobody starts a thread for
    // (tokio's pool does the same). Still `exiting`, so that shutdown's wait covers the hook.
    st.threads -= 1;
    st.exiting += 1;
    drop(st);
    ThreadHook::run(&pool.on_stop);
    let mut st = pool.state.lock();
    st.exiting -= 1;
    pool.alive.fetch_sub(1, Relaxed);
    drop(st);
    pool.exited.notify_all();
}

/// Waits idle until a `push` hands this thread work (true), or the keep-alive passes or the
/// pool shuts down with none handed over (false). Timeouts and spurious wakeups are told from
/// a hand-off by `num_notify`.
fn wait_for_work(pool: &BlockingPool, st: &mut parking_lot::MutexGuard<'_, State>) -> bool {
    st.idle += 1;
    let deadline = crate::util::deadline_after(pool.keep_alive);
    loop {
        let timed_out = pool.work.wait_until(st, deadline).timed_out();
        if st.num_notify > 0 {
            // A hand-off (`push` already took us off `idle`); any waiting thread may take it.
            st.num_notify -= 1;
            return true;
        }
        if st.shutdown {
            st.idle -= 1;
            return false;
        }
        if timed_out {
            st.idle -= 1;
            // Queued work no push handed to anyone (its thread failed to start) keeps us.
            return !st.queue.is_empty();
        }
        // Spurious: wait on until the deadline.
    }
}

#[cfg(test)]
#[path = "pool_tests.rs"]
mod tests;
