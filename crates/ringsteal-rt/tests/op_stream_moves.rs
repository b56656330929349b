//! Receive streams that move between shards at awkward moments: stalled for want of one
//! shard's provided buffers and then polled on another shard (which selects from its own
//! group, so it must re-arm there rather than wait for the first shard's buffers), and armed
//! inside `block_on` and then handed to a worker shard's task (its request stays on shard
//! 0's ring, served whenever shard 0 runs: the data arrives, in order, once it does).
//! Under every wake and ring configuration.

mod common;
mod stream_support;

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use common::under_every_config;
use ringsteal_rt::op::{self, SharedFd};
use ringsteal_rt::{Feature, Placement, RuntimeHandle};
use stream_support::{tcp_pair, write_pattern, PatternCheck};

/// Far above anything healthy, far below the hang guard: a stall fails with a clear message.
const GUARD: Duration = Duration::from_secs(20);

/// Polls the stream once; true if it is pending.
async fn is_pending(stream: &mut op::RecvStream) -> bool {
    std::future::poll_fn(|cx| {
        let mut next = std::pin::pin!(stream.next());
        Poll::Ready(Pin::new(&mut next).as_mut().poll(cx).is_pending())
    })
    .await
}

#[test]
fn a_stream_stalled_on_one_shards_buffers_re_arms_when_polled_on_another_shard() {
    const TOTAL: u64 = 256 * 1024;
    under_every_config("stalled recv stream moved", 2, |config, b| {
        let rt = b.recv_buffers(2, 4096).build().unwrap();
        let f = rt.features();
        if !f.supports(Feature::MultishotRecv) || !f.supports(Feature::ProvidedBufferRing) {
            return;
        }
        rt.block_on(async {
            let (server, mut client) = tcp_pair();
            let writer = std::thread::spawn(move || write_pattern(&mut client, TOTAL, 64 * 1024));
            let mut stream = op::recv_multishot(&SharedFd::new(server.into()));
            // Shard 0 takes both of its buffers and keeps them: its receive runs dry.
            let held = [
                stream.next().await.unwrap().unwrap(),
                stream.next().await.unwrap().unwrap(),
            ];
            let stalls = || RuntimeHandle::current().stats().shards[0].enobufs_stalls;
            while !(is_pending(&mut stream).await && stalls() >= 1) {
                ringsteal_rt::yield_now().await;
            }
            // Shard 1 goes on with the stream while shard 0 still holds its buffers.
            let rest = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let mut got = Vec::new();
                while let Some(buf) = stream.next().await {
                    got.extend_from_slice(&buf.unwrap());
                }
                got
            });
            let rest = ringsteal_rt::time::timeout(GUARD, rest)
                .await
                .unwrap_or_else(|_| {
                    panic!("{config:?}: the stream waited for shard 0's buffers on shard 1")
                })
                .unwrap();
            let mut check = PatternCheck::default();
            held.iter().for_each(|b| check.feed(b));
            check.feed(&rest);
            writer.join().unwrap().unwrap();
            assert_eq!(check.offset, TOTAL, "{config:?}");
            let stats = RuntimeHandle::current().stats();
            assert!(stats.shards[1].stream_rearms >= 1, "{config:?}: {stats:?}");
        });
    });
}

#[test]
fn a_stream_armed_in_block_on_and_moved_to_a_worker_shard_delivers_once_shard_0_runs() {
    const TOTAL: u64 = 1 << 20;
    under_every_config("recv stream out of block_on", 2, |config, b| {
        let rt = b.recv_buffers(8, 4096).build().unwrap();
        let (server, mut client) = tcp_pair();
        let writer = std::thread::spawn(move || write_pattern(&mut client, TOTAL, 64 * 1024));
        // Armed on shard 0 (inside block_on), first buffer taken, then handed out.
        let (mut stream, first) = rt.block_on(async {
            let mut stream = op::recv_multishot(&SharedFd::new(server.into()));
            let first = stream.next().await.unwrap().unwrap();
            (stream, first.to_vec())
        });
        let task = rt.handle().spawn_with(Placement::Pinned(1), async move {
            let mut check = PatternCheck::default();
            check.feed(&first);
            while let Some(buf) = stream.next().await {
                check.feed(&buf.unwrap());
            }
            check.offset
        });
        // Its request is on shard 0's ring: served while shard 0 runs, here.
        let got = rt.block_on(async {
            ringsteal_rt::time::timeout(GUARD, task)
                .await
                .unwrap_or_else(|_| panic!("{config:?}: the moved stream never delivered"))
                .unwrap()
        });
        writer.join().unwrap().unwrap();
        assert_eq!(got, TOTAL, "{config:?}");
    });
}
