//! Starting a shard: create its ring on its own thread (required by `SINGLE_ISSUER`), build
//! its driver, publish its descriptors and stealer, then run.

use std::sync::mpsc;
use std::sync::Arc;

use crossbeam_deque::Worker;

use super::context::ShardGuard;
use super::{sched, Shard};
use crate::driver::{create_ring, Driver, RingMode};
use crate::error::BuildError;
use crate::shared::config::ThreadHook;
use crate::shared::Shared;

/// Creates shard `index` on the calling thread.
pub(crate) fn create_shard(index: usize, shared: &Arc<Shared>) -> Result<Shard, BuildError> {
    let (ring, setup) = create_ring(shared.config.ring_options(&shared.features)).map_err(|e| {
        if e.is_invalid_arguments() {
            BuildError::Ring {
                shard: index,
                source: e.into(),
            }
        } else {
            BuildError::Unavailable(e)
        }
    })?;
    let driver = Driver::new(ring, setup.mode, shared.wake.needs_eventfd()).map_err(|source| {
        BuildError::Ring {
            shard: index,
            source,
        }
    })?;
    let mut driver = driver;
    driver.set_cancel_any(shared.config.cancel_any);
    // SAFETY: this runs on the shard's thread (above), and the driver lives in the shard,
    // which is `!Send` (shard 0's in `Runtime`, also `!Send`; a worker's on its thread's
    // stack): every enter of this ring and its drop happen on this thread.
    unsafe { driver.register_ring_fd() };
    // On this thread: the kernel keeps io-wq workers per submitting thread.
    driver.limit_io_workers(shared.config.io_workers);
    let remote = &shared.shards[index];
    remote.publish_fds(driver.ring_fd(), driver.eventfd());
    let worker = Worker::new_fifo();
    let _ = remote.stealer.set(worker.stealer());
    shared.record_ring_setup(index, setup);
    Ok(Shard::new(index, shared.clone(), driver, worker))
}

/// What a worker thread reports once its shard is ready (or could not be built).
pub(crate) type Ready = Result<RingMode, BuildError>;

/// How many times a worker's run loop is restarted after a panic escaped it.
pub(super) const MAX_RESTARTS: u32 = 16;

/// The body of a worker shard's thread: the shard's life on it. Build the shard, run the
/// `on_thread_start` hook inside it (a `RuntimeHandle` is current there, as in tokio),
/// report ready, run until shutdown, then the `on_thread_stop` hook. A shard that cannot
/// be built runs neither hook.
pub(crate) fn run_worker_thread(index: usize, shared: Arc<Shared>, ready: mpsc::Sender<Ready>) {
    let shared = &shared;
    if shared.config.pin_shards {
        crate::util::affinity::pin_current_thread(&shared.cpus, index);
    }
    let shard = match create_shard(index, shared) {
        Ok(shard) => shard,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    {
        let _guard = ShardGuard::enter(&shard);
        ThreadHook::run(&shared.config.on_thread_start);
        shard
            .remote()
            .driven
            .store(true, std::sync::atomic::Ordering::SeqCst);
        shard.busy_from(crate::util::monotonic_ns());
        shard.remote().wake_up();
        // Ready once driven: the runtime's first spawns can be handed over to this shard
        // (a hand-off skips shards nobody drives yet, and tasks that started on shard 0 in
        // the meantime would stay there).
        let _ = ready.send(Ok(shard.driver.borrow().mode()));
        drop(ready);
        // User code the loop runs outside tasks (wakers, destructors, an op's `complete`) is
        // contained where it runs, so no panic of user code escapes the loop (ADR-0019).
        // Should one escape anyway (a runtime bug), keep the shard running rather than
        // unwind without `shutdown` (its ring would be torn down with reads in flight into
        // memory about to be freed). One that recurs on every restart is not transient: the
        // shard cannot serve its tasks, so rather than leave spawns, wakes and messages to it
        // waiting for ever while the runtime runs on, the whole runtime shuts down: every
        // JoinHandle resolves and every later spawn fails with `SpawnError::ShuttingDown`.
        let mut restarts = 0;
        loop {
            let run = std::panic::AssertUnwindSafe(|| shard.run_worker());
            if std::panic::catch_unwind(run).is_ok() {
                break;
            }
            if restarts == MAX_RESTARTS {
                shared.begin_shutdown(shared.shutdown_timeout());
                break;
            }
            restarts += 1;
        }
        shard.busy_until(crate::util::monotonic_ns());
        let deadline = crate::util::deadline_after(shared.shutdown_timeout());
        shard.shutdown(deadline);
        ThreadHook::run(&shared.config.on_thread_stop);
    }
    sched::return_credits(&shard);
}
