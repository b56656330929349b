//! Shared, runtime-agnostic pieces of the ringsteal benchmark suites.
//!
//! The criterion targets live in `benches/{scheduling,time,fs}.rs`. Everything
//! that names a peer runtime (tokio, compio, spargio) or the `io-uring` floor
//! lives next to them in `benches/peers/` and `benches/floors.rs`, because those
//! crates are dev-dependencies of this package and only bench targets may use
//! them. This library holds what every runtime shares: workload parameters and
//! result checks (`workloads`), the warm data files (`files`) and a few helpers
//! (`util`).

pub mod files;
pub mod util;
pub mod workloads;

/// Number of runtime threads every runtime gets (2 by default).
///
/// A work-stealing runtime gets one runtime with this many worker threads; a
/// share-nothing runtime (compio) gets this many single-threaded runtimes, one
/// per thread. Override with `RINGSTEAL_BENCH_THREADS`.
pub fn threads() -> usize {
    std::env::var("RINGSTEAL_BENCH_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| n >= 1)
        .unwrap_or(2)
}
