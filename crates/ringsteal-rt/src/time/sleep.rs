//! [`Sleep`]: a future that completes at a deadline, registered in the polling shard's wheel.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::shard::context;
use crate::shard::sched::SchedHandle;
use crate::shard::{run_here_or_send, Shard};
use crate::shared::remote::RemoteCmd;

use super::wheel::TimerKey;
use super::Instant;

/// Completes at [`deadline`](Self::deadline). Created by [`sleep`](super::sleep) and
/// [`sleep_until`](super::sleep_until).
///
/// The timer lives in the wheel of the shard that polls it: no syscall and no SQE per timer.
/// Dropping a `Sleep` removes its entry at once. A `Sleep` moved to another shard and polled
/// there moves its entry with it.
///
/// ```
/// use std::time::Duration;
/// use ringsteal_rt::time::{sleep, Instant};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let start = Instant::now();
///     sleep(Duration::from_micros(300)).await;
///     assert!(start.elapsed() >= Duration::from_micros(300));
/// });
/// ```
///
/// # Panics
/// When polled before its deadline on a thread that runs no ringsteal shard (a
/// `spawn_blocking` closure, another executor): timers live in a shard's wheel. Await it in
/// a task or in `block_on`.
#[must_use = "a Sleep does nothing unless polled"]
pub struct Sleep {
    deadline: Instant,
    registration: Option<Registration>,
}

struct Registration {
    runtime: SchedHandle,
    shard: usize,
    key: TimerKey,
}

impl Registration {
    fn is_on(&self, shard: &Shard) -> bool {
        self.shard == shard.index && std::ptr::eq(self.runtime.shared(), Arc::as_ptr(&shard.shared))
    }

    /// Removes the entry: directly on its own shard, by request from elsewhere.
    fn cancel(self) {
        let Registration {
            runtime,
            shard,
            key,
        } = self;
        // The wheel is borrowed if this drop runs inside a wheel operation (a waker the wheel
        // drops owned this Sleep): then the shard does it after the tick.
        run_here_or_send(
            runtime.shared(),
            shard,
            |s| s.try_remove_timer(key),
            || RemoteCmd::CancelTimer(key),
        );
    }
}

impl Sleep {
    pub(crate) fn new(deadline: Instant) -> Self {
        Self {
            deadline,
            registration: None,
        }
    }

    /// When this sleep completes.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Removes the wheel entry now (the owner no longer waits for the deadline).
    pub(crate) fn disarm(&mut self) {
        if let Some(reg) = self.registration.take() {
            reg.cancel();
        }
    }

    /// True once the deadline has passed.
    pub fn is_elapsed(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// Moves the deadline (earlier or later), keeping the registered waker: a task waiting
    /// on this `Sleep` is woken at the new deadline without polling again, whichever thread
    /// calls `reset`. On the timer's own shard the entry moves in place; from anywhere else
    /// the shard is asked to move it.
    pub fn reset(&mut self, deadline: Instant) {
        self.deadline = deadline;
        let Some(reg) = &self.registration else {
            return;
        };
        let (key, deadline) = (reg.key, deadline.into_std());
        run_here_or_send(
            reg.runtime.shared(),
            reg.shard,
            |s| s.try_move_timer(key, deadline),
            || RemoteCmd::ResetTimer(key, deadline),
        );
    }

    /// Polls without pinning (`Sleep` is `Unpin`).
    pub fn poll_elapsed(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        context::with_shard(|cur| {
            let Some(shard) = cur else {
                if Instant::now() >= self.deadline {
                    return Poll::Ready(());
                }
                panic!("a ringsteal Sleep was polled outside a ringsteal shard: timers live in a shard's wheel");
            };
            if let Some(reg) = &self.registration {
                if reg.is_on(shard) {
                    if shard.wheel.borrow_mut().update_waker(reg.key, cx.waker()) {
                        return Poll::Pending;
                    }
                    // The entry fired. Its deadline is ours unless a `reset` from another
                    // thread moved ours later meanwhile: check the clock below.
                    self.registration = None;
                }
            }
            if let Some(old) = self.registration.take() {
                old.cancel();
            }
            if Instant::from_std(shard.shared.clock.now()) >= self.deadline {
                return Poll::Ready(());
            }
            let mut wheel = shard.wheel.borrow_mut();
            let tick = wheel.deadline_tick(self.deadline.into_std());
            match wheel.insert(tick, cx.waker().clone(), shard.counters()) {
                Ok(key) => {
                    drop(wheel);
                    self.registration = Some(Registration {
                        runtime: SchedHandle::new(&shard.shared, Some(shard)),
                        shard: shard.index,
                        key,
                    });
                    Poll::Pending
                }
                Err(_) => Poll::Ready(()),
            }
        })
    }
}

impl Future for Sleep {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.get_mut().poll_elapsed(cx)
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(reg) = self.registration.take() {
            reg.cancel();
        }
    }
}

impl std::fmt::Debug for Sleep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sleep")
            .field("deadline", &self.deadline)
            .finish()
    }
}

/// Sleeps for `duration` (resolution: 1 µs; never returns early).
///
/// ```
/// # let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// # rt.block_on(async {
/// ringsteal_rt::time::sleep(std::time::Duration::from_millis(1)).await;
/// # });
/// ```
///
/// # Panics
/// The `Sleep`, when polled before its deadline on a thread that runs no ringsteal shard
/// (a `spawn_blocking` closure, another executor): timers live in a shard's wheel. Await it
/// in a task or in `block_on`.
pub fn sleep(duration: Duration) -> Sleep {
    Sleep::new(
        Instant::now()
            .checked_add(duration)
            .unwrap_or_else(far_future),
    )
}

/// Sleeps until `deadline` on the runtime's clock (see [`Instant`]).
///
/// ```
/// # let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// # rt.block_on(async {
/// use ringsteal_rt::time::{sleep_until, Instant};
///
/// let at = Instant::now() + std::time::Duration::from_micros(200);
/// sleep_until(at).await;
/// assert!(Instant::now() >= at);
/// # });
/// ```
///
/// # Panics
/// The `Sleep`, when polled before its deadline on a thread that runs no ringsteal shard
/// (a `spawn_blocking` closure, another executor): timers live in a shard's wheel. Await it
/// in a task or in `block_on`.
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::new(deadline)
}

/// About 30 years from now: "never", for durations too large to add.
pub(crate) fn far_future() -> Instant {
    Instant::now() + crate::util::NEVER
}
