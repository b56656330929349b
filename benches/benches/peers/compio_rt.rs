//! compio: share-nothing, one single-threaded `compio::runtime::Runtime` per
//! thread. Work is handed to a thread as a `Send` closure that builds a
//! (possibly `!Send`) future there, and the future is spawned with
//! `compio::runtime::spawn`, so it, and every task it spawns, stays on that
//! thread. Cross-thread signals use `futures::channel` (what compio's own tests
//! use to wake a runtime from another thread), since compio ships no channel.
//!
//! API read from docs.rs/compio 0.18 (runtime::{Runtime, RuntimeBuilder, spawn,
//! JoinHandle}, time::{sleep, timeout}, fs::{File, read}, io::AsyncReadAt) and
//! from the compio-rs/compio repository (benches/fs.rs, tests/runtime.rs).

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc as std_mpsc;
use std::thread;

use futures::channel::mpsc;
use futures::StreamExt;

type Job = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = ()>>> + Send>;

/// `n` threads, each running its own compio runtime (io_uring driver).
/// A thread with nothing to run parks in `io_uring_enter`; compio has no
/// spin-before-park setting.
pub struct Threads {
    txs: Vec<mpsc::UnboundedSender<Job>>,
    joins: Vec<thread::JoinHandle<()>>,
}

impl Threads {
    /// Starts `n` threads with one compio runtime each.
    pub fn new(n: usize) -> Self {
        let mut txs = Vec::new();
        let mut joins = Vec::new();
        for i in 0..n {
            let (tx, mut rx) = mpsc::unbounded::<Job>();
            let join = thread::Builder::new()
                .name(format!("compio-{i}"))
                .spawn(move || {
                    let rt = compio::runtime::Runtime::new().expect("compio runtime");
                    rt.block_on(async move {
                        while let Some(job) = rx.next().await {
                            compio::runtime::spawn(job()).detach();
                        }
                    });
                })
                .expect("spawn compio thread");
            txs.push(tx);
            joins.push(join);
        }
        Self { txs, joins }
    }

    /// Number of threads.
    pub fn len(&self) -> usize {
        self.txs.len()
    }

    /// Spawns `make()` as a task on thread `t`; the receiver yields its output.
    pub fn spawn_on<M, F>(&self, t: usize, make: M) -> std_mpsc::Receiver<F::Output>
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
        self.txs[t].unbounded_send(job).unwrap_or_else(|_| panic!("compio thread {t} is gone"));
        rx
    }

    /// Runs `make(t)` on every thread `t` and collects the outputs in order.
    pub fn run_on_all<M, F>(&self, make: M) -> Vec<F::Output>
    where
        M: Fn(usize) -> F + Clone + Send + 'static,
        F: Future + 'static,
        F::Output: Send + 'static,
    {
        let rxs: Vec<_> = (0..self.len())
            .map(|t| {
                let make = make.clone();
                self.spawn_on(t, move || make(t))
            })
            .collect();
        rxs.into_iter().map(|rx| rx.recv().expect("compio job panicked")).collect()
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
pub async fn join<T>(h: compio::runtime::JoinHandle<T>) -> T {
    h.await.unwrap_or_else(|p| std::panic::resume_unwind(p))
}
