//! # ringsteal-rt
//!
//! The core of [ringsteal](https://github.com/ringsteal/ringsteal): a work-stealing,
//! multi-shard async runtime on Linux io_uring. Each shard is one thread with its own ring;
//! shards wake each other by posting completions into each other's rings
//! (`IORING_OP_MSG_RING`); a placement policy decides where each task first runs, and idle
//! shards steal queued work before it starts.
//!
//! Most users depend on the `ringsteal` facade, which re-exports this crate.
//!
//! ```
//! use ringsteal_rt::{Placement, Runtime};
//!
//! let rt = Runtime::builder().shards(2).build()?;
//! rt.block_on(async {
//!     let pinned = ringsteal_rt::spawn_with(Placement::Pinned(1), async { ringsteal_rt::current_shard() });
//!     assert_eq!(pinned.await.unwrap(), Some(1));
//!     let blocking = ringsteal_rt::spawn_blocking(|| std::thread::current().name().map(String::from));
//!     assert!(blocking.await.unwrap().unwrap().contains("blocking"));
//! });
//! # Ok::<(), ringsteal_rt::BuildError>(())
//! ```
//!
//! Layout, top down (ADR-0016): `runtime/` (builder, `Runtime`, handle, spawning) builds
//! `shard/`s (the loop, stealing, parking, wake delivery, shutdown, the thread's context),
//! which stand on `shared/` (what every thread of one runtime may touch: the shards' shared
//! halves, configuration, the sleep/wake protocol); below them `driver/` (the ring of a
//! shard), `task/` (task cells, state, join), `time/` (the wheel and timers), `op/` (I/O
//! operations), `blocking/` (the blocking pool).

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]

mod blocking;
pub mod buf;
mod busy_clock;
mod driver;
mod error;
mod features;
#[cfg(feature = "stream")]
mod futures_stream;
pub mod io;
mod loom;
mod msg;
pub mod op;
mod placement;
mod runtime;
mod shard;
mod shared;
mod stats;
pub mod sync;
pub mod time;
mod util;

pub mod task;

pub use driver::{RingMode, RingRefusal, RingSetup};
pub use error::{BuildError, SpawnError};
pub use features::{Feature, KernelFeatures};
pub use msg::{recv_msg, try_recv_msg, RecvMsg};
pub use placement::Placement;
pub use runtime::{Builder, EnterGuard, IdleStrategy, Runtime, RuntimeHandle, WakeMechanism};
pub use stats::{RuntimeStats, ShardStats};
pub use task::{AbortHandle, JoinError, JoinHandle};

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Spawns a task on the current runtime, placed by default: [`Placement::Stealable`] (it
/// runs on this shard unless an idle shard steals it before it starts), except right after
/// the spawning task accepted a connection (a `ringsteal::net` listener's `accept` or
/// `incoming`, or anything that calls [`spread_next_spawn`]): then the task is dealt to the
/// shards in turn ([`Placement::RoundRobin`]), so that a server's connections, which never
/// move once started, use every shard. An explicit [`spawn_with`] is never changed.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
/// let shard = rt.block_on(async { ringsteal_rt::spawn(async { ringsteal_rt::current_shard() }).await });
/// assert!(shard.unwrap().is_some());
/// ```
///
/// # Panics
/// Outside a ringsteal runtime (a task, a `spawn_blocking` closure or an entered handle).
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    shard::context::with_current_shared(|shared| {
        let shared = shared.expect(NO_RUNTIME);
        let placement = runtime::spawn::default_placement(shared);
        match runtime::spawn::spawn_with(shared, placement, future) {
            Ok(join) => join,
            Err(SpawnError::ShuttingDown) => task::cancelled_join_handle(),
            Err(e) => panic!("{e}"),
        }
    })
}

/// Marks the task being polled as having just taken a new, long-lived piece of work, such
/// as an accepted connection: the next [`spawn`] it makes during this poll (default
/// placement only) is dealt to the shards round-robin instead of queued on this shard.
/// `ringsteal::net` listeners call it for every connection they hand out, so the obvious
/// server (an accept loop that spawns a task per connection) uses every shard; call it
/// from a listener of your own for the same effect. Off a shard, it does nothing; a hint
/// not used by the end of the poll is dropped. See ADR-0009.
///
/// ```
/// use ringsteal_rt::Runtime;
///
/// let rt = Runtime::builder().shards(2).build().unwrap();
/// let shards = rt.block_on(async {
///     let mut on = Vec::new();
///     for _ in 0..4 {
///         ringsteal_rt::spread_next_spawn(); // as a listener does per connection
///         on.push(ringsteal_rt::spawn(async { ringsteal_rt::current_shard().unwrap() }));
///     }
///     let mut shards = Vec::new();
///     for t in on {
///         shards.push(t.await.unwrap());
///     }
///     shards
/// });
/// assert_eq!(shards.iter().filter(|&&s| s == 0).count(), 2);
/// assert_eq!(shards.iter().filter(|&&s| s == 1).count(), 2);
/// ```
pub fn spread_next_spawn() {
    shard::context::with_shard(|shard| {
        if let Some(shard) = shard {
            shard.spread_next_spawn();
        }
    });
}

/// Spawns on the current runtime with an explicit placement.
///
/// # Panics
/// Outside a ringsteal runtime, or if the placement names a shard that does not exist.
pub fn spawn_with<F>(placement: Placement, future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    shard::context::with_current_shared(|shared| {
        let shared = shared.expect(NO_RUNTIME);
        match runtime::spawn::spawn_with(shared, placement, future) {
            Ok(join) => join,
            Err(SpawnError::ShuttingDown) => task::cancelled_join_handle(),
            Err(e) => panic!("{e}"),
        }
    })
}

const NO_RUNTIME: &str =
    "ringsteal::spawn called outside a ringsteal runtime: call it from a task, a \
     spawn_blocking closure, or inside RuntimeHandle::enter";

/// Spawns on the current runtime with an explicit placement, reporting a bad shard, a
/// shutdown or a missing runtime as an error.
pub fn try_spawn_with<F>(
    placement: Placement,
    future: F,
) -> Result<JoinHandle<F::Output>, SpawnError>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    RuntimeHandle::try_current()
        .ok_or(SpawnError::NotOnShard)?
        .try_spawn_with(placement, future)
}

/// Spawns a `!Send` task on the current shard; it never leaves it.
///
/// ```
/// use std::rc::Rc;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let shared = Rc::new(5);
///     let s = shared.clone();
///     let n = ringsteal_rt::spawn_local(async move { *s + 1 }).await.unwrap();
///     assert_eq!(n, 6);
/// });
/// ```
///
/// # Panics
/// Outside a task running on a ringsteal shard.
pub fn spawn_local<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    match runtime::spawn::spawn_local(future) {
        Ok(join) => join,
        Err(SpawnError::ShuttingDown) => task::cancelled_local_join_handle(),
        Err(e) => panic!("{e}"),
    }
}

/// Runs a blocking closure on the current runtime's blocking pool. If the pool has no thread
/// and the system refuses to start one (a thread limit), the closure does not run and its
/// `JoinHandle` yields a cancelled error (tokio panics there).
///
/// # Panics
/// Outside a ringsteal runtime.
pub fn spawn_blocking<F, R>(f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    RuntimeHandle::current().spawn_blocking(f)
}

/// The index of the shard running the current task, or `None` off-shard.
pub fn current_shard() -> Option<usize> {
    shard::context::with_shard(|s| s.map(|s| s.index))
}

/// Yields to the shard's other tasks and its I/O: the current task runs again once the shard
/// has taken in its completions, timers and inbox, after the tasks those woke, as tokio's
/// `yield_now` waits for its driver. (Queued behind only what is runnable, a task yielding in
/// a loop was polled again and again before the shard looked at its ring.)
///
/// ```
/// # let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// # rt.block_on(async {
/// ringsteal_rt::yield_now().await;
/// # });
/// ```
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

/// The future returned by [`yield_now`]: pending once (waking itself), then ready, so the
/// shard runs its other ready tasks in between.
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use std::sync::Arc;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let ran = Arc::new(AtomicBool::new(false));
///     let flag = ran.clone();
///     let other = ringsteal_rt::spawn_local(async move { flag.store(true, Ordering::Relaxed) });
///     ringsteal_rt::yield_now().await; // the other task runs here, on this shard
///     assert!(ran.load(Ordering::Relaxed));
///     other.await.unwrap();
/// });
/// ```
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        shard::context::wake_after_reap(cx.waker());
        Poll::Pending
    }
}
