//! [`Instant`]: a point in time on the runtime's clock, which a test may pause (see
//! [`pause`](super::pause)). Outside a paused (or once paused) runtime it is exactly
//! `std::time::Instant`.
//!
//! Owns: reading the current runtime's clock. May not: change it (that is `pause.rs`, over
//! `shared/clock.rs`).

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};
use std::time::Duration;

use crate::shard::context;

/// A measurement of the runtime's clock, like `std::time::Instant` but frozen while the
/// clock is paused ([`pause`](super::pause)): the type timers take and give
/// ([`sleep_until`](super::sleep_until), [`Interval::tick`](super::Interval::tick)), so
/// deadlines computed from [`Instant::now`] agree with the timers on a paused clock.
///
/// On a thread of a runtime whose clock was never paused, and on threads of no runtime,
/// [`now`](Self::now) is `std::time::Instant::now()`. Convert with [`from_std`](Self::from_std)
/// and [`into_std`](Self::into_std) (or `From`); a `std` instant is taken as it is, so under a
/// paused clock take deadlines from [`Instant::now`], not from `std`.
///
/// ```
/// use std::time::Duration;
/// use ringsteal_rt::time::{self, Instant};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build()?;
/// rt.block_on(async {
///     time::pause();
///     let start = Instant::now();
///     time::sleep_until(start + Duration::from_secs(60)).await; // takes no real time
///     assert_eq!(start.elapsed(), Duration::from_secs(60));
/// });
/// # Ok::<(), ringsteal_rt::BuildError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant {
    std: std::time::Instant,
}

impl Instant {
    /// The current time on the clock of the current thread's runtime (paused time while it is
    /// paused), or `std::time::Instant::now()` outside a runtime.
    pub fn now() -> Instant {
        Instant {
            std: context::clock_now(),
        }
    }

    /// Wraps a `std` instant.
    pub fn from_std(std: std::time::Instant) -> Instant {
        Instant { std }
    }

    /// The `std` instant with the same value.
    pub fn into_std(self) -> std::time::Instant {
        self.std
    }

    /// Time from `earlier` to `self`, zero if `earlier` is later.
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        self.std.saturating_duration_since(earlier.std)
    }

    /// Time from `earlier` to `self`, or `None` if `earlier` is later.
    pub fn checked_duration_since(&self, earlier: Instant) -> Option<Duration> {
        self.std.checked_duration_since(earlier.std)
    }

    /// Time from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        self.std.saturating_duration_since(earlier.std)
    }

    /// Time since `self` on the runtime's clock (zero if `self` is in the future).
    pub fn elapsed(&self) -> Duration {
        Instant::now().saturating_duration_since(*self)
    }

    /// `self + duration`, or `None` on overflow.
    pub fn checked_add(&self, duration: Duration) -> Option<Instant> {
        self.std.checked_add(duration).map(Instant::from_std)
    }

    /// `self - duration`, or `None` on overflow.
    pub fn checked_sub(&self, duration: Duration) -> Option<Instant> {
        self.std.checked_sub(duration).map(Instant::from_std)
    }
}

impl From<std::time::Instant> for Instant {
    fn from(std: std::time::Instant) -> Instant {
        Instant::from_std(std)
    }
}

impl From<Instant> for std::time::Instant {
    fn from(i: Instant) -> std::time::Instant {
        i.into_std()
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    /// # Panics
    /// On overflow, like `std::time::Instant`.
    fn add(self, rhs: Duration) -> Instant {
        Instant::from_std(self.std + rhs)
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;
    /// # Panics
    /// On overflow, like `std::time::Instant`.
    fn sub(self, rhs: Duration) -> Instant {
        Instant::from_std(self.std - rhs)
    }
}

impl SubAssign<Duration> for Instant {
    fn sub_assign(&mut self, rhs: Duration) {
        *self = *self - rhs;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Zero if `rhs` is later, like `std::time::Instant`.
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_duration_since(rhs)
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.std.fmt(f)
    }
}
