//! `recv_stream()` on TCP and Unix streams: data in order across provided-buffer exhaustion
//! on real TCP; a stream short of buffers receiving into the heap until half its shard's
//! buffers are free (and re-arming then, not before), so that a consumer holding every
//! buffer until its frame is whole, or an unpolled stream holding them all, stalls nobody;
//! the stream's read
//! side held while a receive stream lives, and a stream waiting for it keeps its place in
//! the queue; and the bytes a
//! dropped receive stream was delivered and nobody took given back to the next read, both
//! deterministically (they provably left the socket) and in a stress run that alternates
//! receive streams and reads at random moments while another shard writes a self-checking
//! stream. Under every wake mechanism and ring mode, and on the single-shot fallbacks.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::time::Duration;

use common::{under_every_config, Rng};
use ringsteal_net::{IntoStdError, UnixStream};
use ringsteal_rt::time::timeout;
use ringsteal_rt::{Builder, Feature, Placement, RuntimeHandle};
use support::*;

/// The receive paths a runtime can take: multishot into provided buffers, or the
/// single-shot heap fallbacks the builder can force.
const PATHS: [Option<Feature>; 3] = [
    None,
    Some(Feature::MultishotRecv),
    Some(Feature::ProvidedBufferRing),
];

fn on_path(b: Builder, without: Option<Feature>) -> Builder {
    match without {
        Some(f) => b.without_feature(f),
        None => b,
    }
}

fn multishot(rt: &ringsteal_rt::Runtime) -> bool {
    let f = rt.features();
    f.supports(Feature::MultishotRecv) && f.supports(Feature::ProvidedBufferRing)
}

#[test]
fn a_tcp_recv_stream_keeps_order_while_its_shard_runs_out_of_buffers() {
    const TOTAL: u64 = 8 << 20;
    under_every_config("tcp recv stream, tiny group", 2, |config, b| {
        for path in PATHS {
            let rt = on_path(b.clone().recv_buffers(4, 4096), path)
                .build()
                .unwrap();
            let native = multishot(&rt);
            let stats = rt.block_on(async {
                let (client, server) = tcp_pair().await;
                let writer = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                    let mut pos = 0;
                    while pos < TOTAL {
                        let chunk = stream_bytes(7, pos, 64 * 1024);
                        client.write_all(chunk).await.0.unwrap();
                        pos += 64 * 1024;
                    }
                });
                let mut data = server.recv_stream();
                // Hold two buffers at a time, as a parser waiting for the rest of a message.
                let mut held = std::collections::VecDeque::new();
                let mut pos = 0u64;
                while pos
                    + held
                        .iter()
                        .map(|b: &ringsteal_net::RecvBuf| b.len() as u64)
                        .sum::<u64>()
                    < TOTAL
                {
                    let buf = timeout(OP_GUARD, data.next())
                        .await
                        .expect("the stream stalled")
                        .expect("data before the end")
                        .unwrap();
                    assert_eq!(buf.is_provided(), native, "{config:?} {path:?}");
                    held.push_back(buf);
                    if held.len() > 2 {
                        let buf = held.pop_front().unwrap();
                        check_stream(7, pos, &buf);
                        pos += buf.len() as u64;
                    }
                }
                for buf in held {
                    check_stream(7, pos, &buf);
                    pos += buf.len() as u64;
                }
                assert_eq!(pos, TOTAL, "{config:?} {path:?}");
                writer.await.unwrap();
                RuntimeHandle::current().stats().shards[0].clone()
            });
            assert_eq!(stats.bufs_in_use, 0, "{config:?} {path:?}");
            if native {
                assert!(
                    stats.enobufs_stalls > 0,
                    "{config:?}: never ran dry: {stats:?}"
                );
            }
        }
    });
}

/// A stream that ran its shard's ring dry re-arms its multishot receive once half of the
/// buffers are free, not as soon as one is; until then, data that arrives is received into
/// heap buffers, one receive at a time, in order, and a stream with no data waiting takes
/// no heap buffer.
#[test]
fn a_stream_short_of_buffers_receives_into_the_heap_until_half_the_group_is_free() {
    under_every_config("short of buffers", 1, |config, b| {
        let rt = b.recv_buffers(4, 16).build().unwrap();
        if !multishot(&rt) {
            return;
        }
        rt.block_on(async {
            let stats = || RuntimeHandle::current().stats().total();
            let (a, b) = UnixStream::pair().unwrap();
            a.write_all(stream_bytes(4, 0, 16 * 5)).await.0.unwrap();
            let mut data = b.recv_stream();
            let mut held = Vec::new();
            let mut pos = 0;
            for _ in 0..4 {
                let buf = data.next().await.unwrap().unwrap();
                check_stream(4, pos, &buf);
                pos += buf.len() as u64;
                held.push(buf);
            }
            assert_eq!(pos, 64, "{config:?}: one buffer per 16 bytes");
            // Three of the four held, one free: the ring ran dry under the fifth 16 bytes,
            // and one free buffer is not half the group, so they come through the heap.
            drop(held.pop());
            let buf = timeout(OP_GUARD, data.next())
                .await
                .unwrap_or_else(|_| panic!("{config:?}: stalled with data waiting"))
                .unwrap()
                .unwrap();
            check_stream(4, pos, &buf);
            pos += buf.len() as u64;
            let after_first = stats();
            assert!(
                after_first.enobufs_stalls >= 1,
                "{config:?}: {after_first:?}"
            );
            assert!(
                after_first.enobufs_heap_receives >= 1,
                "{config:?}: {after_first:?}"
            );
            // Waiting with nothing to receive takes no heap buffer.
            let mut next = Box::pin(data.next());
            for _ in 0..50 {
                assert!(poll_once(&mut next).await.is_none(), "{config:?}");
                ringsteal_rt::yield_now().await;
            }
            assert_eq!(
                stats().enobufs_heap_receives,
                after_first.enobufs_heap_receives,
                "{config:?}: a heap receive with no data waiting"
            );
            // More data while three are still held: the heap again.
            send_outside_the_ring(&a, &stream_bytes(4, pos, 10));
            let buf = timeout(OP_GUARD, &mut next)
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            check_stream(4, pos, &buf);
            pos += buf.len() as u64;
            assert!(stats().enobufs_heap_receives > after_first.enobufs_heap_receives);
            drop(next);
            // Two of four held: half the group is free, and the multishot request is back.
            drop(held.pop());
            let heap_before = stats().enobufs_heap_receives;
            a.write_all(stream_bytes(4, pos, 16)).await.0.unwrap();
            let buf = timeout(OP_GUARD, data.next())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            check_stream(4, pos, &buf);
            assert_eq!(
                stats().enobufs_heap_receives,
                heap_before,
                "{config:?}: a heap receive with half the group free"
            );
        });
    });
}

/// A consumer that keeps every buffer of a frame until the frame is whole, with a frame
/// larger than its shard's whole group, still gets the frame: once the ring has run dry, the
/// rest arrives in heap buffers (a stream that only waited for buffers would wait for its
/// own consumer for ever).
#[test]
fn a_consumer_holding_every_buffer_until_its_frame_is_whole_gets_the_frame() {
    under_every_config("frame larger than the group", 1, |config, b| {
        let rt = b.recv_buffers(4, 64).build().unwrap();
        rt.block_on(async {
            let (a, b) = UnixStream::pair().unwrap();
            const FRAME: usize = 4 * 64 * 8;
            let writer = ringsteal_rt::spawn(async move {
                a.write_all(stream_bytes(8, 0, FRAME)).await.0.unwrap();
                a
            });
            let mut data = b.recv_stream();
            let frame = timeout(OP_GUARD, async {
                let mut held = Vec::new();
                let mut got = 0;
                while got < FRAME {
                    let buf = data.next().await.unwrap().unwrap();
                    got += buf.len();
                    held.push(buf);
                }
                held
            })
            .await
            .unwrap_or_else(|_| panic!("{config:?}: the frame never completed"));
            let whole: Vec<u8> = frame.iter().flat_map(|b| b.iter().copied()).collect();
            check_stream(8, 0, &whole);
            drop(writer.await.unwrap());
        });
    });
}

/// A stream short of buffers still sees its end: with every buffer held, the rest of the
/// bytes arrive in heap buffers and then the stream ends (`None`), without spinning on the
/// closed socket's readiness.
#[test]
fn a_stream_short_of_buffers_still_ends_at_end_of_stream() {
    under_every_config("short of buffers, then the end", 1, |config, b| {
        let rt = b.recv_buffers(4, 16).build().unwrap();
        rt.block_on(async {
            let (a, b) = UnixStream::pair().unwrap();
            const LEN: usize = 16 * 4 + 40;
            a.write_all(stream_bytes(5, 0, LEN)).await.0.unwrap();
            drop(a);
            let mut data = b.recv_stream();
            let held = timeout(OP_GUARD, async {
                let mut held = Vec::new();
                while let Some(buf) = data.next().await {
                    held.push(buf.unwrap());
                }
                held
            })
            .await
            .unwrap_or_else(|_| panic!("{config:?}: the stream never ended"));
            let whole: Vec<u8> = held.iter().flat_map(|b| b.iter().copied()).collect();
            assert_eq!(whole.len(), LEN, "{config:?}");
            check_stream(5, 0, &whole);
        });
    });
}

/// A stream short of buffers dropped while it waits for readiness or while its heap receive
/// is in flight loses nothing: the next read gets the bytes, whichever of the two held them.
#[test]
fn a_stream_short_of_buffers_dropped_mid_receive_gives_its_bytes_to_the_next_read() {
    under_every_config("short of buffers, dropped", 1, |config, b| {
        let rt = b.recv_buffers(4, 16).build().unwrap();
        if !multishot(&rt) {
            return;
        }
        rt.block_on(async {
            let stats = || RuntimeHandle::current().stats().total();
            let (a, b) = UnixStream::pair().unwrap();
            a.write_all(stream_bytes(7, 0, 64)).await.0.unwrap();
            let mut data = b.recv_stream();
            let mut held = Vec::new();
            for _ in 0..4 {
                held.push(data.next().await.unwrap().unwrap());
            }
            // Every buffer held; more bytes run the ring dry, and the stream goes to the heap.
            send_outside_the_ring(&a, b"xyz");
            let mut next = Box::pin(data.next());
            let deadline = std::time::Instant::now() + OP_GUARD;
            while stats().enobufs_heap_receives == 0 {
                if let Some(got) = poll_once(&mut next).await {
                    // Taken before the drop: nothing to hand back.
                    assert_eq!(&got.unwrap().unwrap()[..], b"xyz", "{config:?}");
                    return;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "{config:?}: no heap receive"
                );
                ringsteal_rt::yield_now().await;
            }
            // The heap receive is armed (done or not): drop the stream with it.
            drop(next);
            drop(data);
            let (res, got) = timeout(OP_GUARD, b.read_exact(vec![0; 3]))
                .await
                .unwrap_or_else(|_| panic!("{config:?}: bytes lost"));
            res.unwrap();
            assert_eq!(got, b"xyz", "{config:?}");
            drop(held);
        });
    });
}

/// A receive stream's request goes on receiving while nobody polls it, into its shard's
/// buffers: left unpolled while its peer sends, it takes them all, and the shard's other
/// receive streams take their data into heap buffers meanwhile rather than wait for it.
/// Dropping it gives the buffers back, and its bytes to the stream's next read.
#[test]
fn a_receive_stream_nobody_polls_does_not_stall_the_shards_other_streams() {
    under_every_config("unpolled recv stream holds the buffers", 1, |config, b| {
        let rt = b.recv_buffers(16, 1024).build().unwrap();
        if !multishot(&rt) {
            return;
        }
        rt.block_on(async {
            let (a, b) = UnixStream::pair().unwrap();
            let (c, d) = UnixStream::pair().unwrap();
            let mut x = b.recv_stream();
            let mut y = d.recv_stream();
            a.write_all(stream_bytes(6, 0, 10)).await.0.unwrap();
            let first = x.next().await.unwrap().unwrap();
            check_stream(6, 0, &first);
            drop(first);
            let mut next_y = Box::pin(y.next());
            assert!(poll_once(&mut next_y).await.is_none(), "{config:?}");
            // `x` is armed and nobody polls it while its peer sends more than the group holds.
            const MORE: usize = 64 * 1024;
            send_outside_the_ring(&a, &stream_bytes(6, 10, MORE));
            let in_use = || RuntimeHandle::current().stats().total().bufs_in_use;
            let deadline = std::time::Instant::now() + OP_GUARD;
            while in_use() < 16 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{config:?}: {}",
                    in_use()
                );
                ringsteal_rt::yield_now().await;
            }
            c.write_all(b"for y".to_vec()).await.0.unwrap();
            let got = timeout(OP_GUARD, next_y)
                .await
                .unwrap_or_else(|_| panic!("{config:?}: y stalled behind x's buffers"))
                .unwrap()
                .unwrap();
            assert_eq!(&got[..], b"for y", "{config:?}");
            assert_eq!(in_use(), 16, "{config:?}: x still holds every buffer");
            drop(x);
            let (res, rest) = timeout(OP_GUARD, b.read_exact(vec![0; MORE]))
                .await
                .expect("the read never ran");
            res.unwrap();
            check_stream(6, 10, &rest);
        });
    });
}

#[test]
fn bytes_a_dropped_recv_stream_took_from_the_socket_go_to_the_next_read() {
    under_every_config("dropped recv stream gives back", 1, |config, b| {
        for path in PATHS {
            // Buffers of four bytes: one arming takes "abcd" and "efgh" as two buffers.
            let rt = on_path(b.clone().recv_buffers(8, 4), path).build().unwrap();
            rt.block_on(async {
                let (a, b) = UnixStream::pair().unwrap();
                a.write_all(b"abcdefgh".to_vec()).await.0.unwrap();
                let mut data = b.recv_stream();
                let first = data.next().await.unwrap().unwrap();
                assert_eq!(&first[..], b"abcd", "{config:?} {path:?}");
                // On the multishot path "efgh" is in the stream's queue now, out of the
                // socket: dropping the stream must hand it back, or it is gone.
                drop(data);
                a.write_all(b"ij".to_vec()).await.0.unwrap();
                let (res, rest) = timeout(OP_GUARD, b.read_exact(vec![0; 6]))
                    .await
                    .unwrap_or_else(|_| panic!("{config:?} {path:?}: bytes were lost"));
                res.unwrap();
                assert_eq!(rest, b"efghij", "{config:?} {path:?}");
                // A receive stream made later starts with what a read left behind.
                let mut read = Box::pin(b.read(Vec::with_capacity(8)));
                assert!(poll_once(&mut read).await.is_none());
                let before = ops_completed();
                send_outside_the_ring(&a, b"kl");
                until_ops_completed(before, 1).await;
                drop(read); // its "kl" is kept by the stream
                let mut data = b.recv_stream();
                let kept = data.next().await.unwrap().unwrap();
                assert_eq!(&kept[..], b"kl", "{config:?} {path:?}");
            });
        }
    });
}

#[test]
fn a_recv_stream_waiting_for_the_read_side_keeps_its_place_in_the_queue() {
    under_every_config("recv stream keeps its place", 1, |config, b| {
        let rt = b.build().unwrap();
        rt.block_on(async {
            let (a, b) = UnixStream::pair().unwrap();
            let b = std::sync::Arc::new(b);
            let read = |b: &std::sync::Arc<UnixStream>| {
                let b = b.clone();
                ringsteal_rt::spawn(async move { b.read(Vec::with_capacity(8)).await })
            };
            // A read holds the read side, waiting for data.
            let first = read(&b);
            ringsteal_rt::yield_now().await;
            // The receive stream queues for it (polled once, then left alone), and another
            // read queues behind the receive stream.
            let mut data = b.recv_stream();
            assert!(
                poll_once(&mut Box::pin(data.next())).await.is_none(),
                "{config:?}: the read side was free"
            );
            let third = read(&b);
            ringsteal_rt::yield_now().await;
            // The first read takes "one" and hands the read side to the longest waiter.
            a.write_all(b"one".to_vec()).await.0.unwrap();
            let (res, got) = timeout(OP_GUARD, first).await.unwrap().unwrap();
            assert_eq!(&got[..res.unwrap()], b"one", "{config:?}");
            // That is the receive stream: it gets "two" while the other read waits.
            a.write_all(b"two".to_vec()).await.0.unwrap();
            let next = timeout(OP_GUARD, data.next()).await;
            let buf = next.unwrap_or_else(|_| panic!("{config:?}: the stream lost its place"));
            assert_eq!(&buf.unwrap().unwrap()[..], b"two", "{config:?}");
            assert!(
                !third.is_finished(),
                "{config:?}: the later read went first"
            );
            drop(data);
            a.write_all(b"three".to_vec()).await.0.unwrap();
            let (res, got) = timeout(OP_GUARD, third).await.unwrap().unwrap();
            assert_eq!(&got[..res.unwrap()], b"three", "{config:?}");
        });
    });
}

#[test]
fn other_reads_wait_while_a_recv_stream_lives() {
    under_every_config("recv stream holds the read side", 1, |config, b| {
        let rt = b.build().unwrap();
        rt.block_on(async {
            let (a, b) = UnixStream::pair().unwrap();
            let mut data = b.recv_stream();
            a.write_all(b"one".to_vec()).await.0.unwrap();
            assert_eq!(&data.next().await.unwrap().unwrap()[..], b"one");
            let mut read = Box::pin(b.read(Vec::with_capacity(8)));
            a.write_all(b"two".to_vec()).await.0.unwrap();
            for _ in 0..100 {
                assert!(
                    poll_once(&mut read).await.is_none(),
                    "{config:?}: a read ran while the receive stream held the read side"
                );
                ringsteal_rt::yield_now().await;
            }
            drop(data);
            let (res, got) = timeout(OP_GUARD, read).await.expect("the read never ran");
            assert_eq!(&got[..res.unwrap()], b"two", "{config:?}");
        });
    });
}

#[test]
fn a_stream_with_a_receive_stream_alive_is_not_handed_to_std_even_before_its_first_poll() {
    under_every_config("recv stream refuses into_std", 1, |config, b| {
        let rt = b.build().unwrap();
        rt.block_on(async {
            let (a, b) = UnixStream::pair().unwrap();
            // Never polled, so nothing is armed yet; polled after a handover, it would arm a
            // receive on the socket the std stream now reads.
            let data = b.recv_stream();
            let refused = b.into_std().expect_err("a receive stream is alive");
            let b = IntoStdError::<UnixStream>::recover(refused).expect("given back");
            drop(data);
            let mut b = b.into_std().expect("no receive stream any more");
            a.write_all(b"after".to_vec()).await.0.unwrap();
            let mut got = [0u8; 5];
            std::io::Read::read_exact(&mut b, &mut got).unwrap();
            assert_eq!(&got, b"after", "{config:?}");

            // A receive stream that has ended (the peer's end of stream) holds nothing back.
            let (a, b) = UnixStream::pair().unwrap();
            let mut data = b.recv_stream();
            drop(a);
            assert!(data.next().await.is_none(), "{config:?}: end of stream");
            let b = b.into_std().expect("the receive stream has ended");
            drop((data, b));
        });
    });
}

#[test]
fn receive_streams_and_reads_taking_turns_at_random_lose_and_reorder_nothing() {
    const TOTAL: u64 = 2 << 20;
    under_every_config("recv streams and reads in turns", 2, |config, b| {
        for path in PATHS {
            let rt = on_path(b.clone().recv_buffers(16, 4096), path)
                .build()
                .unwrap();
            rt.block_on(async {
                let (client, server) = tcp_pair().await;
                // Another shard writes in small pieces, so data keeps arriving throughout.
                let writer = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                    let mut pos = 0;
                    let mut rng = Rng::new(3);
                    while pos < TOTAL {
                        let n = (1 + rng.below(8192)).min(TOTAL - pos);
                        client
                            .write_all(stream_bytes(9, pos, n as usize))
                            .await
                            .0
                            .unwrap();
                        pos += n;
                    }
                });
                let mut rng = Rng::new(config as u64 * 31 + path.is_some() as u64);
                let mut pos = 0u64;
                while pos < TOTAL {
                    if rng.below(2) == 0 {
                        // A receive stream that takes a few buffers (maybe none) and is
                        // dropped, maybe while more is on its way.
                        let mut data = server.recv_stream();
                        let mut next = Box::pin(data.next());
                        if rng.below(4) == 0 {
                            // Polled once, then dropped at once: armed, maybe delivered.
                            if let Some(Some(buf)) = poll_once(&mut next).await {
                                let buf = buf.unwrap();
                                check_stream(9, pos, &buf);
                                pos += buf.len() as u64;
                            }
                            drop(next);
                        } else {
                            drop(next);
                            for _ in 0..1 + rng.below(3) {
                                if pos >= TOTAL {
                                    break;
                                }
                                let buf = timeout(OP_GUARD, data.next())
                                    .await
                                    .expect("the stream stalled")
                                    .unwrap()
                                    .unwrap();
                                check_stream(9, pos, &buf);
                                pos += buf.len() as u64;
                            }
                        }
                    } else {
                        let cap = 1 + rng.below(6000) as usize;
                        let (res, buf) = timeout(OP_GUARD, server.read(Vec::with_capacity(cap)))
                            .await
                            .expect("a read stalled");
                        let n = res.unwrap();
                        check_stream(9, pos, &buf[..n]);
                        pos += n as u64;
                    }
                }
                assert_eq!(pos, TOTAL, "{config:?} {path:?}");
                writer.await.unwrap();
            });
        }
    });
}

#[test]
fn a_recv_stream_of_a_read_half_ends_at_end_of_stream() {
    under_every_config("recv stream of a read half", 2, |config, b| {
        let rt = b.build().unwrap();
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let (rd, _wr) = server.into_split();
            let reader = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let mut data = rd.recv_stream();
                let mut got = Vec::new();
                while let Some(buf) = data.next().await {
                    got.extend_from_slice(&buf.unwrap());
                }
                got
            });
            client
                .write_all(stream_bytes(1, 0, 100_000))
                .await
                .0
                .unwrap();
            drop(client);
            let got = timeout(Duration::from_secs(20), reader)
                .await
                .unwrap()
                .unwrap();
            check_stream(1, 0, &got);
            assert_eq!(got.len(), 100_000, "{config:?}");
        });
    });
}
