//! A `Signal` that started waiting on one shard or runtime and is awaited somewhere else: it
//! waits where it is awaited, as tokio's handles do. Shard 0 runs only inside `block_on`
//! (ADR-0002), and a runtime's shutdown cancels what is in flight on its rings, so a wait left
//! on the ring it was first polled on would hang, or end the listener. This binary's signals:
//! two real-time numbers, one per test.

mod common;

use std::pin::pin;
use std::sync::mpsc;
use std::task::Poll;
use std::time::Duration;

use common::{raise_here, send_to_self, with_each_wake};
use ringsteal_rt::Placement;
use ringsteal_signal::{signal, Signal, SignalKind};

/// How long a moved listener may take to hear a delivery (a hang guard).
const WAIT_LIMIT: Duration = Duration::from_secs(30);

async fn poll_once<F: std::future::Future>(fut: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    let mut fut = Some(fut);
    std::future::poll_fn(move |cx| Poll::Ready(fut.take().expect("polled once").as_mut().poll(cx)))
        .await
}

/// A listener for `kind` whose `recv` was started (and left waiting) on the current shard.
async fn listener_with_a_kept_wait(kind: SignalKind) -> Signal {
    let mut sig = signal(kind).unwrap();
    assert!(poll_once(pin!(sig.recv())).await.is_pending());
    sig
}

#[test]
fn a_listener_started_in_block_on_hears_on_another_shard_while_shard_0_is_idle() {
    let signum = libc::SIGRTMIN() + 4;
    with_each_wake("listener moved off shard 0", 2, move |wake, rt| {
        let handle = rt.handle();
        let mut sig = rt.block_on(listener_with_a_kept_wait(SignalKind::from_raw(signum)));
        // No thread is inside `block_on` now: shard 0 does not run. The listener waits on
        // shard 1.
        let (waiting_tx, waiting) = mpsc::channel();
        let (tx, rx) = mpsc::channel();
        handle.spawn_with(Placement::Pinned(1), async move {
            let mut recv = pin!(sig.recv());
            assert!(poll_once(recv.as_mut()).await.is_pending());
            waiting_tx.send(()).unwrap();
            let _ = tx.send(recv.await);
        });
        waiting
            .recv_timeout(WAIT_LIMIT)
            .expect("the listener task started");
        send_to_self(signum);
        let got = rx
            .recv_timeout(WAIT_LIMIT)
            .unwrap_or_else(|e| panic!("{wake:?}: the moved listener never heard it: {e}"));
        assert_eq!(got, Some(()), "{wake:?}");
    });
}

#[test]
fn a_listener_started_on_a_runtime_that_was_dropped_hears_on_the_next() {
    let signum = libc::SIGRTMIN() + 5;
    with_each_wake("listener moved to a new runtime", 1, move |wake, rt| {
        let mut sig = rt.block_on(listener_with_a_kept_wait(SignalKind::from_raw(signum)));
        // Its shutdown cancels the poll in flight on its ring.
        drop(rt);
        let next = common::runtime(wake, 1);
        let got = next.block_on(async {
            let mut recv = pin!(sig.recv());
            assert!(
                poll_once(recv.as_mut()).await.is_pending(),
                "{wake:?}: the listener gave up with its first runtime"
            );
            raise_here(signum);
            recv.await
        });
        assert_eq!(got, Some(()), "{wake:?}");
    });
}
