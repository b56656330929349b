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
//! ringsteal itself is driven through `ringsteal_rt.rs` (its runtime variants,
//! joining, stats) and runs first in every group.

#![allow(dead_code)]

pub(crate) mod compio_rt;
pub(crate) mod ringsteal_rt;
pub(crate) mod spargio_rt;
pub(crate) mod tokio_rt;

use std::time::{Duration, Instant};

/// Start and end instants of the work one thread did.
pub(crate) type Span = (Instant, Instant);

/// Time from the earliest start to the latest end of `spans`.
pub(crate) fn makespan(spans: &[Span]) -> Duration {
    let start = spans.iter().map(|s| s.0).min().expect("no spans");
    let end = spans.iter().map(|s| s.1).max().expect("no spans");
    end.duration_since(start)
}
