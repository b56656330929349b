//! What happens as `block_on` returns (shard 0 runs only inside it): the completions its
//! leaving reaps wake their tasks elsewhere at once, and movable tasks that yielded through
//! a wrapped waker move to the other shards with the rest, rather than wait for the next
//! `block_on` (both hung until then before; a review found them).

mod common;

use std::future::{poll_fn, Future};
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll, Wake, Waker};

use common::*;
use ringsteal_rt::io::{InLane, Lane};
use ringsteal_rt::op::{RecvOp, SharedFd};
use ringsteal_rt::{spawn_with, Placement};

/// Rounds per configuration: each fault showed in every round; several make a pass mean
/// something.
const ROUNDS: usize = 5;

#[test]
fn a_lane_let_go_as_block_on_returns_wakes_its_next_holder_on_another_shard() {
    under_every_config("lane let go leaving block_on", 2, |config, builder| {
        if matches!(config, Config::SqPoll) {
            // The kernel's poller takes the cancel from the queue in its own time, so its
            // completion may come after the leaving reap: then it is reaped at the next
            // `block_on`, as every completion on shard 0's ring that comes later (the limit
            // ADR-0039's second amendment states).
            return;
        }
        let rt = builder.build().expect("runtime");
        for round in 0..ROUNDS {
            let (a, mut peer) = UnixStream::pair().unwrap();
            let fd = SharedFd::new(a.into());
            let lane = Lane::new();
            let (tx, rx) = mpsc::channel();
            rt.block_on(async {
                let guard = lane.acquire().await;
                let mut read = Box::pin(InLane::read(RecvOp::new(&fd, vec![0u8; 16], 0), guard));
                poll_fn(|cx| {
                    assert!(read.as_mut().poll(cx).is_pending(), "nothing was sent yet");
                    Poll::Ready(())
                })
                .await;
                // A task on shard 1 queues for the lane the read holds.
                let queued = Signal::new();
                let (lane, fd, q) = (lane.clone(), fd.clone(), queued.clone());
                spawn_with(Placement::Pinned(1), async move {
                    let mut acquire = pin!(lane.acquire());
                    let first = poll_fn(|cx| Poll::Ready(acquire.as_mut().poll(cx))).await;
                    assert!(first.is_pending(), "the lane is held");
                    q.add();
                    let guard = acquire.await;
                    let out = InLane::read(RecvOp::new(&fd, vec![0u8; 16], 0), guard).await;
                    let (res, buf) = out.into_parts().0;
                    let n = res.expect("the read");
                    tx.send(buf[..n].to_vec()).unwrap();
                });
                queued.wait_for(1).await;
                // Dropped: cancelled, and its completion (which lets the lane go) is reaped
                // as `block_on` returns.
                drop(read);
            });
            peer.write_all(b"hello").unwrap();
            let got = rx.recv_timeout(HANG_LIMIT / 2).unwrap_or_else(|_| {
                panic!("{config:?} round {round}: the shard-1 read never woke")
            });
            assert_eq!(got, b"hello");
        }
    });
}

/// Forwards wakes to the waker it was made from: the waker a combinator
/// (`FuturesUnordered`, say) hands its inner futures.
struct Forward(Waker);

impl Wake for Forward {
    fn wake(self: Arc<Self>) {
        self.0.wake_by_ref()
    }
}

/// Polls the inner future with a [`Forward`] waker.
struct Wrapped<F>(Pin<Box<F>>);

impl<F: Future> Future for Wrapped<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let waker = Waker::from(Arc::new(Forward(cx.waker().clone())));
        self.0.as_mut().poll(&mut Context::from_waker(&waker))
    }
}

#[test]
fn a_task_yielding_through_a_wrapped_waker_keeps_running_after_block_on_returns() {
    under_every_config("wrapped yield leaving block_on", 2, |config, builder| {
        let rt = builder.build().expect("runtime");
        for round in 0..ROUNDS {
            let returned = Arc::new(AtomicBool::new(false));
            let (tx, rx) = mpsc::channel();
            let started = Signal::new();
            rt.block_on(async {
                let (returned, task_started) = (returned.clone(), started.clone());
                // Started here on shard 0 (a lone spawn from block_on), it yields forever,
                // each yield through a wrapped waker; once block_on has returned it reports
                // 100 more yields.
                ringsteal_rt::spawn(async move {
                    task_started.add();
                    let mut after = 0;
                    loop {
                        Wrapped(Box::pin(ringsteal_rt::yield_now())).await;
                        if returned.load(SeqCst) {
                            after += 1;
                            if after == 100 {
                                tx.send(()).unwrap();
                                return;
                            }
                        }
                    }
                });
                started.wait_for(1).await;
                ringsteal_rt::yield_now().await;
            });
            returned.store(true, SeqCst);
            rx.recv_timeout(HANG_LIMIT / 2).unwrap_or_else(|_| {
                panic!("{config:?} round {round}: the task froze when block_on returned")
            });
        }
    });
}
