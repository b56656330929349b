//! [`timeout`] and [`timeout_at`]: bound a future by a deadline.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::sleep::{far_future, Sleep};
use super::Instant;

/// The deadline passed before the future completed: the error of [`timeout`] and
/// [`timeout_at`]. It converts into an [`std::io::Error`] of kind `TimedOut`, for `?`.
///
/// ```
/// use std::time::Duration;
/// use ringsteal_rt::time::{timeout, Elapsed};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).start_paused(true).build().unwrap();
/// rt.block_on(async {
///     let late: Result<(), Elapsed> = timeout(Duration::from_secs(5), std::future::pending()).await;
///     let err = std::io::Error::from(late.unwrap_err());
///     assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
/// });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed(());

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

impl From<Elapsed> for std::io::Error {
    fn from(_: Elapsed) -> Self {
        std::io::Error::new(std::io::ErrorKind::TimedOut, "deadline has elapsed")
    }
}

/// Runs `future` for at most `duration`.
///
/// The future is polled before the timer, so a future that completes at the same instant as
/// the deadline counts as completed. Completing (or dropping the `Timeout`) removes the timer
/// from the wheel at once. A `duration` too long to add to now (`Duration::MAX`, a "no
/// timeout" setting) sets no timer at all, as tokio's: the `Timeout` never elapses, even when
/// a paused clock jumps ahead.
///
/// ```
/// use std::time::Duration;
/// use ringsteal_rt::time::{sleep, timeout};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     assert_eq!(timeout(Duration::from_secs(1), async { 5 }).await, Ok(5));
///     assert!(timeout(Duration::from_millis(1), sleep(Duration::from_secs(5))).await.is_err());
/// });
/// ```
///
/// # Panics
/// The `Timeout`, when polled before its deadline, its future still pending, on a thread
/// that runs no ringsteal shard and is in no runtime's context (see
/// [`Sleep`](super::Sleep)).
pub fn timeout<F: Future>(duration: Duration, future: F) -> Timeout<F> {
    match Instant::now().checked_add(duration) {
        Some(deadline) => timeout_at(deadline, future),
        None => Timeout {
            future,
            // Never polled, so never in a wheel: it only holds the deadline to report.
            sleep: Sleep::new(far_future()),
            bounded: false,
        },
    }
}

/// Runs `future` until `deadline` at most (on the runtime's clock, see [`Instant`]).
///
/// ```
/// use std::time::Duration;
/// use ringsteal_rt::time::{timeout_at, Instant};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let deadline = Instant::now() + Duration::from_millis(1);
///     assert!(timeout_at(deadline, std::future::pending::<()>()).await.is_err());
///     assert!(Instant::now() >= deadline);
/// });
/// ```
///
/// # Panics
/// The `Timeout`, when polled before its deadline, its future still pending, on a thread
/// that runs no ringsteal shard and is in no runtime's context (see
/// [`Sleep`](super::Sleep)).
pub fn timeout_at<F: Future>(deadline: Instant, future: F) -> Timeout<F> {
    Timeout {
        future,
        sleep: Sleep::new(deadline),
        bounded: true,
    }
}

/// The future returned by [`timeout`] and [`timeout_at`]: the wrapped future's output in
/// `Ok`, or [`Elapsed`] once the deadline passes (the wrapped future is dropped with the
/// `Timeout`, which cancels what it had in flight).
///
/// ```
/// use std::time::Duration;
/// use ringsteal_rt::time::{sleep, timeout};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).start_paused(true).build().unwrap();
/// rt.block_on(async {
///     let fast = timeout(Duration::from_secs(1), async { 7 });
///     assert_eq!(fast.await, Ok(7));
///     let slow = timeout(Duration::from_secs(1), sleep(Duration::from_secs(2)));
///     let deadline = slow.deadline();
///     assert!(slow.await.is_err());
///     assert!(ringsteal_rt::time::Instant::now() >= deadline);
/// });
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct Timeout<F> {
    future: F,
    sleep: Sleep,
    /// False: no deadline ([`timeout`] with a duration too long to add to now); `sleep` is
    /// never polled.
    bounded: bool,
}

impl<F> Timeout<F> {
    /// The wrapped future.
    pub fn get_ref(&self) -> &F {
        &self.future
    }

    /// The wrapped future, mutably (as tokio's `get_mut`).
    pub fn get_mut(&mut self) -> &mut F {
        &mut self.future
    }

    /// The wrapped future, consuming the timeout (and removing its timer).
    pub fn into_inner(self) -> F {
        self.future
    }

    /// The deadline: about 30 years after it was made for a `Timeout` without one (see
    /// [`timeout`]).
    pub fn deadline(&self) -> Instant {
        self.sleep.deadline()
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `future` is structurally pinned (never moved out while pinned); `sleep` is
        // Unpin and used through a plain &mut.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: see above.
        if let Poll::Ready(v) = unsafe { Pin::new_unchecked(&mut this.future) }.poll(cx) {
            this.sleep.disarm();
            return Poll::Ready(Ok(v));
        }
        if !this.bounded {
            return Poll::Pending;
        }
        match this.sleep.poll_elapsed(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed(()))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<F> fmt::Debug for Timeout<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timeout")
            .field("deadline", &self.bounded.then(|| self.sleep.deadline()))
            .finish()
    }
}
