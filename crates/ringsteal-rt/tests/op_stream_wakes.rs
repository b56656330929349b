//! Wakers woken by what the driver frees while it reaps: a provided buffer that goes back to
//! its ring from inside a reap (the buffer of an op whose last completion frees its cell, or
//! the last item of a dropped stream's request, released with its cell) makes a stalled
//! stream ready to re-arm, and the stream's waker must be woken after the reap, as the wakers
//! of completed ops are: a waker is user code, and one that polls its future at once (an
//! executor that runs tasks inline) submits to the same ring, which the reap still holds.

mod common;
mod stream_support;

use std::future::Future;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use common::{under_every_config, yield_until, PollsInline};
use ringsteal_rt::buf::RecvBuf;
use ringsteal_rt::op::{self, Op, Operation, SharedFd, Sqes};
use stream_support::tcp_pair;

/// A poll of a descriptor nobody writes to, holding a received buffer until its cell is
/// freed: by the reap of its last completion, once it is cancelled.
struct HoldsBuf {
    fd: SharedFd,
    _buf: RecvBuf,
}

// SAFETY: a poll references no memory; the op holds the descriptor until its CQE.
unsafe impl Operation for HoldsBuf {
    type Output = ();
    fn prepare(&mut self) -> Sqes {
        Sqes::One(ringsteal_uring::opcode::poll_add(
            self.fd.as_raw_fd(),
            libc::POLLIN as u32,
            false,
        ))
    }
    fn complete(self, _: &[(i32, u32)]) {}
    fn fail(self, _: std::io::Error) {}
}

#[test]
fn a_buffer_returned_inside_a_reap_wakes_its_stalled_stream_after_the_reap() {
    under_every_config("stall woken from a reap", 1, |config, b| {
        let rt = b.recv_buffers(2, 4096).build().unwrap();
        let handle = rt.handle();
        rt.block_on(async {
            let (server, mut client) = tcp_pair();
            let mut stream = op::recv_multishot(&SharedFd::new(server.into()));
            // Both buffers of the group held here, one receive each.
            client.write_all(b"a").unwrap();
            let first = stream.next().await.unwrap().unwrap();
            client.write_all(b"b").unwrap();
            let second = stream.next().await.unwrap().unwrap();
            assert!(first.is_provided(), "{config:?}: setup: provided buffers");
            // More data with no buffer free: the stream stalls, its waker left with the group.
            client.write_all(b"c").unwrap();
            let inline = PollsInline::for_this_task().await;
            stall(&mut stream, &inline, &handle).await;
            // One buffer goes back from inside a reap: the last completion of this op (its
            // cancellation) frees its cell, and the buffer in it.
            let (idle, _writer) = std::os::unix::net::UnixStream::pair().unwrap();
            let mut holder = Op::new(HoldsBuf {
                fd: SharedFd::new(idle.into()),
                _buf: first,
            });
            let polled =
                std::future::poll_fn(|cx| Poll::Ready(std::pin::Pin::new(&mut holder).poll(cx)))
                    .await;
            assert!(polled.is_pending());
            ringsteal_rt::yield_now().await; // submitted
            drop(holder);
            inline.check_next_wake(config).await;
            drop(second);
        });
    });
}

/// Stalls `stream` (whose group has no buffer free, and which has data waiting) with
/// `inline` as its waker; returns once it waits for buffers.
async fn stall(
    stream: &mut op::RecvStream,
    inline: &Arc<PollsInline>,
    handle: &ringsteal_rt::RuntimeHandle,
) {
    let waker = Waker::from(inline.clone());
    let stalls = handle.stats().total().enobufs_stalls;
    loop {
        let polled = stream.poll_next(&mut Context::from_waker(&waker));
        assert!(polled.is_pending(), "no buffer to receive into");
        if handle.stats().total().enobufs_stalls > stalls {
            break;
        }
        ringsteal_rt::yield_now().await;
    }
    inline.reset();
}

#[test]
fn a_dropped_streams_last_buffer_wakes_a_stalled_stream_after_the_reap() {
    under_every_config("stall woken by a freed stream", 1, |config, b| {
        // Four buffers (a stalled stream re-arms once two are free) and a small ring (a
        // completion queue of 16), so a few dozen NOPs fill its completion queue.
        let rt = b.ring_entries(8).recv_buffers(4, 4096).build().unwrap();
        let handle = rt.handle();
        rt.block_on(async {
            let (server_a, mut client_a) = tcp_pair();
            let (server_b, mut client_b) = tcp_pair();
            let mut a = op::recv_multishot(&SharedFd::new(server_a.into()));
            let mut b = op::recv_multishot(&SharedFd::new(server_b.into()));
            // Every buffer held here: three of A's receives and one of B's.
            let mut held = Vec::new();
            for data in [&b"a1"[..], b"a2", b"a3"] {
                client_a.write_all(data).unwrap();
                held.push(a.next().await.unwrap().unwrap());
            }
            client_b.write_all(b"b1").unwrap();
            held.push(b.next().await.unwrap().unwrap());
            assert!(held[0].is_provided(), "{config:?}: setup: provided buffers");
            // A stalls; one buffer back is not enough to wake it.
            client_a.write_all(b"a4").unwrap();
            let inline = PollsInline::for_this_task().await;
            stall(&mut a, &inline, &handle).await;
            drop(held.remove(0));
            // B's request ends with data in its last completion (the completion queue is
            // full: the kernel cannot post one that keeps it armed), into the free buffer;
            // B is dropped, from another thread, before that completion is reaped.
            let mut nops = Vec::new();
            std::future::poll_fn(|cx| {
                for _ in 0..64 {
                    let mut nop = op::nop();
                    let _ = std::pin::Pin::new(&mut nop).poll(cx);
                    nops.push(nop);
                }
                Poll::Ready(())
            })
            .await;
            client_b.write_all(b"b2").unwrap();
            std::thread::spawn(move || drop(b)).join().unwrap();
            drop(nops);
            // Once that completion is reaped its buffer is held by B's cell; one more back
            // here, and the cell's release of it is the one that wakes A.
            yield_until(|| handle.stats().total().bufs_in_use == 4).await;
            drop(held.remove(0));
            inline.check_next_wake(config).await;
            drop(held);
        });
    });
}
