//! Shared, runtime-agnostic pieces of the ringsteal benchmark suites.
//!
//! The criterion targets live in `benches/{scheduling,time,fs,net,...}.rs`. Everything
//! that names a peer runtime (tokio, compio, spargio) or the `io-uring` floor
//! lives next to them in `benches/peers/` and `benches/floors.rs`, because those
//! crates are dev-dependencies of this package and only bench targets may use
//! them. This library holds what every runtime shares: workload parameters and
//! result checks (`workloads`), the warm data files (`files`), the rotated run
//! order of a group's runtimes (`order`) and a few helpers (`util`); for the networking
//! suite, the HTTP application and `examples/http_server`'s server on the examples' HTTP
//! library (`http`) and the std servers, the wrk driver and the checking client (`net`).

pub mod files;
pub mod http;
pub mod net;
pub mod order;
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

/// CPU that thread `i` of a CPU-pinned benchmark is bound to: `i` modulo the
/// number of CPUs this process may run on.
///
/// Only the *pinned* variants (`ping_pong_rtt/pinned_*`, `idle_wake_latency`)
/// bind threads to CPUs, every runtime through its own affinity setting (or
/// `sched_setaffinity` where it has none). On this 2-vCPU VM an unbound pair of
/// threads is sometimes scheduled on one CPU (a ~5 us round trip) and
/// sometimes on two (~45 us), which makes unbound figures bimodal; binding
/// thread 0 to CPU 0 and thread 1 to CPU 1 measures the cross-CPU case every
/// time.
pub fn cpu_for(i: usize) -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    i % cpus
}

/// Binds the calling thread to CPU `cpu` (`sched_setaffinity`).
pub fn bind_current_thread(cpu: usize) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU_SET writes one bit inside `set`; `cpu` is below CPU_SETSIZE
    // for any CPU this process can see.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 = this thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
