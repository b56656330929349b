//! # ringsteal
//!
//! A work-stealing, multi-shard async runtime for Rust on Linux io_uring.
//!
//! * One io_uring per shard thread; shards wake and feed each other by posting completions
//!   into each other's rings (`IORING_OP_MSG_RING`), with an eventfd as the fallback.
//! * Every task is placed by policy ([`Placement`]): `Pinned`, `Sticky`, `Stealable`,
//!   `StealablePreferred`, `RoundRobin`. Idle shards steal queued work before it starts;
//!   once polled, a task stays on its shard, where its I/O lives.
//! * Files on io_uring with owned buffers ([`fs`], [`buf`]), every request a future with
//!   cancel-on-drop, links and deadlines ([`op`]).
//! * TCP, UDP and Unix sockets ([`net`], feature `net`) and owned-buffer I/O traits with
//!   `copy`, `BufReader`, `BufWriter` and length-delimited frames ([`io`]).
//! * The ecosystem: `futures-io` and `tokio::io` traits over the streams (`io::compat`,
//!   features `futures-io`, `tokio-io`), hyper 1.x (`ringsteal::hyper`, feature `hyper`),
//!   and no tokio runtime anywhere.
//! * Child processes waited for through pidfds (`ringsteal::process`, feature `process`) and
//!   Unix signals read through the ring (`ringsteal::signal`, feature `signal`).
//! * Timers in a per-shard wheel ([`time`]), blocking pool ([`spawn_blocking`]), `!Send`
//!   local tasks ([`spawn_local`]), a [`RuntimeHandle`] to spawn from anywhere, and
//!   [`stats`](RuntimeHandle::stats).
//!
//! ```
//! use ringsteal::{Placement, Runtime};
//!
//! let rt = Runtime::builder().shards(2).build()?;
//! let total = rt.block_on(async {
//!     let tasks: Vec<_> = (0..8u64)
//!         .map(|i| ringsteal::spawn_with(Placement::RoundRobin, async move { i * i }))
//!         .collect();
//!     let mut sum = 0;
//!     for t in tasks {
//!         sum += t.await.unwrap();
//!     }
//!     sum
//! });
//! assert_eq!(total, 140);
//! # Ok::<(), ringsteal::BuildError>(())
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub use ringsteal_rt::{
    current_shard, recv_msg, spawn, spawn_blocking, spawn_local, spawn_with, try_recv_msg,
    try_spawn_with, yield_now, AbortHandle, BuildError, Builder, EnterGuard, Feature, IdleStrategy,
    JoinError, JoinHandle, KernelFeatures, Placement, RecvMsg, RingMode, Runtime, RuntimeHandle,
    RuntimeStats, ShardStats, SpawnError, WakeMechanism, YieldNow,
};

/// Timers: `sleep`, `timeout`, `interval` (see [`ringsteal_rt::time`]).
pub mod time {
    pub use ringsteal_rt::time::*;
}

/// Cancellation tokens.
pub mod sync {
    pub use ringsteal_rt::sync::*;
}

/// Task handles and groups.
pub mod task {
    pub use ringsteal_rt::task::*;
}

/// Files and directories on io_uring (see [`ringsteal_fs`]).
pub mod fs {
    pub use ringsteal_fs::*;
}

/// TCP, UDP and Unix-domain sockets on io_uring (see [`ringsteal_net`]; feature `net`, on
/// by default).
#[cfg(feature = "net")]
pub mod net {
    pub use ringsteal_net::*;
}

/// Owned-buffer I/O traits and helpers: [`AsyncReadOwned`](io::AsyncReadOwned),
/// [`AsyncWriteOwned`](io::AsyncWriteOwned), [`copy`](io::copy), [`BufReader`](io::BufReader),
/// [`BufWriter`](io::BufWriter), [`LengthDelimited`](io::LengthDelimited).
pub mod io {
    pub use ringsteal_rt::io::*;

    /// Poll-based adapters (features `futures-io`, `tokio-io`, `hyper`):
    /// [`PollIo`](compat::PollIo) gives a stream `futures_io`'s, `tokio::io`'s and
    /// `hyper::rt`'s read and write traits, on io_uring readiness (see
    /// [`ringsteal_compat`]).
    #[cfg(any(feature = "futures-io", feature = "tokio-io", feature = "hyper"))]
    pub mod compat {
        pub use ringsteal_compat::PollIo;
    }
}

/// hyper 1.x on ringsteal (feature `hyper`): [`Executor`](hyper::Executor),
/// [`LocalExecutor`](hyper::LocalExecutor), [`Timer`](hyper::Timer) and [`Io`](hyper::Io)
/// (see [`ringsteal_compat::hyper`]). Always give hyper the timer.
#[cfg(feature = "hyper")]
pub mod hyper {
    pub use ringsteal_compat::hyper::*;
}

/// Child processes (feature `process`): [`Command`](process::Command) as std's, a
/// [`Child`](process::Child) waited for through its pidfd (`IORING_OP_WAITID`), and its pipes
/// read and written through the ring (see [`ringsteal_process`]).
#[cfg(feature = "process")]
pub mod process {
    pub use ringsteal_process::*;
}

/// Unix signals (feature `signal`): [`ctrl_c`](signal::ctrl_c),
/// [`signal`](signal::signal) streams and [`shutdown_signal`](signal::shutdown_signal) for
/// graceful shutdown (see [`ringsteal_signal`]).
#[cfg(feature = "signal")]
pub mod signal {
    pub use ringsteal_signal::*;
}

/// Owned buffers for I/O: [`IoBuf`](buf::IoBuf), [`IoBufMut`](buf::IoBufMut),
/// [`BufResult`](buf::BufResult).
pub mod buf {
    pub use ringsteal_rt::buf::*;
}

/// The low-level operation API: every io_uring request as a future ([`Op`](op::Op)).
pub mod op {
    pub use ringsteal_rt::op::*;
}

/// The io_uring binding ringsteal is built on, for probing and raw use.
pub mod uring {
    pub use ringsteal_uring::*;
}

/// The chapters of the book (`book/src`), so that their Rust code blocks are compiled and run
/// by `cargo test --doc`.
#[cfg(doctest)]
mod book {
    #[doc = include_str!("../../../README.md")]
    struct Readme;
    #[doc = include_str!("../../../book/src/getting-started.md")]
    struct GettingStarted;
    #[doc = include_str!("../../../book/src/runtime.md")]
    struct Runtime;
    #[doc = include_str!("../../../book/src/placement.md")]
    struct Placement;
    #[doc = include_str!("../../../book/src/time.md")]
    struct Time;
    #[doc = include_str!("../../../book/src/fs.md")]
    struct Fs;
    #[cfg(feature = "net")]
    #[doc = include_str!("../../../book/src/net.md")]
    struct Net;
    #[cfg(all(feature = "hyper", feature = "tokio-io"))]
    #[doc = include_str!("../../../book/src/coming-from-tokio.md")]
    struct ComingFromTokio;
    #[doc = include_str!("../../../book/src/requirements.md")]
    struct Requirements;
    #[cfg(all(feature = "process", feature = "signal"))]
    #[doc = include_str!("../../../book/src/process-signal.md")]
    struct ProcessSignal;
}
