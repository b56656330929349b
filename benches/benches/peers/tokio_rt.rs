//! tokio: a multi-thread runtime with `threads` workers, and, where a workload
//! needs tasks pinned to particular threads, one `current_thread` runtime per
//! thread (tokio's multi-thread scheduler cannot pin a task to a worker).
//!
//! API read from docs.rs/tokio (runtime::Builder, Runtime::block_on,
//! task::spawn, task::spawn_blocking,
//! time::{timeout, sleep}, fs::read and the fs module's "Tuning your file IO").

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc as std_mpsc;
use std::thread;

use ringsteal_benches::{bind_current_thread, cpu_for};
use tokio::runtime::{Builder, Runtime};

/// A multi-thread runtime with `threads` workers and all drivers enabled,
/// as `#[tokio::main(flavor = "multi_thread", worker_threads = N)]` builds it.
pub(crate) fn multi_thread(threads: usize) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .expect("tokio multi-thread runtime")
}

/// Runs `fut` as a task on one of `rt`'s workers (not on the criterion thread,
/// which `block_on` would use) and waits for its output.
pub(crate) fn run_on_worker<F>(rt: &Runtime, fut: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handle = rt.spawn(fut);
    rt.block_on(handle).expect("tokio driver task panicked")
}

type Job = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = ()>>> + Send>;

/// `n` threads, each bound to CPU `cpu_for(i)` and running its own
/// `current_thread` runtime. A job sent to a thread runs there as the
/// runtime's `block_on` future (like a `#[tokio::main(flavor =
/// "current_thread")]` body), so it and any task it spawns stay on that
/// thread. With nothing to run, the runtime parks in its driver (epoll).
pub(crate) struct PinnedThreads {
    txs: Vec<std_mpsc::Sender<Job>>,
    joins: Vec<thread::JoinHandle<()>>,
}

impl PinnedThreads {
    /// Starts `n` CPU-bound threads with one `current_thread` runtime each.
    pub(crate) fn new(n: usize) -> Self {
        let mut txs = Vec::new();
        let mut joins = Vec::new();
        for i in 0..n {
            let (tx, rx) = std_mpsc::channel::<Job>();
            let join = thread::Builder::new()
                .name(format!("tokio-ct-{i}"))
                .spawn(move || {
                    bind_current_thread(cpu_for(i)).expect("sched_setaffinity");
                    let rt = Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .expect("tokio current_thread runtime");
                    while let Ok(job) = rx.recv() {
                        rt.block_on(job());
                    }
                })
                .expect("spawn tokio thread");
            txs.push(tx);
            joins.push(join);
        }
        Self { txs, joins }
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
            .unwrap_or_else(|_| panic!("tokio thread {t} is gone"));
        rx
    }
}

impl Drop for PinnedThreads {
    fn drop(&mut self) {
        self.txs.clear();
        for j in self.joins.drain(..) {
            let _ = j.join();
        }
    }
}

impl super::RuntimePerThread for PinnedThreads {
    fn run_on<M, F>(&self, t: usize, make: M) -> std_mpsc::Receiver<F::Output>
    where
        M: FnOnce() -> F + Send + 'static,
        F: Future + 'static,
        F::Output: Send + 'static,
    {
        self.spawn_on(t, make)
    }
}
