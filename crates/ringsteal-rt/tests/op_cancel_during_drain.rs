//! A cancel that reaches a shard while it drains its ring at shutdown: here an op's future is
//! dropped by the destructor of another op's buffer, which the driver runs while draining.
//! The op completes during the drain (the drain cancels it), so the cancel's reference is the
//! last one on its cell: it must be released, freeing the buffer, not pushed onto a ring that
//! nobody submits or reaps any more.

mod common;
mod op_support;

use std::time::{Duration, Instant};

use ringsteal_rt::buf::{IoBuf, IoBufMut};
use ringsteal_rt::op::{self, Op, ReadAt, SharedFd};
use ringsteal_rt::Placement;

use common::blocked_in_io_uring_enter;
use op_support::*;

/// Dropping the runtime must take less than this (its shutdown timeout is 20 s).
const PROMPT: Duration = Duration::from_secs(5);

/// A buffer that also holds another op's future, dropped with it.
struct Holder {
    data: Vec<u8>,
    _held: Op<ReadAt<TrackedBuf>>,
}

// SAFETY: forwards to the Vec, whose heap storage does not move with the wrapper.
unsafe impl IoBuf for Holder {
    fn stable_ptr(&self) -> *const u8 {
        self.data.stable_ptr()
    }
    fn bytes_init(&self) -> usize {
        self.data.bytes_init()
    }
    fn bytes_total(&self) -> usize {
        self.data.bytes_total()
    }
}

// SAFETY: forwards to the Vec, writable over its whole capacity.
unsafe impl IoBufMut for Holder {
    fn stable_mut_ptr(&mut self) -> *mut u8 {
        self.data.stable_mut_ptr()
    }
    unsafe fn set_init(&mut self, pos: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { self.data.set_init(pos) }
    }
}

#[test]
fn a_cancel_queued_during_the_shutdown_drain_releases_its_op() {
    // Also without `IORING_ASYNC_CANCEL_ANY` (as on 5.15-5.18), where nothing but that queued
    // cancel ends the held read: the drain must submit it, not wait for its deadline.
    for (config, cancel_any) in ALL_MODES.map(|c| (c, true)).into_iter().chain([
        (ALL_MODES[0], false),
        (ALL_MODES[1], false),
        (ALL_MODES[3], false),
    ]) {
        watchdog(&format!("{config:?}, cancel_any {cancel_any}"), move || {
            let rt = config
                .builder()
                .shutdown_cancel_any(cancel_any)
                .build()
                .unwrap();
            let handle = rt.handle();
            let probe = Probe::new(handle.clone());
            let (rx_outer, _tx_outer) = pipe();
            let (rx_inner, _tx_inner) = pipe();
            let (outer, inner) = (SharedFd::new(rx_outer), SharedFd::new(rx_inner));
            let shard = config.shards - 1;
            let probe2 = probe.clone();
            rt.block_on(async move {
                ringsteal_rt::spawn_with(Placement::Pinned(shard), async move {
                    let mut held = op::read_at(&inner, probe2.buf(0, 16), u64::MAX);
                    assert!(poll_once(&mut held).await.is_pending());
                    let holder = Holder {
                        data: Vec::with_capacity(16),
                        _held: held,
                    };
                    // Never completes: shutdown drops this task, cancelling the read; its cell
                    // is freed (and `held` dropped, off the task) while the shard drains.
                    let (res, _) = op::read_at(&outer, holder, u64::MAX).await;
                    panic!("a read of an idle pipe completed: {res:?}");
                });
                // Until both reads are in flight (the watchdog bounds this).
                while handle.stats().shards[shard].ops_in_flight < 2 {
                    ringsteal_rt::yield_now().await;
                }
            });
            let started = Instant::now();
            drop(rt);
            assert!(
                started.elapsed() < PROMPT,
                "shutdown waited for its timeout"
            );
            assert_eq!(
                probe.drops(),
                1,
                "the op cancelled during the drain was never freed"
            );
        });
    }
}

/// Sends on its channel when dropped: a task holding one says when shutdown dropped it.
struct SayWhenDropped(std::sync::mpsc::Sender<()>);

impl Drop for SayWhenDropped {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

#[test]
fn a_cancel_from_another_thread_reaches_a_shard_blocked_in_its_drain() {
    // Without `IORING_ASYNC_CANCEL_ANY` nothing but the op's own cancel ends a read of an idle
    // pipe, so shard 1's drain waits for that read. It is held by a plain thread, which drops
    // it once the shard sleeps in the drain: the drain must wake for the cancel, not sleep
    // until its deadline.
    for config in [
        Config::new(2),
        Config::new(2).eventfd(),
        Config::new(2).no_defer_taskrun(),
        Config::new(2).eventfd().no_defer_taskrun(),
        Config::new(2).sqpoll(),
    ] {
        watchdog(&format!("{config:?}"), move || {
            let rt = config.builder().shutdown_cancel_any(false).build().unwrap();
            let probe = Probe::new(rt.handle());
            let (rx, _tx) = pipe();
            let rx = SharedFd::new(rx);
            let (dropped_tx, dropped) = std::sync::mpsc::channel();
            let probe2 = probe.clone();
            let (tid, read) = rt.block_on(async move {
                let (tid, read) = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                    let mut read = op::read_at(&rx, probe2.buf(0, 16), u64::MAX);
                    submit(&mut read).await;
                    // SAFETY: gettid has no preconditions.
                    (unsafe { libc::gettid() }, read)
                })
                .await
                .unwrap();
                // A task on shard 1 that lives until shutdown drops it, just before the drain.
                let started = ringsteal_rt::sync::CancellationToken::new();
                let started2 = started.clone();
                ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                    let _say = SayWhenDropped(dropped_tx);
                    started2.cancel();
                    std::future::pending::<()>().await
                });
                started.cancelled().await;
                (tid, read)
            });
            let holder = std::thread::spawn(move || {
                dropped.recv().unwrap();
                // The shard is past its tasks: the next sleep is the drain's wait (bounded by
                // the watchdog).
                while !blocked_in_io_uring_enter(tid) {
                    std::thread::yield_now();
                }
                drop(read);
            });
            let started = Instant::now();
            drop(rt);
            let took = started.elapsed();
            holder.join().unwrap();
            assert!(
                took < PROMPT,
                "{config:?}: the drain slept {took:?}, until its deadline"
            );
            assert_eq!(probe.drops(), 1, "{config:?}: the read's buffer was freed");
        });
    }
}
