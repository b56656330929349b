//! The blocking pool: a bounded set of threads for closures that would block a shard
//! (`spawn_blocking`), and for file operations the kernel has no opcode for.

pub(crate) mod pool;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::shard::context::{self, EnterGuard};
use crate::shard::sched::SchedHandle;
use crate::shared::Shared;
use crate::task::{new_task, JoinHandle, HOME_BLOCKING};
use pool::{BlockingPool, PoolHost};

impl PoolHost for Shared {
    type Entered = EnterGuard;

    fn pool(&self) -> &BlockingPool {
        &self.blocking
    }

    fn enter(this: Arc<Self>) -> EnterGuard {
        EnterGuard::new(this)
    }

    /// On a paused clock the shard may be asleep waiting for the pool to go idle before it
    /// auto-advances: ring it (the pool's decrement and this `sleeping` read pair like any
    /// wake).
    fn closure_finished(&self) {
        if self.clock.is_paused() {
            self.notify(0);
        }
    }
}

/// A closure dressed as a future that is ready on its first (and only) poll.
struct BlockingTask<F>(Option<F>);

impl<F> Unpin for BlockingTask<F> {}

impl<F: FnOnce() -> R, R> Future for BlockingTask<F> {
    type Output = R;
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<R> {
        let f = self.0.take().expect("a blocking task is polled once");
        Poll::Ready(f())
    }
}

/// Queues `f` on `shared`'s blocking pool.
pub(crate) fn spawn_blocking<F, R>(shared: &Arc<Shared>, f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    if shared.is_shutdown() {
        return crate::task::cancelled_join_handle();
    }
    let sched = context::with_shard_of(Arc::as_ptr(shared), |cur| SchedHandle::new(shared, cur));
    let (task, join) = new_task(BlockingTask(Some(f)), sched, HOME_BLOCKING);
    shared.blocking.push(shared, task);
    join
}
