//! [`Sleep`]: a future that completes at a deadline, registered in the polling shard's wheel.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::shard::context;
use crate::shard::sched::SchedHandle;
use crate::shard::{run_here_or_send, Shard};
use crate::shared::remote::RemoteCmd;
use crate::shared::Shared;

use super::foreign::ForeignTimer;
use super::wheel::TimerKey;
use super::Instant;

/// Completes at [`deadline`](Self::deadline). Created by [`sleep`](super::sleep) and
/// [`sleep_until`](super::sleep_until).
///
/// The timer lives in the wheel of the shard that polls it: no syscall and no SQE per timer.
/// Dropping a `Sleep` removes its entry at once. A `Sleep` moved to another shard and polled
/// there moves its entry with it. Polled on a thread that runs no shard but is in a runtime's
/// context (a `spawn_blocking` closure that drives it with another executor, a thread inside
/// [`RuntimeHandle::enter`](crate::RuntimeHandle::enter)), it works as tokio's does: its
/// timer is set in a shard's wheel by a message (shard 1's, or on a one-shard runtime shard
/// 0's, which runs only inside `block_on`).
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
/// When polled before its deadline on a thread that runs no ringsteal shard and is in no
/// runtime's context (a plain `std::thread`), as tokio's: no runtime has a wheel for it.
/// Also when polled after its runtime shut down with its timer pending.
#[must_use = "a Sleep does nothing unless polled"]
pub struct Sleep {
    deadline: Instant,
    registration: Option<Registration>,
}

enum Registration {
    /// In the wheel of the shard that polled it.
    OnShard {
        runtime: SchedHandle,
        shard: usize,
        key: TimerKey,
    },
    /// Set from off the shards, in `shard`'s wheel (`foreign.rs`).
    Foreign {
        runtime: Arc<Shared>,
        shard: usize,
        timer: Arc<ForeignTimer>,
    },
}

impl Registration {
    fn is_on(&self, shard: &Shard) -> bool {
        match self {
            Registration::OnShard {
                runtime, shard: s, ..
            } => *s == shard.index && std::ptr::eq(runtime.shared(), Arc::as_ptr(&shard.shared)),
            Registration::Foreign { .. } => false,
        }
    }

    /// Removes the entry: directly on its own shard, by request from elsewhere.
    fn cancel(self) {
        match self {
            Registration::OnShard {
                runtime,
                shard,
                key,
            } => {
                // The wheel is borrowed if this drop runs inside a wheel operation (a waker
                // the wheel drops owned this Sleep): then the shard does it after the tick.
                run_here_or_send(
                    runtime.shared(),
                    shard,
                    |s| s.try_remove_timer(key),
                    || RemoteCmd::CancelTimer(key),
                );
            }
            Registration::Foreign {
                runtime,
                shard,
                timer,
            } => {
                if let Some(key) = timer.cancel() {
                    run_here_or_send(
                        &runtime,
                        shard,
                        |s| s.try_remove_timer(key),
                        || RemoteCmd::CancelTimer(key),
                    );
                }
            }
        }
    }

    /// The runtime whose wheel holds the timer.
    fn runtime(&self) -> Arc<Shared> {
        match self {
            Registration::OnShard { runtime, .. } => runtime.shared_arc(),
            Registration::Foreign { runtime, .. } => runtime.clone(),
        }
    }
}

/// What a `Sleep` polled off the shards after its runtime shut down panics with (tokio's
/// does too: no timer can fire any more).
const SHUT_DOWN: &str =
    "a ringsteal Sleep was polled after its runtime shut down, its deadline not reached";

/// Sets a timer for `deadline` in a wheel of `runtime` from off its shards, to wake `waker`.
fn set_foreign(runtime: Arc<Shared>, deadline: Instant, waker: &Waker) -> Registration {
    let shard = usize::from(runtime.shards.len() > 1);
    let timer = ForeignTimer::new(deadline.into_std(), waker);
    let cmd = RemoteCmd::ForeignTimer(timer.clone());
    runtime.shards[shard].cmds.push(cmd);
    runtime.notify(shard);
    runtime.sweep_cmds_if_shut_down(shard);
    Registration::Foreign {
        runtime,
        shard,
        timer,
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
        match &self.registration {
            None => {}
            Some(Registration::OnShard {
                runtime,
                shard,
                key,
            }) => {
                let (key, deadline) = (*key, deadline.into_std());
                run_here_or_send(
                    runtime.shared(),
                    *shard,
                    |s| s.try_move_timer(key, deadline),
                    || RemoteCmd::ResetTimer(key, deadline),
                );
            }
            Some(Registration::Foreign { timer, .. }) => {
                // A new timer for the new deadline, waking the same task.
                let waker = timer.take_waker();
                if let Some(old) = self.registration.take() {
                    let runtime = old.runtime();
                    old.cancel();
                    if let Some(w) = waker {
                        self.registration = Some(set_foreign(runtime, deadline, &w));
                    }
                }
            }
        }
    }

    /// Polls without pinning (`Sleep` is `Unpin`).
    pub fn poll_elapsed(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        context::with_shard(|cur| {
            let Some(shard) = cur else {
                return self.poll_off_shard(cx);
            };
            if let Some(reg @ Registration::OnShard { key, .. }) = &self.registration {
                if reg.is_on(shard) {
                    if shard.wheel.borrow_mut().update_waker(*key, cx.waker()) {
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
                    self.registration = Some(Registration::OnShard {
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

    /// [`poll_elapsed`](Self::poll_elapsed) on a thread that runs no shard: the timer is set
    /// in a shard's wheel of the runtime it was registered with, or else of this thread's.
    #[cold]
    #[inline(never)]
    fn poll_off_shard(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.deadline {
            self.disarm();
            return Poll::Ready(());
        }
        if let Some(Registration::Foreign { timer, .. }) = &self.registration {
            match timer.poll(cx) {
                Poll::Pending => return Poll::Pending,
                // Fired: the deadline is ours unless a reset moved it later meanwhile, which
                // set a new timer; the clock said above it has not passed.
                Poll::Ready(true) => {
                    self.registration = None;
                    return Poll::Ready(());
                }
                Poll::Ready(false) => panic!("{SHUT_DOWN}"),
            }
        }
        let runtime = match self.registration.take() {
            Some(old) => {
                let runtime = old.runtime();
                old.cancel();
                Some(runtime)
            }
            None => context::current_shared(),
        };
        let Some(runtime) = runtime else {
            panic!(
                "a ringsteal Sleep was polled outside a ringsteal runtime (not on a shard, not \
                 in a spawn_blocking closure or RuntimeHandle::enter): no runtime has a wheel \
                 for its timer"
            );
        };
        if runtime.is_shutdown() {
            panic!("{SHUT_DOWN}");
        }
        self.registration = Some(set_foreign(runtime, self.deadline, cx.waker()));
        Poll::Pending
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
/// The `Sleep`, when polled before its deadline on a thread that runs no ringsteal shard and
/// is in no runtime's context (see [`Sleep`]).
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
/// The `Sleep`, when polled before its deadline on a thread that runs no ringsteal shard and
/// is in no runtime's context (see [`Sleep`]).
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::new(deadline)
}

/// About 30 years from now: "never", for durations too large to add.
pub(crate) fn far_future() -> Instant {
    Instant::now() + crate::util::NEVER
}
