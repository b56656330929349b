//! [`Sleep`]: a future that completes at a deadline, registered in the polling shard's wheel.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::runtime::context;
use crate::runtime::sched::SchedHandle;
use crate::shard::remote::RemoteCmd;
use crate::shard::Shard;

use super::wheel::TimerKey;

/// Completes at [`deadline`](Self::deadline). Created by [`sleep`](super::sleep) and
/// [`sleep_until`](super::sleep_until).
///
/// The timer lives in the wheel of the shard that polls it: no syscall and no SQE per timer.
/// Dropping a `Sleep` removes its entry at once. A `Sleep` moved to another shard and polled
/// there moves its entry with it.
///
/// ```
/// use std::time::{Duration, Instant};
/// use ringsteal_rt::time::sleep;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let start = Instant::now();
///     sleep(Duration::from_micros(300)).await;
///     assert!(start.elapsed() >= Duration::from_micros(300));
/// });
/// ```
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
        let local = context::with_shard(|cur| match cur {
            Some(s)
                if std::ptr::eq(runtime.shared(), Arc::as_ptr(&s.shared)) && s.index == shard =>
            {
                s.wheel.borrow_mut().remove(key, s.counters());
                true
            }
            _ => false,
        });
        if !local {
            runtime.shared().shards[shard]
                .cmds
                .push(RemoteCmd::CancelTimer(key));
        }
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

    /// True once the deadline has passed.
    pub fn is_elapsed(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// Moves the deadline (earlier or later). On the shard that last polled it this moves the
    /// wheel entry in place and keeps the waker, so the task is woken at the new deadline
    /// without polling again.
    pub fn reset(&mut self, deadline: Instant) {
        self.deadline = deadline;
        let Some(reg) = self.registration.take() else {
            return;
        };
        let kept = context::with_shard(|cur| match cur {
            Some(s) if reg.is_on(s) => {
                let mut wheel = s.wheel.borrow_mut();
                let tick = wheel.deadline_tick(deadline);
                match wheel.reschedule(reg.key, tick, s.counters()) {
                    Ok(live) => live,
                    Err(waker) => {
                        drop(wheel);
                        waker.wake();
                        false
                    }
                }
            }
            _ => false,
        });
        if kept {
            self.registration = Some(reg);
        } else {
            reg.cancel();
        }
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
                    return if shard.wheel.borrow_mut().update_waker(reg.key, cx.waker()) {
                        Poll::Pending
                    } else {
                        self.registration = None;
                        Poll::Ready(())
                    };
                }
            }
            if let Some(old) = self.registration.take() {
                old.cancel();
            }
            if Instant::now() >= self.deadline {
                return Poll::Ready(());
            }
            let mut wheel = shard.wheel.borrow_mut();
            let tick = wheel.deadline_tick(self.deadline);
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
pub fn sleep(duration: Duration) -> Sleep {
    Sleep::new(
        Instant::now()
            .checked_add(duration)
            .unwrap_or_else(far_future),
    )
}

/// Sleeps until `deadline`.
///
/// ```
/// # let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// # rt.block_on(async {
/// let at = std::time::Instant::now() + std::time::Duration::from_micros(200);
/// ringsteal_rt::time::sleep_until(at).await;
/// assert!(std::time::Instant::now() >= at);
/// # });
/// ```
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::new(deadline)
}

/// About 30 years from now: "never", for durations too large to add.
pub(crate) fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86400 * 365 * 30)
}
