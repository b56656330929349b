//! `File::close` reports the close itself: with operations still in flight on the file, it
//! waits for them to let go of the descriptor, then closes it through the ring, rather than
//! answer `Ok(())` at once while the descriptor stays open.

mod common;

use std::future::Future;
use std::io::Write;
use std::pin::pin;
use std::task::Poll;

use ringsteal_fs::File;

use common::*;

/// Polls `fut` once, from inside a task.
async fn poll_once<F: Future>(fut: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    let mut fut = Some(fut);
    std::future::poll_fn(|cx| Poll::Ready(fut.take().unwrap().poll(cx))).await
}

/// After a `close` that returned: the read end is gone. At once on a plain ring. On an
/// SQPOLL ring the kernel's SQ thread drops a completed request's reference to the file
/// shortly after its completion is visible (it frees requests in batches), so a read that
/// just completed can keep the pipe's read end alive for a moment after the descriptor was
/// closed: there, wait for it (a write attempt per yield, bounded; the hang guard stands
/// behind it), which still fails if the close never closed.
async fn reader_goes(tx: &mut std::fs::File, sqpoll: bool) {
    if !sqpoll {
        assert!(
            reader_is_gone(tx),
            "close returned while the descriptor was still open"
        );
        return;
    }
    for _ in 0..10_000 {
        if reader_is_gone(tx) {
            return;
        }
        ringsteal_rt::yield_now().await;
    }
    panic!("the read end outlived the close by 10,000 yields");
}

/// The write end sees the read end closed (`EPIPE`: no reader left) only once it is.
fn reader_is_gone(tx: &mut std::fs::File) -> bool {
    match tx.write_all(b"x") {
        Ok(()) => false,
        Err(e) => {
            assert_eq!(e.raw_os_error(), Some(libc::EPIPE), "{e}");
            true
        }
    }
}

#[test]
fn close_after_dropping_a_read_in_flight_waits_for_its_cancellation_then_closes() {
    on_every_shard("close after a dropped read", |ctx| async move {
        for _ in 0..20 {
            let (rx, mut tx) = pipe();
            let file = File::from_std(rx);
            let mut read = file.read_at(Vec::with_capacity(8), u64::MAX);
            assert!(poll_once(std::pin::Pin::new(&mut read)).await.is_pending());
            // Dropped in flight: its cancellation still holds the descriptor for a moment.
            drop(read);
            file.close().await.expect("the close's own result");
            reader_goes(&mut tx, ctx.sqpoll).await;
        }
    });
}

#[test]
fn close_waits_for_a_read_another_task_awaits() {
    on_every_shard("close while another task reads", |ctx| async move {
        let (rx, mut tx) = pipe();
        let file = File::from_std(rx);
        let read = file.read_at(Vec::with_capacity(8), u64::MAX);
        let reader = ringsteal_rt::spawn_local(async move { read.await.0 });
        let mut closing = pin!(file.close());
        assert!(
            poll_once(closing.as_mut()).await.is_pending(),
            "close waits for the read"
        );
        tx.write_all(b"abc").unwrap();
        assert_eq!(reader.await.unwrap().unwrap(), 3);
        closing.await.expect("the close's own result");
        reader_goes(&mut tx, ctx.sqpoll).await;
    });
}
