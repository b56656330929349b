//! [`Timer`] and [`Sleep`]: `hyper::rt::Timer` over ringsteal's timer wheel.
//!
//! May not: run timers of its own (the shard's wheel does), or read a clock of its own (the
//! runtime's, which a test may pause, is the one hyper is given).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// hyper's timer, on ringsteal's per-shard timer wheels. Give it to every hyper builder
/// (`.timer(Timer::new())`): without a timer hyper ignores its header-read and keep-alive
/// timeouts.
///
/// hyper computes its deadlines from [`now`](hyper::rt::Timer::now), which is the runtime's
/// clock ([`ringsteal_rt::time::Instant::now`]): on a paused clock a header-read timeout of
/// 30 s fires when that clock has moved 30 s, like every other ringsteal timer.
///
/// ```
/// use hyper::rt::Timer as _;
/// use std::time::{Duration, Instant};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let timer = ringsteal_compat::hyper::Timer::new();
///     let start = Instant::now();
///     let mut sleep = timer.sleep(Duration::from_secs(3600));
///     // hyper moves its timers with `reset`: this one now fires in a millisecond.
///     timer.reset(&mut sleep, Instant::now() + Duration::from_millis(1));
///     sleep.await;
///     assert!(start.elapsed() < Duration::from_secs(60));
/// });
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Timer {
    _priv: (),
}

impl Timer {
    /// The timer.
    pub fn new() -> Self {
        Self { _priv: () }
    }
}

impl hyper::rt::Timer for Timer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(Sleep {
            inner: ringsteal_rt::time::sleep(duration),
        })
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(Sleep {
            inner: ringsteal_rt::time::sleep_until(deadline.into()),
        })
    }

    /// The runtime's clock (paused while a test pauses it), not `std`'s.
    fn now(&self) -> Instant {
        ringsteal_rt::time::Instant::now().into_std()
    }

    /// Moves a [`Sleep`] of this timer in place (its wheel entry and waker stay); any other
    /// `Sleep` is replaced.
    fn reset(&self, sleep: &mut Pin<Box<dyn hyper::rt::Sleep>>, new_deadline: Instant) {
        match sleep.as_mut().downcast_mut_pin::<Sleep>() {
            Some(ours) => ours.get_mut().inner.reset(new_deadline.into()),
            None => *sleep = self.sleep_until(new_deadline),
        }
    }
}

/// A hyper sleep: a ringsteal [`Sleep`](ringsteal_rt::time::Sleep), which is `Send + Sync`
/// by construction (polling it on another shard moves its wheel entry there; dropping or
/// resetting it from any thread asks its shard to update the entry). Polled before its
/// deadline on a thread that runs no shard (a connection driven by `futures::executor`
/// inside `spawn_blocking`, say), it panics, as every ringsteal timer does: drive hyper's
/// connections from ringsteal tasks.
///
/// ```
/// fn is_send_sync<T: Send + Sync>() {}
/// is_send_sync::<ringsteal_compat::hyper::Sleep>();
/// ```
#[derive(Debug)]
pub struct Sleep {
    inner: ringsteal_rt::time::Sleep,
}

impl Sleep {
    /// When it fires.
    pub fn deadline(&self) -> Instant {
        self.inner.deadline().into_std()
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.get_mut().inner.poll_elapsed(cx)
    }
}

impl hyper::rt::Sleep for Sleep {}
