//! The runtime's clock and the paused clock for tests: [`pause`], [`advance`], [`resume`],
//! with tokio's semantics (ADR-0013).
//!
//! A runtime's clock is `std::time::Instant::now()` until the first [`pause`]. From then on it
//! is `base + (time since resume)`: frozen at `base` while paused, moved by [`advance`], and
//! by the shard itself when it runs out of work and a timer is pending (auto-advance, in
//! `Shard::auto_advance`). A paused clock needs a single-shard runtime: auto-advance must
//! know that *no* shard can make progress, which one shard knows for itself.
//!
//! Owns: the clock's state and the public pause API. May not: touch the wheel except to fire
//! it from [`advance`] on the shard that awaits it.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::runtime::context;
use crate::runtime::shared::Shared;
use crate::util::contain_panic;

/// One runtime's clock.
pub(crate) struct Clock {
    /// The instant the timer wheels count microsecond ticks from.
    origin: std::time::Instant,
    /// Set by the first pause and never cleared: from then on, time is read from `state`.
    virtualised: AtomicBool,
    paused: AtomicBool,
    state: Mutex<State>,
}

struct State {
    /// The clock's value when it was last paused, advanced or resumed.
    base: std::time::Instant,
    /// The real instant of the last resume; `None` while paused.
    unfrozen: Option<std::time::Instant>,
}

impl State {
    fn now(&self) -> std::time::Instant {
        match self.unfrozen {
            None => self.base,
            Some(since) => self.base + since.elapsed(),
        }
    }
}

impl Clock {
    pub(crate) fn new(origin: std::time::Instant) -> Self {
        Self {
            origin,
            virtualised: AtomicBool::new(false),
            paused: AtomicBool::new(false),
            state: Mutex::new(State {
                base: std::time::Instant::now(),
                unfrozen: Some(std::time::Instant::now()),
            }),
        }
    }

    /// The clock's current value.
    #[inline]
    pub(crate) fn now(&self) -> std::time::Instant {
        if !self.virtualised.load(Acquire) {
            return std::time::Instant::now();
        }
        self.state.lock().now()
    }

    /// True while paused.
    #[inline]
    pub(crate) fn is_paused(&self) -> bool {
        self.paused.load(SeqCst)
    }

    pub(crate) fn pause(&self) -> Result<(), ClockError> {
        let mut st = self.state.lock();
        if self.paused.load(Relaxed) {
            return Err(ClockError::AlreadyPaused);
        }
        let now = if self.virtualised.load(Relaxed) {
            st.now()
        } else {
            std::time::Instant::now()
        };
        // Onto the wheels' microsecond grid (forward, by under a microsecond): a deadline a
        // whole number of microseconds away is then a tick exactly, and auto-advance lands
        // on it, not up to a microsecond after.
        let since = now.saturating_duration_since(self.origin);
        let to_grid = Duration::from_nanos(u64::from((1000 - since.subsec_nanos() % 1000) % 1000));
        st.base = now + to_grid;
        st.unfrozen = None;
        self.virtualised.store(true, Release);
        self.paused.store(true, SeqCst);
        Ok(())
    }

    pub(crate) fn resume(&self) -> Result<(), ClockError> {
        let mut st = self.state.lock();
        if !self.paused.load(Relaxed) {
            return Err(ClockError::NotPaused);
        }
        st.unfrozen = Some(std::time::Instant::now());
        self.paused.store(false, SeqCst);
        Ok(())
    }

    /// Moves a paused clock forward by `d`; returns the new time.
    pub(crate) fn advance(&self, d: Duration) -> Result<std::time::Instant, ClockError> {
        let mut st = self.state.lock();
        if !self.paused.load(Relaxed) {
            return Err(ClockError::NotPaused);
        }
        st.base = st.base.checked_add(d).ok_or(ClockError::Overflow)?;
        Ok(st.base)
    }

    /// Auto-advance: moves a paused clock forward to `to` (never back). False if the clock is
    /// not paused (a `resume` from another thread won the race).
    pub(crate) fn advance_to(&self, to: std::time::Instant) -> bool {
        let mut st = self.state.lock();
        if !self.paused.load(Relaxed) {
            return false;
        }
        st.base = st.base.max(to);
        true
    }
}

/// Why a paused-clock call was refused.
///
/// ```
/// use ringsteal_rt::time::{self, ClockError};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(2).build()?;
/// rt.block_on(async {
///     assert_eq!(time::try_pause(), Err(ClockError::MultiShard { shards: 2 }));
///     assert_eq!(time::try_resume(), Err(ClockError::NotPaused));
/// });
/// assert_eq!(time::try_pause(), Err(ClockError::NoRuntime));
/// # Ok::<(), ringsteal_rt::BuildError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClockError {
    /// Called outside a ringsteal runtime (a task, a `spawn_blocking` closure or an entered
    /// handle).
    NoRuntime,
    /// The runtime has more than one shard; a paused clock needs exactly one.
    MultiShard {
        /// The runtime's shard count.
        shards: usize,
    },
    /// `pause` on a clock that is already paused.
    AlreadyPaused,
    /// `resume` or `advance` on a clock that is not paused.
    NotPaused,
    /// `advance` by a duration that does not fit in an `Instant`.
    Overflow,
}

impl fmt::Display for ClockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClockError::NoRuntime => f.write_str(
                "the ringsteal clock can only be paused, advanced or resumed inside a runtime \
                 (a task, a spawn_blocking closure, or inside RuntimeHandle::enter)",
            ),
            ClockError::MultiShard { shards } => write!(
                f,
                "the ringsteal clock can only be paused on a single-shard runtime, and this one \
                 has {shards} shards: build it with `.shards(1)` (or `#[ringsteal::test(start_paused = true)]`)"
            ),
            ClockError::AlreadyPaused => f.write_str("the ringsteal clock is already paused"),
            ClockError::NotPaused => f.write_str(
                "the ringsteal clock is not paused: call ringsteal::time::pause() first",
            ),
            ClockError::Overflow => {
                f.write_str("advancing the ringsteal clock by this much would overflow an Instant")
            }
        }
    }
}

impl std::error::Error for ClockError {}

fn current_runtime() -> Result<Arc<Shared>, ClockError> {
    context::current_shared().ok_or(ClockError::NoRuntime)
}

/// Pauses the current runtime's clock: [`Instant::now`](super::Instant::now) stops, and when
/// the runtime has nothing to do but wait for a timer, the clock jumps to that timer's
/// deadline instead (auto-advance), so timeouts and retries run without real waiting.
///
/// While paused, a timer completes only when the clock reaches it: by auto-advance, or by
/// [`advance`]. Auto-advance waits while a `spawn_blocking` closure is queued or running (it
/// may be about to wake a task). It does not wait for I/O in flight: operations already
/// completed in the ring are taken first, but an operation that completes later (a reply
/// still on its way) can lose the race against a timeout's deadline; [`resume`] the clock
/// around such I/O. Only single-shard runtimes can be paused (ADR-0013); the pause holds
/// until [`resume`], across `block_on` calls.
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
    shared.clock.pause()
}

/// Resumes the current runtime's clock: it runs again at the real rate, from the (paused)
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
    current_runtime()?.clock.resume()
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
/// Outside a runtime or if the clock is not paused; [`try_advance`] returns these as errors.
pub async fn advance(duration: Duration) {
    try_advance(duration)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// [`advance`], returning misuse as an error.
pub async fn try_advance(duration: Duration) -> Result<(), ClockError> {
    let shared = current_runtime()?;
    let now = shared.clock.advance(duration)?;
    let fired_here = context::with_shard_of(Arc::as_ptr(&shared), |cur| {
        let Some(shard) = cur else { return false };
        let mut wakers = Vec::new();
        let Ok(mut wheel) = shard.wheel.try_borrow_mut() else {
            return false;
        };
        wheel.fire(now, &mut wakers, shard.counters());
        drop(wheel);
        // Each woken task goes to the back of the run queue, ahead of this one (below).
        for w in wakers {
            contain_panic(|| w.wake());
        }
        true
    });
    if !fired_here {
        // Awaited off the shard (or inside a wheel operation): the shard fires them at its
        // next tick; make sure it has one.
        shared.notify(0);
    }
    crate::yield_now().await;
    Ok(())
}

/// What a shard with a paused clock does instead of sleeping until its next timer.
pub(crate) enum Paused {
    /// It took completions, or moved the clock to the next timer: back to the run loop.
    Ran,
    /// Nothing can move the clock now: sleep until woken.
    Sleep,
}

impl crate::shard::Shard {
    /// Auto-advance (called by an idle shard that has published `sleeping` and found no work,
    /// no completion included): with a timer pending in `timeout`, no blocking closure queued
    /// or running, and every SQE taken by the kernel, moves the clock to the timer's deadline.
    /// Single shard only (`try_pause` ensures it), so this shard being idle means the runtime
    /// is.
    pub(crate) fn auto_advance(&self, timeout: Option<Duration>) -> Paused {
        let Some(timeout) = timeout else {
            return Paused::Sleep;
        };
        if self.shared.blocking.pending() > 0 {
            // Its completion rings this shard (`BlockingPool` notifies a paused runtime).
            return Paused::Sleep;
        }
        {
            let mut driver = self.driver.borrow_mut();
            if driver.sq_pending() > 0 {
                // Requests the kernel has not taken yet (an SQPOLL thread picks them up on its
                // own time; a backlog waits for room) may complete at once when it does: give
                // them that chance before time jumps.
                let _ = driver.submit(self.counters());
                return Paused::Ran;
            }
        }
        let now = self.shared.clock.now();
        if let Some(to) = now.checked_add(timeout) {
            self.shared.clock.advance_to(to);
        }
        Paused::Ran
    }
}
