//! The paused clock for tests: [`pause`], [`advance`], [`resume`], with tokio's semantics
//! (ADR-0013). The clock itself is `shared/clock.rs`; auto-advance is the shard's
//! (`Shard::auto_advance`, `shard/park.rs`). A paused clock needs a single-shard runtime:
//! auto-advance must know that *no* shard can make progress, which one shard knows for itself.
//!
//! Owns: the public pause API. May not: touch the wheel except to fire it from [`advance`] on
//! the shard that awaits it.

use std::sync::Arc;
use std::time::Duration;

use crate::shard::context;
use crate::shared::clock::ClockError;
use crate::shared::Shared;
use crate::util::contain_panic;

/// The runtime whose clock this code reads: the one whose shard runs it (even inside another
/// runtime's `enter()`), or, off a shard, the one entered.
fn current_runtime() -> Result<Arc<Shared>, ClockError> {
    context::driving_shared().ok_or(ClockError::NoRuntime)
}

/// Pauses the clock of the runtime whose shard runs this code (off a shard, of the runtime
/// entered; inside another runtime's `enter()`, still the shard's, whose timers this code's
/// sleeps use): [`Instant::now`](super::Instant::now) stops, and when
/// the runtime has nothing to do but wait for a timer, the clock jumps to that timer's
/// deadline instead (auto-advance), so timeouts and retries run without real waiting.
///
/// While paused, a timer completes only when the clock reaches it: by auto-advance, or by
/// [`advance`]. Auto-advance waits while a `spawn_blocking` closure is queued or running (it
/// may be about to wake a task), and while a file request is in flight (a read or write of a
/// regular file, an `open`, an `fsync`: they complete on their own, and tokio's file calls,
/// on its blocking pool, hold auto-advance too). It does not wait for other I/O in flight:
/// operations already completed in the ring are taken first, but one that completes later (a
/// reply still on its way, a read of a pipe) can lose the race against a timeout's deadline,
/// as in tokio; [`resume`] the clock around such I/O. Only single-shard runtimes can be
/// paused (ADR-0013); the pause holds until [`resume`], across `block_on` calls.
///
/// ```
/// use std::time::Duration;
/// use ringsteal_rt::time::{self, Instant};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build()?;
/// rt.block_on(async {
///     time::pause();
///     let start = Instant::now();
///     let real = std::time::Instant::now();
///     // A retry loop with a day of back-off, in no time.
///     for attempt in 0..24 {
///         time::sleep(Duration::from_secs(3600)).await;
///         assert_eq!(start.elapsed(), Duration::from_secs(3600 * (attempt + 1)));
///     }
///     assert!(real.elapsed() < Duration::from_secs(10));
/// });
/// # Ok::<(), ringsteal_rt::BuildError>(())
/// ```
///
/// # Panics
/// Outside a runtime, on a runtime with more than one shard, or if the clock is already
/// paused; [`try_pause`] returns these as errors.
pub fn pause() {
    try_pause().unwrap_or_else(|e| panic!("{e}"))
}

/// [`pause`], returning misuse as an error.
pub fn try_pause() -> Result<(), ClockError> {
    let shared = current_runtime()?;
    let shards = shared.shards.len();
    if shards != 1 {
        return Err(ClockError::MultiShard { shards });
    }
    shared.clock.pause()?;
    // A shard asleep with a real timeout may now auto-advance instead.
    shared.notify(0);
    Ok(())
}

/// Resumes the clock [`pause`] paused (the runtime whose shard runs this code, or off a
/// shard the runtime entered): it runs again at the real rate, from the (paused)
/// time it had. `Instant::now()` keeps lagging `std::time::Instant::now()` by however much
/// real time passed while paused, less what was advanced.
///
/// ```
/// use std::time::Duration;
/// use ringsteal_rt::time::{self, Instant};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build()?;
/// rt.block_on(async {
///     time::pause();
///     let frozen = Instant::now();
///     std::thread::sleep(Duration::from_millis(2));
///     assert_eq!(Instant::now(), frozen);
///     time::resume();
///     time::sleep(Duration::from_millis(2)).await; // real time again
///     assert!(frozen.elapsed() >= Duration::from_millis(2));
/// });
/// # Ok::<(), ringsteal_rt::BuildError>(())
/// ```
///
/// # Panics
/// Outside a runtime, or if the clock is not paused; [`try_resume`] returns these as errors.
pub fn resume() {
    try_resume().unwrap_or_else(|e| panic!("{e}"))
}

/// [`resume`], returning misuse as an error.
pub fn try_resume() -> Result<(), ClockError> {
    let shared = current_runtime()?;
    shared.clock.resume()?;
    // A paused shard may be asleep without a timeout (waiting for a blocking closure before
    // it auto-advances): it must now wait for its next timer in real time.
    shared.notify(0);
    Ok(())
}

/// Moves the paused clock forward by `duration`, fires every timer now due, and returns once
/// the tasks those timers woke have run (been polled once). Timers fire in deadline order.
///
/// ```
/// use std::time::Duration;
/// use ringsteal_rt::time::{self, Instant};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build()?;
/// rt.block_on(async {
///     time::pause();
///     let start = Instant::now();
///     let timer = ringsteal_rt::spawn(async move {
///         time::sleep(Duration::from_secs(5)).await;
///         start.elapsed()
///     });
///     ringsteal_rt::yield_now().await; // the task registers its timer
///     time::advance(Duration::from_secs(4)).await;
///     assert!(!timer.is_finished());
///     time::advance(Duration::from_secs(1)).await;
///     assert!(timer.is_finished());
///     assert_eq!(timer.await.unwrap(), Duration::from_secs(5));
/// });
/// # Ok::<(), ringsteal_rt::BuildError>(())
/// ```
///
/// # Panics
/// Outside a runtime, if the clock is not paused, or if `duration` would take the clock past
/// what an `Instant` can hold, less 60 years for the deadlines computed from it
/// (`Duration::MAX`, say; tokio panics there too);
/// [`try_advance`] returns these as errors.
pub async fn advance(duration: Duration) {
    try_advance(duration)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// [`advance`], returning misuse as an error.
pub async fn try_advance(duration: Duration) -> Result<(), ClockError> {
    let shared = current_runtime()?;
    let now = shared.clock.advance(duration)?;
    let fired_on = context::with_shard_of(Arc::as_ptr(&shared), |cur| {
        let shard = cur?;
        let mut wakers = Vec::new();
        let mut wheel = shard.wheel.try_borrow_mut().ok()?;
        wheel.fire(now, &mut wakers, shard.counters());
        drop(wheel);
        // Each woken task goes to the back of this shard's run queue, in order.
        for w in wakers {
            contain_panic(|| w.wake());
        }
        Some(shard.index)
    });
    match fired_on {
        Some(shard) => {
            // A task queued behind the woken ones runs once all of them have (the run queue
            // is FIFO), however many ticks that takes: a tick polls at most 61 tasks, so a
            // yield alone would return early when more timers fire.
            let placement = crate::Placement::Pinned(shard);
            if let Ok(behind) = crate::runtime::spawn::spawn_with(&shared, placement, async {}) {
                let _ = behind.await;
            }
        }
        None => {
            // Awaited off the shard (or inside a wheel operation): the shard fires them at
            // its next tick; make sure it has one.
            shared.notify(0);
            crate::yield_now().await;
        }
    }
    Ok(())
}
