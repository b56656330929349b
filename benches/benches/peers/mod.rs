//! How each peer runtime is started and driven by the criterion suites.
//!
//! These modules live beside the bench targets (not in `src/`) because the peer
//! crates are dev-dependencies of `ringsteal-benches`, which only bench and test
//! targets may use. Each bench target includes the whole module and uses part
//! of it, hence the `dead_code` allowance.
//!
//! Common rules (see `benches/NOTES.md`):
//! - every runtime gets `ringsteal_benches::threads()` threads (2 by default);
//!   a share-nothing runtime (compio) gets one single-threaded runtime per thread;
//! - timing is taken inside the runtime's own threads, never around the
//!   criterion thread's wait for a reply, so dispatch and reply wakes stay
//!   outside the measurement. For work on several threads each thread records
//!   its start (after a common barrier) and end, and the time is the makespan
//!   ([`makespan`]);
//! - a runtime is built right before its benchmarks and dropped right after:
//!   spargio's shards busy-poll while alive and would steal CPU from the others.
//!
//! - the runtimes of a group (and its floors) are [`Entry`]s run in a rotated
//!   order ([`run_rotated`], `ringsteal_benches::order`), not ringsteal first.
//!
//! ringsteal itself is driven through `ringsteal_rt.rs` (its runtime variants,
//! joining, stats).

#![allow(dead_code)]

pub(crate) mod compio_rt;
pub(crate) mod ringsteal_rt;
pub(crate) mod spargio_rt;
pub(crate) mod tokio_rt;

use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::BenchmarkGroup;
use ringsteal_benches::order;

/// A criterion group of wall-clock benchmarks.
pub(crate) type Group<'g> = BenchmarkGroup<'g, WallTime>;

/// One runtime's (or one floor's) part of a group: it builds its runtime, registers its
/// benchmarks on the group (criterion runs each as it is registered) and drops the
/// runtime again, so no two runtimes are alive at once.
pub(crate) struct Entry<'a> {
    name: String,
    run: Box<dyn FnOnce(&mut Group<'_>) + 'a>,
}

/// An [`Entry`] named `name` (used only to print the order: the runtime's or floor's
/// benchmark id within the group).
pub(crate) fn entry<'a>(
    name: impl Into<String>,
    run: impl FnOnce(&mut Group<'_>) + 'a,
) -> Entry<'a> {
    Entry {
        name: name.into(),
        run: Box::new(run),
    }
}

/// Runs `entries` on `g` in the order rotated by the run's seed and `key` (the group, or
/// the group and variant: each rotates on its own), and prints that order to stderr so a
/// run's log records it.
pub(crate) fn run_rotated(g: &mut Group<'_>, key: &str, entries: Vec<Entry<'_>>) {
    let seed = order::seed();
    let entries = order::rotated(entries, seed, key);
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    eprintln!(
        "run order of {key} ({}={seed}): {}",
        order::SEED_VAR,
        names.join(", ")
    );
    for e in entries {
        (e.run)(g);
    }
}

/// Threads with one single-threaded runtime each (tokio's `current_thread`, compio's),
/// where a `Send` closure builds a future that runs there as the runtime's `block_on`
/// future, so it and the tasks it spawns stay on that thread.
pub(crate) trait RuntimePerThread {
    /// Runs `make()` on thread `t`; the receiver yields its output.
    fn run_on<M, F>(&self, t: usize, make: M) -> std::sync::mpsc::Receiver<F::Output>
    where
        M: FnOnce() -> F + Send + 'static,
        F: std::future::Future + 'static,
        F::Output: Send + 'static;
}

/// Start and end instants of the work one thread did.
pub(crate) type Span = (Instant, Instant);

/// Time from the earliest start to the latest end of `spans`.
pub(crate) fn makespan(spans: &[Span]) -> Duration {
    let start = spans.iter().map(|s| s.0).min().expect("no spans");
    let end = spans.iter().map(|s| s.1).max().expect("no spans");
    end.duration_since(start)
}
