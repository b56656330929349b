//! [`Clock`]: one runtime's clock, which a test may pause (ADR-0013), and [`ClockError`].
//!
//! A runtime's clock is `std::time::Instant::now()` until the first pause. From then on it is
//! `base + (time since resume)`: frozen at `base` while paused, moved by `time::advance`, and
//! by the shard itself when it runs out of work and a timer is pending (auto-advance,
//! `Shard::auto_advance` in `shard/park.rs`). The public API is `time/pause.rs`.
//!
//! Owns: the clock's state and its rules (pause puts it on the wheels' microsecond grid,
//! auto-advance never moves it back). May not: decide when to advance, or fire timers.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::time::Duration;

use parking_lot::Mutex;

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
        // Refused too if it leaves the clock less than twice "never" (`util::NEVER`, 30
        // years) before the largest `Instant`: deadlines are computed as now plus up to
        // "never", and must not overflow afterwards.
        let base = st
            .base
            .checked_add(d)
            .filter(|b| b.checked_add(crate::util::NEVER * 2).is_some())
            .ok_or(ClockError::Overflow)?;
        st.base = base;
        Ok(base)
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
    /// `advance` by a duration that does not fit in an `Instant` (with 60 years to spare).
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
