//! Raw cross-shard messages: `send_msg` / `recv_msg` / `try_recv_msg` carry 64-bit payloads
//! intact and in order from one sender, between shards, to a shard itself and from plain
//! threads, under every wake mechanism.

mod common;

use common::*;
use ringsteal_rt::{current_shard, recv_msg, spawn_with, try_recv_msg, Placement, RuntimeHandle};

/// The payloads each sender sends: the edges first, then a counting sequence.
fn payloads() -> Vec<u64> {
    let mut p = vec![
        0,
        1,
        u64::from(u32::MAX),
        u64::from(u32::MAX) + 1,
        0x8000_0000,
        0xdead_beef_0000_0001,
        u64::MAX - 1,
        u64::MAX,
    ];
    p.extend((0..500u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
    p
}

async fn receive(n: usize) -> Vec<u64> {
    let mut got = Vec::with_capacity(n);
    for _ in 0..n {
        got.push(recv_msg().await);
    }
    got
}

#[test]
fn messages_between_shards_arrive_intact_and_in_order() {
    with_every_runtime("shard to shard", 2, |_, rt| {
        rt.block_on(async {
            let expected = payloads();
            let n = expected.len();
            let receiver = spawn_with(Placement::Pinned(1), receive(n));
            // From a task on shard 0 ...
            let sender = spawn_with(Placement::Pinned(0), async move {
                let handle = RuntimeHandle::current();
                for p in payloads() {
                    handle.send_msg(1, p).unwrap();
                }
            });
            sender.await.unwrap();
            assert_eq!(receiver.await.unwrap(), expected);
            // ... and back, from shard 1 to the block_on future on shard 0.
            let back = spawn_with(Placement::Pinned(1), async move {
                for p in payloads().into_iter().rev() {
                    RuntimeHandle::current().send_msg(0, p).unwrap();
                }
            });
            let mut reversed = expected.clone();
            reversed.reverse();
            assert_eq!(receive(n).await, reversed);
            back.await.unwrap();
        });
    });
}

#[test]
fn messages_from_a_plain_thread_arrive_intact_and_in_order() {
    with_every_runtime("plain thread sender", 3, |_, rt| {
        let handle = rt.handle();
        rt.block_on(async move {
            let expected = payloads();
            let n = expected.len();
            let receivers: Vec<_> = (0..3)
                .map(|s| spawn_with(Placement::Pinned(s), receive(n)))
                .collect();
            let thread = std::thread::spawn(move || {
                for p in payloads() {
                    for s in 0..3 {
                        handle.send_msg(s, p).unwrap();
                    }
                }
            });
            for r in receivers {
                assert_eq!(r.await.unwrap(), expected);
            }
            thread.join().unwrap();
        });
    });
}

#[test]
fn a_shard_can_send_messages_to_itself() {
    with_every_runtime("to itself", 2, |_, rt| {
        rt.block_on(async {
            let got = spawn_with(Placement::Pinned(1), async {
                let me = current_shard().unwrap();
                for p in payloads() {
                    RuntimeHandle::current().send_msg(me, p).unwrap();
                }
                receive(payloads().len()).await
            });
            assert_eq!(got.await.unwrap(), payloads());
        });
    });
}

#[test]
fn try_recv_msg_returns_only_messages_already_received_and_never_waits() {
    with_every_runtime("try_recv_msg", 2, |_, rt| {
        assert_eq!(
            try_recv_msg(),
            None,
            "off-shard there is nothing to receive"
        );
        rt.block_on(async {
            let ready = Signal::new();
            let r = ready.clone();
            let receiver = spawn_with(Placement::Pinned(1), async move {
                assert_eq!(try_recv_msg(), None);
                r.add();
                let first = recv_msg().await;
                let mut rest = Vec::new();
                while rest.len() < 2 {
                    match try_recv_msg() {
                        Some(m) => rest.push(m),
                        None => ringsteal_rt::yield_now().await,
                    }
                }
                assert_eq!(try_recv_msg(), None);
                (first, rest)
            });
            ready.wait_for(1).await;
            let handle = RuntimeHandle::current();
            for p in [u64::MAX, 0, u64::from(u32::MAX) + 1] {
                handle.send_msg(1, p).unwrap();
            }
            let (first, rest) = receiver.await.unwrap();
            assert_eq!(first, u64::MAX);
            assert_eq!(rest, vec![0, u64::from(u32::MAX) + 1]);
        });
    });
}

#[test]
fn messages_sent_while_shard_0_is_outside_block_on_wait_for_it() {
    with_every_runtime("to undriven shard 0", 2, |_, rt| {
        rt.block_on(async {});
        let handle = rt.handle();
        std::thread::spawn(move || {
            for p in payloads() {
                handle.send_msg(0, p).unwrap();
            }
        })
        .join()
        .unwrap();
        let got = rt.block_on(receive(payloads().len()));
        assert_eq!(got, payloads());
        assert_eq!(rt.block_on(async { try_recv_msg() }), None);
    });
}

/// Counts wakes.
#[derive(Default)]
struct CountingWaker(std::sync::atomic::AtomicUsize);

impl std::task::Wake for CountingWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn receivers_dropped_before_a_message_came_leave_no_waker_behind() {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::atomic::Ordering::SeqCst;
    use std::sync::Arc;
    use std::task::{Context, Waker};

    with_every_runtime("dropped receivers", 2, |_, rt| {
        rt.block_on(async {
            let ready = Signal::new();
            let r = ready.clone();
            let receiver = spawn_with(Placement::Pinned(1), async move {
                // Each waits once with a waker of its own, then is dropped (a timed-out or
                // unselected receive).
                let dropped: Vec<Arc<CountingWaker>> = (0..100).map(|_| Arc::default()).collect();
                for w in &dropped {
                    let waker = Waker::from(w.clone());
                    let mut rx = recv_msg();
                    assert!(Pin::new(&mut rx)
                        .poll(&mut Context::from_waker(&waker))
                        .is_pending());
                    drop(rx);
                    drop(waker);
                    assert_eq!(
                        Arc::strong_count(w),
                        1,
                        "a dropped receiver's waker is still held by the shard"
                    );
                }
                r.add();
                let got = recv_msg().await;
                let woken: usize = dropped.iter().map(|w| w.0.load(SeqCst)).sum();
                (got, woken)
            });
            ready.wait_for(1).await;
            RuntimeHandle::current().send_msg(1, 7).unwrap();
            assert_eq!(receiver.await.unwrap(), (7, 0));
        });
    });
}
