//! A poll adapter whose readiness wait was armed on one shard's ring and is then polled on
//! another shard, or on a runtime built after the first was dropped: the wait is armed anew
//! where it is polled (`Readiness::poll_ready`), so a read or write moved out of a
//! `block_on` completes on the shard it moved to, and a stream outlives its runtime.

use std::future::poll_fn;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream as StdUnixStream;
use std::sync::mpsc;
use std::task::Poll;
use std::time::Duration;

use ringsteal_compat::PollIo;
use ringsteal_net::UnixStream;
use ringsteal_rt::{Placement, Runtime};

/// How long a test waits for what must happen before calling it a hang.
const HANG_GUARD: Duration = Duration::from_secs(20);

type Io = PollIo<UnixStream>;

/// Polls a read once; true if it was pending (its wait is then armed on this shard's ring).
async fn read_pends(io: &mut Io) -> bool {
    let mut buf = [0u8; 16];
    poll_fn(|cx| Poll::Ready(io.poll_read(cx, &mut buf).is_pending())).await
}

/// Writes until a write is pending (the socket is full and the wait is armed here); returns
/// the bytes written.
async fn write_until_pending(io: &mut Io) -> usize {
    let chunk = [7u8; 16 * 1024];
    let mut written = 0;
    poll_fn(|cx| loop {
        match io.poll_write(cx, &chunk) {
            Poll::Ready(Ok(n)) => written += n,
            Poll::Ready(Err(e)) => panic!("write: {e}"),
            Poll::Pending => return Poll::Ready(()),
        }
    })
    .await;
    written
}

/// Runs `body` on shard 1 of `rt` (shard 0 not running: no `block_on` meanwhile); `body`
/// sends `()` on its first argument once its operation is pending there, and its result on
/// the second.
fn on_shard_1<T: Send + 'static>(
    rt: &Runtime,
    body: impl FnOnce(
        mpsc::Sender<()>,
        mpsc::Sender<T>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
) -> (mpsc::Receiver<()>, mpsc::Receiver<T>) {
    let (pending_tx, pending_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel();
    drop(
        rt.handle()
            .spawn_with(Placement::Pinned(1), body(pending_tx, done_tx)),
    );
    (pending_rx, done_rx)
}

#[test]
fn a_read_armed_in_block_on_completes_on_the_shard_it_moved_to() {
    let rt = Runtime::builder().shards(2).build().unwrap();
    let (a, mut peer) = StdUnixStream::pair().unwrap();
    let mut io = rt.block_on(async move {
        let mut io = PollIo::new(UnixStream::from_std(a).unwrap());
        assert!(read_pends(&mut io).await, "nothing to read yet");
        io
    });
    let (pending, done) = on_shard_1(&rt, move |pending, done| {
        Box::pin(async move {
            let mut buf = [0u8; 16];
            let mut first = true;
            let n = poll_fn(|cx| {
                let r = io.poll_read(cx, &mut buf);
                if std::mem::take(&mut first) {
                    assert!(r.is_pending(), "nothing written yet");
                    pending.send(()).unwrap();
                }
                r
            })
            .await;
            done.send(n.map(|n| buf[..n].to_vec())).unwrap();
        })
    });
    pending
        .recv_timeout(HANG_GUARD)
        .expect("the read on shard 1 started");
    peer.write_all(b"hello").unwrap();
    let got = done
        .recv_timeout(HANG_GUARD)
        .expect("the read completed on shard 1 while shard 0 was not running");
    assert_eq!(got.unwrap(), b"hello");
}

#[test]
fn a_write_armed_in_block_on_completes_on_the_shard_it_moved_to() {
    let rt = Runtime::builder().shards(2).build().unwrap();
    let (a, mut peer) = StdUnixStream::pair().unwrap();
    let (mut io, written) = rt.block_on(async move {
        let mut io = PollIo::new(UnixStream::from_std(a).unwrap());
        let written = write_until_pending(&mut io).await;
        (io, written)
    });
    let (pending, done) = on_shard_1(&rt, move |pending, done| {
        Box::pin(async move {
            let mut first = true;
            let n = poll_fn(|cx| {
                let r = io.poll_write(cx, b"after");
                if std::mem::take(&mut first) {
                    assert!(r.is_pending(), "the socket is still full");
                    pending.send(()).unwrap();
                }
                r
            })
            .await;
            done.send(n).unwrap();
            drop(io);
        })
    });
    pending
        .recv_timeout(HANG_GUARD)
        .expect("the write on shard 1 started");
    // Read everything the full socket holds: the writer then has room.
    let mut drained = vec![0u8; written];
    peer.read_exact(&mut drained).unwrap();
    let n = done
        .recv_timeout(HANG_GUARD)
        .expect("the write completed on shard 1 while shard 0 was not running")
        .unwrap();
    assert!(n > 0 && n <= 5);
    let mut tail = vec![0u8; n];
    peer.read_exact(&mut tail).unwrap();
    assert_eq!(tail, &b"after"[..n]);
}

#[test]
fn a_stream_with_a_read_armed_on_a_dropped_runtime_reads_on_the_next() {
    let first = Runtime::builder().shards(1).build().unwrap();
    let (a, mut peer) = StdUnixStream::pair().unwrap();
    let mut io = first.block_on(async move {
        let mut io = PollIo::new(UnixStream::from_std(a).unwrap());
        assert!(read_pends(&mut io).await, "nothing to read yet");
        io
    });
    drop(first);
    peer.write_all(b"hello").unwrap();
    let next = Runtime::builder().shards(1).build().unwrap();
    let got = next.block_on(async move {
        let mut buf = [0u8; 16];
        let n = ringsteal_rt::time::timeout(HANG_GUARD, poll_fn(|cx| io.poll_read(cx, &mut buf)))
            .await
            .expect("the read completed");
        n.map(|n| buf[..n].to_vec())
    });
    assert_eq!(got.expect("a healthy socket reads"), b"hello");
}
