//! A cancel that reaches a shard while it drains its ring at shutdown: here an op's future is
//! dropped by the destructor of another op's buffer, which the driver runs while draining.
//! The op completes during the drain (the drain cancels it), so the cancel's reference is the
//! last one on its cell: it must be released, freeing the buffer, not pushed onto a ring that
//! nobody submits or reaps any more.

mod op_support;

use std::time::{Duration, Instant};

use ringsteal_rt::buf::{IoBuf, IoBufMut};
use ringsteal_rt::op::{self, Op, ReadAt, SharedFd};
use ringsteal_rt::Placement;

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
