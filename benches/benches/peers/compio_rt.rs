//! compio: share-nothing, one single-threaded `compio::runtime::Runtime` per
//! thread. Work is handed to a thread as a `Send` closure that builds a
//! (possibly `!Send`) future there, and every task that future spawns with
//! `compio::runtime::spawn` stays on that thread. Cross-thread signals use
//! `futures::channel` (what compio's own tests use to wake a runtime from
//! another thread), since compio ships no channel.
//!
//! The future runs either as a spawned task ([`Threads::spawn_task_on`], the
//! default for every workload) or as the runtime's `block_on` future itself
//! ([`Threads::spawn_on`], like a `#[compio::main]` body). Each is compio's
//! faster path for some workloads, measured here with compio 0.18:
//! - a `block_on` future woken from a task on its own thread costs one
//!   `io_uring_enter(GETEVENTS, min_complete = 1)` with a zero timeout, which
//!   returns ETIME after ~20 us on this VM, per wake: a same-thread
//!   ping-pong took ~22 us per round trip with the pinger as `block_on` future
//!   and ~0.9 us with both as spawned tasks. So drivers that await many local
//!   tasks, or that wake themselves (timer_churn), run as spawned tasks;
//! - woken from another thread it is the other way round: ~29 us per round
//!   trip between two `block_on` futures on two CPUs, ~75 us between two
//!   spawned tasks. So the cross-thread pinned variants (ping_pong_rtt
//!   pinned_parked, idle_wake_latency) run as `block_on` futures.
//!
//! Each compio figure is thus the better of its two ways of running the code.
//!
//! API read from docs.rs/compio 0.18 (runtime::{Runtime, RuntimeBuilder::
//! thread_affinity, spawn, JoinHandle}, time::{sleep, timeout},
//! fs::{File::open, read}, io::AsyncReadAt) and from the compio-rs/compio
//! repository (compio/benches/fs.rs, compio/tests/runtime.rs).

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc as std_mpsc;
use std::thread;

use ringsteal_benches::cpu_for;

type Job = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = ()>>> + Send>;

/// `n` threads, each running its own compio runtime (io_uring driver).
/// A runtime with nothing to run parks in `io_uring_enter`; compio has no
/// spin-before-park setting.
pub(crate) struct Threads {
    txs: Vec<std_mpsc::Sender<Job>>,
    joins: Vec<thread::JoinHandle<()>>,
}

impl Threads {
    /// Starts `n` threads with one compio runtime each, no CPU affinity.
    pub(crate) fn new(n: usize) -> Self {
        Self::start(n, false)
    }

    /// Starts `n` threads with one compio runtime each, thread `i` bound to
    /// CPU `cpu_for(i)` through `RuntimeBuilder::thread_affinity`.
    pub(crate) fn pinned_to_cpus(n: usize) -> Self {
        Self::start(n, true)
    }

    fn start(n: usize, pin: bool) -> Self {
        let mut txs = Vec::new();
        let mut joins = Vec::new();
        for i in 0..n {
            let (tx, rx) = std_mpsc::channel::<Job>();
            let join = thread::Builder::new()
                .name(format!("compio-{i}"))
                .spawn(move || {
                    let mut builder = compio::runtime::RuntimeBuilder::new();
                    if pin {
                        builder.thread_affinity(HashSet::from([cpu_for(i)]));
                    }
                    let rt = builder.build().expect("compio runtime");
                    while let Ok(job) = rx.recv() {
                        rt.block_on(job());
                    }
                })
                .expect("spawn compio thread");
            txs.push(tx);
            joins.push(join);
        }
        Self { txs, joins }
    }

    /// Number of threads.
    pub(crate) fn len(&self) -> usize {
        self.txs.len()
    }

    /// Runs `make()` on thread `t`; the receiver yields its output.
    pub(crate) fn spawn_on<M, F>(&self, t: usize, make: M) -> std_mpsc::Receiver<F::Output>
    where
        M: FnOnce() -> F + Send + 'static,
        F: Future + 'static,
        F::Output: Send + 'static,
    {
        let (tx, rx) = std_mpsc::sync_channel(1);
        let job: Job = Box::new(move || {
            Box::pin(async move {
                let out = make().await;
                let _ = tx.send(out);
            })
        });
        self.txs[t]
            .send(job)
            .unwrap_or_else(|_| panic!("compio thread {t} is gone"));
        rx
    }

    /// Runs `make()` on thread `t` as a task spawned there
    /// (`compio::runtime::spawn`) and awaited by the `block_on` future; the
    /// receiver yields its output. See the module docs for when to use which.
    pub(crate) fn spawn_task_on<M, F>(&self, t: usize, make: M) -> std_mpsc::Receiver<F::Output>
    where
        M: FnOnce() -> F + Send + 'static,
        F: Future + 'static,
        F::Output: Send + 'static,
    {
        self.spawn_on(t, move || async move {
            let fut = make();
            compio::runtime::spawn(fut)
                .await
                .unwrap_or_else(|p| std::panic::resume_unwind(p))
        })
    }

    /// Runs `make(t)` on every thread `t` as a spawned task (see
    /// [`Threads::spawn_task_on`]) and collects the outputs in order.
    pub(crate) fn run_on_all<M, F>(&self, make: M) -> Vec<F::Output>
    where
        M: Fn(usize) -> F + Clone + Send + 'static,
        F: Future + 'static,
        F::Output: Send + 'static,
    {
        let rxs: Vec<_> = (0..self.len())
            .map(|t| {
                let make = make.clone();
                self.spawn_task_on(t, move || make(t))
            })
            .collect();
        rxs.into_iter()
            .map(|rx| rx.recv().expect("compio job panicked"))
            .collect()
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        self.txs.clear();
        for j in self.joins.drain(..) {
            let _ = j.join();
        }
    }
}

/// Joins a compio task, re-raising its panic.
pub(crate) async fn join<T>(h: compio::runtime::JoinHandle<T>) -> T {
    h.await.unwrap_or_else(|p| std::panic::resume_unwind(p))
}

impl super::RuntimePerThread for Threads {
    fn run_on<M, F>(&self, t: usize, make: M) -> std_mpsc::Receiver<F::Output>
    where
        M: FnOnce() -> F + Send + 'static,
        F: Future + 'static,
        F::Output: Send + 'static,
    {
        self.spawn_on(t, make)
    }
}
