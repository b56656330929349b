//! # ringsteal
//!
//! A work-stealing, multi-shard async runtime for Rust on Linux io_uring.
//!
//! A *shard* is one thread, the io_uring ring it alone submits to, and its run queues. Shards
//! wake and feed each other by posting completions into each other's rings
//! (`IORING_OP_MSG_RING`); a [`Placement`] decides where each task first runs, and an idle
//! shard steals queued work before it starts. Once polled, a task stays on its shard, where
//! its I/O lives.
//!
#![cfg_attr(all(feature = "macros", feature = "fs"), doc = "```")]
#![cfg_attr(not(all(feature = "macros", feature = "fs")), doc = "```ignore")]
//! use std::time::Duration;
//! use ringsteal::{time, Placement};
//!
//! #[ringsteal::main(shards = 2)]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // Spawn anywhere (stealable by default), or place a task explicitly.
//!     let answer = ringsteal::spawn(async { 6 * 7 });
//!     let pinned = ringsteal::spawn_with(Placement::Pinned(1), async { ringsteal::current_shard() });
//!     assert_eq!(answer.await?, 42);
//!     assert_eq!(pinned.await?, Some(1));
//!
//!     // Files on io_uring: a read takes the buffer and gives it back with the result.
//!     let path = std::env::temp_dir().join(format!("ringsteal-front-{}", std::process::id()));
//!     ringsteal::fs::write(&path, "hello").await?;
//!     let file = ringsteal::fs::File::open(&path).await?;
//!     let (n, buf) = file.read_at(Vec::with_capacity(16), 0).await;
//!     assert_eq!(&buf[..n?], b"hello");
//!     ringsteal::fs::remove_file(&path).await?;
//!
//!     // Timers live in each shard's wheel: no system call per timer.
//!     let late = time::timeout(Duration::from_millis(5), std::future::pending::<()>()).await;
//!     assert!(late.is_err());
//!     Ok(())
//! }
//! ```
//!
//! ## A server in ten lines
//!
//! An echo server: an accept loop, and each connection a task that copies what it reads back
//! to the client. Reads and writes are io_uring requests with owned buffers: the kernel holds
//! the buffer while it fills or sends it, and gives it back with the result. A `spawn` right
//! after an `accept` is dealt to the shards in turn, so every shard serves connections with
//! no placement named (the book's "Servers: every shard serves").
//!
#![cfg_attr(all(feature = "macros", feature = "net"), doc = "```")]
#![cfg_attr(not(all(feature = "macros", feature = "net")), doc = "```ignore")]
//! use ringsteal::net::{TcpListener, TcpStream};
//!
//! async fn serve(listener: TcpListener) -> std::io::Result<()> {
//!     loop {
//!         let (conn, _peer) = listener.accept().await?;
//!         ringsteal::spawn(async move {
//!             let (mut from, mut to) = (&conn, &conn); // reading and writing the same socket
//!             ringsteal::io::copy(&mut from, &mut to).await
//!         });
//!     }
//! }
//!
//! #[ringsteal::main]
//! async fn main() -> std::io::Result<()> {
//!     let listener = TcpListener::bind("127.0.0.1:0").await?; // port 0: any free port
//!     let addr = listener.local_addr()?;
//!     ringsteal::spawn(serve(listener));
//!
//!     // A client, to see it answer.
//!     let client = TcpStream::connect(addr).await?;
//!     client.write_all(b"hello".to_vec()).await.0?;
//!     let (res, echo) = client.read_exact(vec![0; 5]).await;
//!     res?;
//!     assert_eq!(echo, b"hello");
//!     Ok(())
//! }
//! ```
//!
//! The `http_server` example is the same shape serving HTTP/1.1 with keep-alive.
//!
//! ## What is in it
//!
//! * [`Runtime`] and its [`Builder`] (shards, idle spinning, wake mechanism, SQPOLL), or
//!   [`macro@main`] and [`macro@test`] to skip them; [`spawn`], [`spawn_with`] a
//!   [`Placement`], [`spawn_local`] for `!Send` futures, [`spawn_blocking`]; a
//!   [`RuntimeHandle`] to spawn from any thread and read [`stats`](RuntimeHandle::stats).
//! * [`time`]: `sleep`, `timeout`, `interval` in a per-shard microsecond wheel, and a paused
//!   clock for tests ([`time::pause`], [`time::advance`]).
//! * [`fs`]: files and directories with owned buffers; [`op`]: every io_uring request as a
//!   future that cancels itself in the kernel when dropped, links and deadlines; [`buf`]: the
//!   buffer traits.
//! * TCP, UDP and Unix sockets ([`net`], feature `net`) and owned-buffer I/O traits with
//!   `copy`, `BufReader`, `BufWriter` and length-delimited frames ([`io`]).
//! * The ecosystem: `futures-io` and `tokio::io` traits over the streams (`io::compat`,
//!   features `futures-io`, `tokio-io`), hyper 1.x (`ringsteal::hyper`, feature `hyper`),
//!   and no tokio runtime anywhere.
//! * Child processes waited for through pidfds (`ringsteal::process`, feature `process`) and
//!   Unix signals read through the ring (`ringsteal::signal`, feature `signal`).
//! * [`sync`] (`CancellationToken`), [`task`] (`TaskGroup`, handles), raw cross-shard messages
//!   ([`RuntimeHandle::send_msg`], [`recv_msg`]), and the io_uring binding itself ([`uring`]).
//!
//! ## Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `fs` | yes | [`fs`]: files and directories |
//! | `macros` | yes | [`macro@main`] and [`macro@test`] |
//! | `net` | yes | [`net`]: TCP, UDP and Unix sockets |
//! | `process` | no | `ringsteal::process`: child processes |
//! | `signal` | no | `ringsteal::signal`: Unix signals |
//! | `bytes` | no | owned-buffer impls for `bytes::Bytes` and `BytesMut` |
//! | `stream` | no | `futures_core::Stream` on `net::Incoming`, the receive streams, `time::Interval`, `signal::Signal`, `fs::ReadDir` |
//! | `futures-io` | no | `io::compat::PollIo`: `futures_io::AsyncRead`/`AsyncWrite` over the streams |
//! | `tokio-io` | no | `io::compat::PollIo`: `tokio::io::AsyncRead`/`AsyncWrite` (tokio's traits, no tokio runtime) |
//! | `hyper` | no | `ringsteal::hyper`: hyper 1.x's `Executor`, `Timer` and `Io` (with `tokio-io`, `TokioIo` for TLS streams and upgraded connections) |
//! | `full` | no | every feature above |
//!
//! The runtime, [`time`], [`sync`], [`task`], [`io`], [`op`], [`buf`] and [`uring`] are always
//! there.
//!
//! ## Where to go next
//!
//! * The book (`book/src` in the repository) walks through every part with code the tests
//!   run: getting started, writing a service (accept loop to graceful shutdown), placement
//!   and stealing, inside the scheduler, time and cancellation, I/O and owned buffers,
//!   files, networking, processes and signals, coming from tokio (hyper, axum, rustls and
//!   tokio's channels with no tokio runtime), io_uring features, performance tuning,
//!   operations and troubleshooting, benchmarks, status and roadmap.
//! * `cargo run --release --example tour` shows the runtime on your machine: what the kernel
//!   supports, placement, stealing, timers, files, messages, cancellation, an HTTP server on
//!   every shard under load, the counters.
//! * The other examples (`examples/` in the repository, each `cargo run --example NAME`), in
//!   tiers: `echo`, `cat`, `timer`, `ping_pong`; `concurrent_reads`, `tee`,
//!   `timeout_race`; `http_server`, `file_server`, `logger`; `sqpoll`, `linked_cat`,
//!   `multishot_accept`; `work_stealing`; `subprocess`, `graceful_shutdown`; `hyper_server`,
//!   `axum_server`, `hyper_client`, `tls_echo` (the ecosystem); `http_placement`,
//!   `send_zc_threshold` (measuring harnesses). The README says what each one shows.
//! * Requirements: Linux 5.15 or newer with io_uring enabled; when it is not (a container's
//!   seccomp profile, `kernel.io_uring_disabled`, locked-memory limits), building the
//!   runtime returns an error that names the cause and the fix.

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]
// The crate docs link to `fs`, `net` and the macros; built without those features, the links
// render as plain text instead of failing the docs.
#![cfg_attr(
    not(all(feature = "fs", feature = "net", feature = "macros")),
    allow(rustdoc::broken_intra_doc_links)
)]

pub use ringsteal_rt::{
    current_shard, recv_msg, spawn, spawn_blocking, spawn_local, spawn_with, spread_next_spawn,
    try_recv_msg, try_spawn_with, yield_now, AbortHandle, BuildError, Builder, EnterGuard, Feature,
    IdleStrategy, JoinError, JoinHandle, KernelFeatures, Placement, RecvMsg, RingMode, RingRefusal,
    RingSetup, Runtime, RuntimeHandle, RuntimeStats, ShardStats, SpawnError, WakeMechanism,
    YieldNow,
};

/// Declares task-local keys (see [`task::LocalKey`]), as tokio's `task_local!`.
pub use ringsteal_rt::task_local;

/// Timers: `sleep`, `timeout`, `interval`, and the paused clock for tests: `pause`,
/// `advance`, `resume` (see [`ringsteal_rt::time`]).
pub mod time {
    pub use ringsteal_rt::time::*;
}

/// The runtime and its builder, where tokio keeps them (`tokio::runtime::{Builder, Handle,
/// Runtime}`); the same items as at the crate's top level, with [`RuntimeHandle`] also
/// under tokio's name `Handle`. The builder also answers to tokio's names
/// (`new_multi_thread`, `worker_threads`, `enable_all`, ...: ADR-0044).
///
/// ```
/// use ringsteal::runtime::{Builder, Handle, Runtime};
///
/// let rt: Runtime = Builder::new_current_thread().enable_all().build()?;
/// let two = rt.block_on(async { Handle::current().spawn(async { 1 + 1 }).await });
/// assert_eq!(two.unwrap(), 2);
/// # Ok::<(), std::io::Error>(())
/// ```
pub mod runtime {
    pub use ringsteal_rt::{
        BuildError, Builder, EnterGuard, IdleStrategy, Runtime, RuntimeHandle, RuntimeStats,
        ShardStats, WakeMechanism,
    };

    /// tokio's name for [`RuntimeHandle`] (`tokio::runtime::Handle`): the same type.
    /// `try_current` returns an `Option` where tokio's returns a `Result`.
    pub type Handle = RuntimeHandle;
}

/// Cancellation tokens.
pub mod sync {
    pub use ringsteal_rt::sync::*;
}

/// Task handles and groups; and, where tokio has them too, the spawning functions and
/// `yield_now` (the same items as at the crate's top level).
pub mod task {
    pub use ringsteal_rt::task::*;
    pub use ringsteal_rt::{spawn, spawn_blocking, spawn_local, spawn_with, yield_now};
}

/// Files and directories on io_uring (see [`ringsteal_fs`]).
#[cfg(feature = "fs")]
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

    /// The process's standard streams (feature `io-std`), as tokio's: owned-buffer reads and
    /// writes through the ring (see [`ringsteal_process::stdio`]).
    #[cfg(feature = "io-std")]
    pub use ringsteal_process::stdio::{stderr, stdin, stdout, Stderr, Stdin, Stdout};

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

#[cfg(feature = "macros")]
pub use ringsteal_macros::{main, test};

/// What the macros expand to. Not public API: it may change in any release.
#[doc(hidden)]
pub mod __private {
    use std::future::Future;

    use crate::{Builder, RuntimeHandle};

    /// `#[ringsteal::main]`: builds the runtime and runs the body on this thread (shard 0). A
    /// runtime that cannot be built ends the program with its error, which names the cause
    /// and the fix, and status 1.
    pub fn run_main<F: Future>(
        builder: Builder,
        body: impl FnOnce(RuntimeHandle) -> F,
    ) -> F::Output {
        not_on_a_shard("#[ringsteal::main]");
        let rt = builder.build().unwrap_or_else(|e| {
            eprintln!("error: {e}");
            std::process::exit(1)
        });
        let main = body(rt.handle());
        rt.block_on_then_drop(main)
    }

    /// A function under `attr` called from a shard (a task, or inside `block_on`: its own
    /// body calling it, say) would build a whole runtime only to fail in its `block_on`:
    /// it fails first, naming the attribute.
    fn not_on_a_shard(attr: &str) {
        if crate::current_shard().is_some() {
            panic!(
                "a {attr} function was called from inside a ringsteal runtime (a task or \
                 block_on): it starts a runtime of its own, which a shard cannot wait for; \
                 await the async code it runs instead"
            );
        }
    }

    /// `#[ringsteal::test]`: as [`run_main`], but a runtime that cannot be built fails the
    /// test with its error.
    pub fn run_test<F: Future>(
        builder: Builder,
        body: impl FnOnce(RuntimeHandle) -> F,
    ) -> F::Output {
        not_on_a_shard("#[ringsteal::test]");
        let rt = builder.build().unwrap_or_else(|e| panic!("{e}"));
        let test = body(rt.handle());
        rt.block_on_then_drop(test)
    }
}

/// The chapters of the book (`book/src`), so that their Rust code blocks are compiled and run
/// by `cargo test --doc` (they use the default features, `fs`, `macros` and `net`; the
/// service and process chapters also `process` and `signal`, the I/O chapter `io-std`, which
/// `cargo test --workspace` turns on through the examples, or `--features full`).
#[cfg(all(doctest, feature = "fs", feature = "macros"))]
mod book {
    #[doc = include_str!("../../../README.md")]
    struct Readme;
    #[doc = include_str!("../../../book/src/getting-started.md")]
    struct GettingStarted;
    #[cfg(all(feature = "net", feature = "signal"))]
    #[doc = include_str!("../../../book/src/service.md")]
    struct Service;
    #[doc = include_str!("../../../book/src/runtime.md")]
    struct Runtime;
    #[doc = include_str!("../../../book/src/placement.md")]
    struct Placement;
    #[doc = include_str!("../../../book/src/time.md")]
    struct Time;
    #[cfg(feature = "io-std")]
    #[doc = include_str!("../../../book/src/io.md")]
    struct Io;
    #[doc = include_str!("../../../book/src/fs.md")]
    struct Fs;
    #[cfg(feature = "net")]
    #[doc = include_str!("../../../book/src/net.md")]
    struct Net;
    #[cfg(all(feature = "hyper", feature = "tokio-io"))]
    #[doc = include_str!("../../../book/src/coming-from-tokio.md")]
    struct ComingFromTokio;
    #[doc = include_str!("../../../book/src/uring-features.md")]
    struct UringFeatures;
    #[doc = include_str!("../../../book/src/tuning.md")]
    struct Tuning;
    #[doc = include_str!("../../../book/src/operations.md")]
    struct Operations;
    #[cfg(all(feature = "process", feature = "signal"))]
    #[doc = include_str!("../../../book/src/process-signal.md")]
    struct ProcessSignal;
}
