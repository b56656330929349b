//! User code on the completion path that panics: a buffer whose `Drop` panics when the driver
//! frees an abandoned op's cell, and a waker that panics when its op completes. The panic is
//! reported (by the panic hook) and contained: the rest of the reaped batch is delivered and
//! the shard, a worker or shard 0, keeps running.

mod common;
mod op_support;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Wake, Waker};

use ringsteal_rt::buf::{IoBuf, IoBufMut};
use ringsteal_rt::op::{self, SharedFd};
use ringsteal_rt::Placement;

use common::{quiet_intentional_panics, INTENTIONAL};
use op_support::*;

/// Ops completed in the same batch as the panicking code.
const NEIGHBOURS: usize = 8;

/// A buffer whose destructor panics.
struct PanickingBuf(Vec<u8>);

impl Drop for PanickingBuf {
    fn drop(&mut self) {
        panic!("{INTENTIONAL}: a buffer's Drop");
    }
}

// SAFETY: forwards to the Vec, whose heap storage does not move with the wrapper.
unsafe impl IoBuf for PanickingBuf {
    fn stable_ptr(&self) -> *const u8 {
        self.0.stable_ptr()
    }
    fn bytes_init(&self) -> usize {
        self.0.bytes_init()
    }
    fn bytes_total(&self) -> usize {
        self.0.bytes_total()
    }
}

// SAFETY: forwards to the Vec, writable over its whole capacity.
unsafe impl IoBufMut for PanickingBuf {
    fn stable_mut_ptr(&mut self) -> *mut u8 {
        self.0.stable_mut_ptr()
    }
    unsafe fn set_init(&mut self, pos: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { self.0.set_init(pos) }
    }
}

/// A waker that panics when woken.
struct PanickingWaker;

impl Wake for PanickingWaker {
    fn wake(self: Arc<Self>) {
        panic!("{INTENTIONAL}: a waker");
    }
}

/// On `shard`: abandons an in-flight read whose buffer panics when dropped, and submits a nop
/// whose waker panics, with [`NEIGHBOURS`] nops behind them in the same submission; every
/// neighbour must complete, and the shard must go on running tasks afterwards.
async fn panics_on_the_completion_path(shard: usize) {
    let (rx, _tx) = pipe();
    let rx = SharedFd::new(rx);
    let mut read = op::read_at(&rx, PanickingBuf(Vec::with_capacity(8)), u64::MAX);
    assert!(poll_once(&mut read).await.is_pending());
    // Queues a cancel; the driver frees the cell (dropping the buffer) at its CQE.
    drop(read);
    let mut woken_badly = op::nop();
    let panicky = Waker::from(Arc::new(PanickingWaker));
    assert!(Pin::new(&mut woken_badly)
        .poll(&mut Context::from_waker(&panicky))
        .is_pending());
    let mut nops: Vec<_> = (0..NEIGHBOURS).map(|_| op::nop()).collect();
    for nop in &mut nops {
        assert!(poll_once(nop).await.is_pending());
    }
    for nop in nops {
        nop.await.expect("a neighbour nop");
    }
    woken_badly.await.expect("the nop with the panicking waker");
    let still_here = ringsteal_rt::spawn_with(Placement::Pinned(shard), async {
        ringsteal_rt::current_shard()
    });
    assert_eq!(still_here.await.unwrap(), Some(shard));
}

#[test]
fn panics_in_buffer_drops_and_wakers_on_the_completion_path_are_contained() {
    quiet_intentional_panics();
    for config in TWO_SHARD_MODES {
        watchdog(&format!("{config:?}"), move || {
            let rt = config.build();
            rt.block_on(async {
                // Shard 0 (block_on's own thread), then a worker shard.
                panics_on_the_completion_path(0).await;
                ringsteal_rt::spawn_with(Placement::Pinned(1), panics_on_the_completion_path(1))
                    .await
                    .expect("the task on shard 1");
                panics_on_the_completion_path(0).await;
            });
        });
    }
}
