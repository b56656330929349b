//! [`Interval`]: ticks at a fixed period.

use std::future::poll_fn;
use std::task::{Context, Poll};
use std::time::Duration;

use super::sleep::{far_future, Sleep};
use super::Instant;

/// What an [`Interval`] does when ticks were missed (the task was busy past a tick). A tick
/// counts as missed when it is seen more than 5 ms after the instant it was scheduled for,
/// as in tokio.
///
/// ```
/// use std::time::Duration;
/// use ringsteal_rt::time::{interval, sleep, Instant, MissedTickBehavior};
///
/// let ms = Duration::from_millis;
/// let rt = ringsteal_rt::Runtime::builder().shards(1).start_paused(true).build().unwrap();
/// rt.block_on(async {
///     let mut ticks = interval(ms(10));
///     ticks.set_missed_tick_behavior(MissedTickBehavior::Skip);
///     let start = ticks.tick().await;
///     sleep(ms(35)).await; // busy past the ticks at 10, 20 and 30 ms
///     assert_eq!(ticks.tick().await - start, ms(10)); // the late tick, as scheduled
///     assert_eq!(ticks.tick().await - start, ms(40)); // 20 and 30 skipped
///
///     let mut delayed = interval(ms(10));
///     delayed.set_missed_tick_behavior(MissedTickBehavior::Delay);
///     let start = delayed.tick().await;
///     sleep(ms(35)).await;
///     delayed.tick().await;
///     assert_eq!(delayed.tick().await - start, ms(45)); // one period after the late tick
///     assert!(Instant::now() - start >= ms(45));
/// });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MissedTickBehavior {
    /// Fire the missed ticks back to back until caught up; the schedule is unchanged.
    #[default]
    Burst,
    /// Restart the schedule from now: the next tick is one period after the late one.
    Delay,
    /// Drop the missed ticks; the next tick is the next one on the original schedule.
    Skip,
}

/// How late a tick must be seen for the [`MissedTickBehavior`] to apply; an earlier tick keeps
/// the schedule. tokio's threshold, so that a ported interval ticks at the same instants
/// (with 1 ms, a `Delay` interval seen 3 ms late moved its schedule where tokio's kept it);
/// far above the wake-up latency of a parked shard (tens of µs) either way.
const MISSED_AFTER: Duration = Duration::from_millis(5);

impl MissedTickBehavior {
    fn next(self, scheduled: Instant, now: Instant, period: Duration) -> Instant {
        let on_schedule = |n: u128| {
            let total = period.as_nanos().saturating_mul(n);
            let secs = u64::try_from(total / 1_000_000_000).unwrap_or(u64::MAX);
            let step = Duration::new(secs, (total % 1_000_000_000) as u32);
            scheduled.checked_add(step).unwrap_or_else(far_future)
        };
        match self {
            MissedTickBehavior::Burst => on_schedule(1),
            MissedTickBehavior::Delay => now.checked_add(period).unwrap_or_else(far_future),
            MissedTickBehavior::Skip => {
                let late = now.saturating_duration_since(scheduled).as_nanos();
                on_schedule(late / period.as_nanos().max(1) + 1)
            }
        }
    }
}

/// Ticks every `period`; the first tick completes immediately.
///
/// ```
/// use std::time::Duration;
/// use ringsteal_rt::time::interval;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let mut every = interval(Duration::from_micros(500));
///     let first = every.tick().await;
///     let second = every.tick().await;
///     assert!(second - first >= Duration::from_micros(500));
/// });
/// ```
///
/// # Panics
/// If `period` is zero; and its ticks, when awaited on a thread that runs no ringsteal shard
/// and is in no runtime's context (see [`Sleep`](super::Sleep)).
pub fn interval(period: Duration) -> Interval {
    interval_at(Instant::now(), period)
}

/// Ticks every `period`, the first time at `start` (on the runtime's clock, see [`Instant`]).
///
/// ```
/// use std::time::Duration;
/// use ringsteal_rt::time::{interval_at, Instant};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let start = Instant::now() + Duration::from_micros(200);
///     let mut every = interval_at(start, Duration::from_micros(300));
///     assert_eq!(every.tick().await, start);
///     assert_eq!(every.tick().await, start + Duration::from_micros(300));
/// });
/// ```
///
/// # Panics
/// If `period` is zero.
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    assert!(
        period > Duration::ZERO,
        "an interval period must be non-zero"
    );
    Interval {
        sleep: Sleep::new(start),
        period,
        missed: MissedTickBehavior::default(),
    }
}

/// A stream of ticks; see [`interval`] and [`interval_at`]. Each tick yields the instant it
/// was scheduled for; what happens after a late tick is its [`MissedTickBehavior`].
///
/// ```
/// use std::time::Duration;
/// use ringsteal_rt::time::interval;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).start_paused(true).build().unwrap();
/// rt.block_on(async {
///     let mut heartbeat = interval(Duration::from_secs(30));
///     assert_eq!(heartbeat.period(), Duration::from_secs(30));
///     let first = heartbeat.tick().await; // at once
///     for n in 1..=3 {
///         let at = heartbeat.tick().await; // the paused clock jumps 30 s each time
///         assert_eq!(at - first, Duration::from_secs(30 * n));
///     }
/// });
/// ```
#[derive(Debug)]
pub struct Interval {
    sleep: Sleep,
    period: Duration,
    missed: MissedTickBehavior,
}

impl Interval {
    /// Waits for the next tick; returns the instant it was scheduled for.
    pub async fn tick(&mut self) -> Instant {
        poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// Polls for the next tick.
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        if self.sleep.poll_elapsed(cx).is_pending() {
            return Poll::Pending;
        }
        let scheduled = self.sleep.deadline();
        let now = Instant::now();
        let next = if now.saturating_duration_since(scheduled) > MISSED_AFTER {
            self.missed.next(scheduled, now, self.period)
        } else {
            MissedTickBehavior::Burst.next(scheduled, now, self.period)
        };
        self.sleep = Sleep::new(next);
        Poll::Ready(scheduled)
    }

    /// Restarts the schedule: the next tick is one period from now.
    pub fn reset(&mut self) {
        self.reset_after(self.period);
    }

    /// Restarts the schedule with the next tick due at once, as tokio's
    /// `reset_immediately`.
    pub fn reset_immediately(&mut self) {
        self.reset_at(Instant::now());
    }

    /// Restarts the schedule with the next tick `after` from now; later ticks follow one
    /// period apart, as tokio's `reset_after`.
    pub fn reset_after(&mut self, after: Duration) {
        let next = Instant::now().checked_add(after).unwrap_or_else(far_future);
        self.reset_at(next);
    }

    /// Restarts the schedule with the next tick due at `deadline`; later ticks follow one
    /// period apart, as tokio's `reset_at`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use ringsteal_rt::time::{interval, Instant};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).start_paused(true).build().unwrap();
    /// rt.block_on(async {
    ///     let mut ticks = interval(Duration::from_secs(10));
    ///     ticks.tick().await; // at once
    ///     let start = Instant::now();
    ///     ticks.reset_at(start + Duration::from_secs(3));
    ///     assert_eq!(ticks.tick().await - start, Duration::from_secs(3));
    ///     assert_eq!(ticks.tick().await - start, Duration::from_secs(13));
    /// });
    /// ```
    pub fn reset_at(&mut self, deadline: Instant) {
        self.sleep.reset(deadline);
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// The missed-tick behaviour.
    pub fn missed_tick_behavior(&self) -> MissedTickBehavior {
        self.missed
    }

    /// Sets the missed-tick behaviour.
    pub fn set_missed_tick_behavior(&mut self, behavior: MissedTickBehavior) {
        self.missed = behavior;
    }
}
