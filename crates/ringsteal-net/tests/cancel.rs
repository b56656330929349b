//! Dropped reads and writes on a stream that is still used: the request may complete after
//! its future is gone (the cancel loses the race), and the stream must neither lose nor
//! reorder bytes. Deterministic cases first (the completion has provably arrived before the
//! drop), then stress runs with real races under every wake mechanism and ring mode, where
//! every byte is checked against its position in the stream.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{with_every_runtime, Rng};
use ringsteal_net::{IntoStdError, TcpStream, UnixStream};
use ringsteal_rt::time::timeout;
use ringsteal_rt::Placement;
use support::*;

#[test]
fn a_read_dropped_after_its_bytes_arrived_gives_them_to_the_next_read() {
    with_every_runtime("dropped completed read", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let mut read = Box::pin(server.read(Vec::with_capacity(64)));
            assert!(poll_once(&mut read).await.is_none(), "nothing to read yet");
            let before = ops_completed();
            send_outside_the_ring(&client, b"late bytes");
            // The recv has completed in the kernel and been reaped.
            until_ops_completed(before, 1).await;
            drop(read);
            let (res, buf) = timeout(OP_GUARD, server.read(Vec::with_capacity(64)))
                .await
                .expect("the bytes of the dropped read were lost");
            assert_eq!(&buf[..res.unwrap()], b"late bytes");
            // And the stream goes on.
            client.write_all(b"next".to_vec()).await.0.unwrap();
            let (res, buf) = server.read_exact(vec![0; 4]).await;
            res.unwrap();
            assert_eq!(buf, b"next");
        })
    });
}

#[test]
fn into_std_refuses_while_a_dropped_read_is_in_flight_and_gives_the_stream_back() {
    with_every_runtime("into_std with a dropped read in flight", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let mut read = Box::pin(server.read(Vec::with_capacity(64)));
            assert!(poll_once(&mut read).await.is_none(), "nothing to read yet");
            // The bytes reach the socket while the read is armed; the read is dropped before
            // the shard has reaped what happened to it (a timeout firing, say).
            send_outside_the_ring(&client, b"precious");
            drop(read);
            let refused = server.into_std().expect_err("a read is still in flight");
            let server = IntoStdError::<TcpStream>::recover(refused).expect("the stream back");
            // Wherever the cancelled read left the bytes (kept by the stream, or still in
            // the socket), the stream returns them, and then changes hands.
            let (res, buf) = timeout(OP_GUARD, server.read(Vec::with_capacity(64)))
                .await
                .expect("the bytes were lost");
            assert_eq!(&buf[..res.unwrap()], b"precious");
            let std_server = server.into_std().expect("nothing in flight any more");
            drop(std_server);
        })
    });
}

#[test]
fn kept_bytes_come_before_newer_ones_for_read_peek_and_readv() {
    with_every_runtime("kept bytes first", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let mut read = Box::pin(server.read(Vec::with_capacity(64)));
            assert!(poll_once(&mut read).await.is_none());
            let before = ops_completed();
            send_outside_the_ring(&client, b"first");
            until_ops_completed(before, 1).await;
            drop(read);
            client.write_all(b"second".to_vec()).await.0.unwrap();
            let (res, peeked) = server.peek(Vec::with_capacity(64)).await;
            assert_eq!(
                &peeked[..res.unwrap()],
                b"first",
                "peek sees the kept bytes"
            );
            let (res, parts) = server
                .readv(vec![Vec::with_capacity(2), Vec::with_capacity(2)])
                .await;
            assert_eq!(res.unwrap(), 4);
            assert_eq!(parts.concat(), b"firs");
            let (res, rest) = server.read_exact(vec![0; 7]).await;
            res.unwrap();
            assert_eq!(rest, b"tsecond");
        })
    });
}

#[test]
fn a_dropped_read_exact_gives_back_every_byte_it_took() {
    with_every_runtime("dropped read_exact", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            client.write_all(b"abc".to_vec()).await.0.unwrap();
            let mut exact = Box::pin(server.read_exact(vec![0u8; 8]));
            // It takes "abc" and waits for more.
            let before = ops_completed();
            assert!(poll_once(&mut exact).await.is_none());
            until_ops_completed(before, 1).await;
            assert!(
                poll_once(&mut exact).await.is_none(),
                "5 bytes still missing"
            );
            let before = ops_completed();
            send_outside_the_ring(&client, b"de");
            until_ops_completed(before, 1).await;
            drop(exact);
            client.write_all(b"fgh".to_vec()).await.0.unwrap();
            let (res, all) = server.read_exact(vec![0u8; 8]).await;
            res.unwrap();
            assert_eq!(all, b"abcdefgh");
        })
    });
}

#[test]
fn a_unix_stream_keeps_the_bytes_of_a_dropped_read_too() {
    with_every_runtime("dropped unix read", 1, |_, rt| {
        rt.block_on(async {
            let (a, b) = UnixStream::pair().unwrap();
            let mut read = Box::pin(b.read(Vec::with_capacity(64)));
            assert!(poll_once(&mut read).await.is_none());
            let before = ops_completed();
            send_outside_the_ring(&a, b"unix");
            until_ops_completed(before, 1).await;
            drop(read);
            let (res, buf) = timeout(OP_GUARD, b.read(Vec::with_capacity(64)))
                .await
                .unwrap();
            assert_eq!(&buf[..res.unwrap()], b"unix");
        })
    });
}

/// Sends bytes of stream `seed` in random chunks until `stop` is set, yielding now and then
/// so the reader catches data in flight; then publishes how many it sent in `sent`.
async fn send_stream(
    w: ringsteal_net::tcp::OwnedWriteHalf,
    seed: u64,
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
) {
    let mut rng = Rng::new(seed);
    let mut pos = 0;
    while !stop.load(Ordering::Acquire) {
        let n = 1 + rng.below(3000);
        w.write_all(stream_bytes(seed, pos, n as usize))
            .await
            .0
            .unwrap();
        pos += n;
        if rng.below(4) == 0 {
            ringsteal_rt::yield_now().await;
        }
    }
    sent.store(pos, Ordering::Release);
}

#[test]
fn reads_dropped_while_bytes_arrive_lose_and_reorder_nothing() {
    // Reads that find bytes queued complete inline, in their first poll (`inline`): only
    // those that go by ring can be dropped in flight. So the writer goes on until the reader
    // has seen at least 1 MiB and dropped more than a hundred reads.
    const LEN: u64 = 1 << 20;
    const MAX_LEN: u64 = 256 << 20;
    with_every_runtime("dropped reads race", 2, |config, rt| {
        rt.block_on(async move {
            let (client, server) = tcp_pair().await;
            let (_c_rd, c_wr) = client.into_split();
            let seed = 7 + config as u64;
            let stop = Arc::new(AtomicBool::new(false));
            let sent = Arc::new(AtomicU64::new(u64::MAX));
            let writer = ringsteal_rt::spawn_with(
                Placement::Pinned(1),
                send_stream(c_wr, seed, stop.clone(), sent.clone()),
            );
            let mut rng = Rng::new(seed);
            let (mut got, mut dropped) = (0u64, 0u32);
            while got < sent.load(Ordering::Acquire) {
                if got >= MAX_LEN || (got >= LEN && dropped > 100) {
                    stop.store(true, Ordering::Release);
                }
                let cap = 1 + rng.below(2048) as usize;
                // Drop the read at a random moment: before it was submitted, right after,
                // or after a few microseconds, while the other shard keeps sending.
                let out = match rng.below(4) {
                    0 => {
                        let mut read = Box::pin(server.read(Vec::with_capacity(cap)));
                        poll_once(&mut read).await
                    }
                    1 => timeout(Duration::ZERO, server.read(Vec::with_capacity(cap)))
                        .await
                        .ok(),
                    2 => {
                        let wait = Duration::from_micros(rng.below(40));
                        timeout(wait, server.read(Vec::with_capacity(cap)))
                            .await
                            .ok()
                    }
                    _ => Some(server.read(Vec::with_capacity(cap)).await),
                };
                let Some((res, buf)) = out else {
                    dropped += 1;
                    continue;
                };
                let n = res.unwrap();
                if n == 0 {
                    // The writer stopped and its half shut the stream down: after all of it.
                    assert_eq!(got, sent.load(Ordering::Acquire), "early end of stream");
                    break;
                }
                check_stream(seed, got, &buf[..n]);
                got += n as u64;
            }
            writer.await.unwrap();
            assert!(
                dropped > 100,
                "only {dropped} reads were dropped in {got} bytes: the race was not exercised"
            );
        })
    });
}

#[test]
fn a_write_dropped_mid_flight_finishes_before_the_next_write_starts() {
    const CHUNK: usize = 256 * 1024;
    const ROUNDS: u8 = 120;
    with_every_runtime("dropped writes race", 2, |config, rt| {
        rt.block_on(async move {
            let (client, server) = tcp_pair().await;
            set_small_buffers(&client, &server);
            // A plain thread drains the server side, whatever the shards are doing.
            let mut std_server = server.into_std().unwrap();
            let reader = std::thread::spawn(move || {
                let mut all = Vec::new();
                std::io::Read::read_to_end(&mut std_server, &mut all).unwrap();
                all
            });
            let client = std::sync::Arc::new(client);
            let mut rng = Rng::new(config as u64 + 1);
            let mut whole = Vec::new();
            for round in 0..ROUNDS {
                // Shard 0 starts write `first`, drops it mid-flight and then keeps its
                // thread busy (its cancel waits in its ring); shard 1 writes `second` at
                // that very moment.
                let (first, second) = (2 * round + 1, 2 * round + 2);
                let go = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
                let wait = Duration::from_micros(rng.below(200));
                let (c, g) = (client.clone(), go.clone());
                let dropper = ringsteal_rt::spawn_with(Placement::Pinned(0), async move {
                    let done = timeout(wait, c.write_all(vec![first; CHUNK])).await.is_ok();
                    g.store(true, std::sync::atomic::Ordering::SeqCst);
                    common::spin_for(20_000);
                    done
                });
                let (c, g) = (client.clone(), go.clone());
                let follower = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                    common::yield_until(|| g.load(std::sync::atomic::Ordering::SeqCst)).await;
                    c.write_all(vec![second; CHUNK]).await.0.unwrap();
                });
                if dropper.await.unwrap() {
                    whole.push(first);
                }
                follower.await.unwrap();
                whole.push(second);
            }
            let client = std::sync::Arc::into_inner(client).expect("every task is done");
            client.shutdown(std::net::Shutdown::Write).await.unwrap();
            let all = reader.join().unwrap();
            // The stream is runs of one id each, ids strictly increasing; every write that
            // completed is there whole, every dropped one as a prefix (maybe empty).
            let mut runs: Vec<(u8, usize)> = Vec::new();
            for &b in &all {
                match runs.last_mut() {
                    Some((id, n)) if *id == b => *n += 1,
                    _ => runs.push((b, 1)),
                }
            }
            for pair in runs.windows(2) {
                assert!(
                    pair[0].0 < pair[1].0,
                    "bytes of write {} after bytes of write {}: writes interleaved",
                    pair[1].0,
                    pair[0].0
                );
            }
            for (id, n) in &runs {
                assert!(*n <= CHUNK, "write {id} appears {n} bytes long");
                if whole.contains(id) {
                    assert_eq!(*n, CHUNK, "completed write {id} is not whole");
                }
            }
            for id in &whole {
                assert!(
                    runs.iter().any(|(r, _)| r == id),
                    "completed write {id} missing"
                );
            }
            let dropped = ROUNDS as usize * 2 - whole.len();
            assert!(
                dropped > 10,
                "only {dropped} writes were dropped: the race was not exercised"
            );
        })
    });
}

fn set_small_buffers(client: &TcpStream, server: &TcpStream) {
    use std::os::fd::AsRawFd;
    for (s, opt) in [
        (client.as_raw_fd(), libc::SO_SNDBUF),
        (server.as_raw_fd(), libc::SO_RCVBUF),
    ] {
        let v: libc::c_int = 64 * 1024;
        // SAFETY: setsockopt reads an int from a live local.
        let rc = unsafe {
            libc::setsockopt(
                s,
                libc::SOL_SOCKET,
                opt,
                (&v as *const libc::c_int).cast(),
                4,
            )
        };
        assert_eq!(rc, 0);
    }
}

/// A read dropped after it met the peer's end (or a reset): the next read returns that end,
/// once, as the dropped one would have, and reads after it ask the kernel again.
#[test]
fn a_read_dropped_after_it_met_the_end_or_a_reset_hands_that_to_the_next_read() {
    for reset in [false, true] {
        with_every_runtime("dropped read at the end", 1, move |_, rt| {
            rt.block_on(async move {
                let (client, server) = tcp_pair().await;
                let mut read = Box::pin(server.read(Vec::with_capacity(64)));
                assert!(poll_once(&mut read).await.is_none(), "nothing to read yet");
                let before = ops_completed();
                if reset {
                    client.set_linger(Some(Duration::ZERO)).unwrap();
                }
                drop(client);
                // The recv has completed in the kernel and been reaped.
                until_ops_completed(before, 1).await;
                drop(read);
                let (res, _) = timeout(OP_GUARD, server.read(Vec::with_capacity(64)))
                    .await
                    .expect("the next read asked the kernel again");
                match reset {
                    false => assert_eq!(res.unwrap(), 0, "end of stream"),
                    true => assert_eq!(
                        res.unwrap_err().kind(),
                        std::io::ErrorKind::ConnectionReset,
                        "the reset the dropped read met"
                    ),
                }
                let (res, _) = server.read(Vec::with_capacity(64)).await;
                assert_eq!(res.unwrap(), 0, "then the kernel's answer: end of stream");
            })
        });
    }
}

/// tokio's connection loop: `select!` between reading the client and something else that is
/// always ready first. Each round drops a read; the client's end (or reset) must still show
/// within a few rounds. Before, a dropped read's end was thrown away and the next read went
/// back to the ring, to be dropped again: the loop never saw it.
#[test]
fn a_select_loop_that_drops_a_read_every_round_still_sees_the_peers_end() {
    for reset in [false, true] {
        with_every_runtime("select loop sees the end", 1, move |_, rt| {
            rt.block_on(async move {
                let (client, server) = tcp_pair().await;
                client.write_all(b"hi".to_vec()).await.0.unwrap();
                if reset {
                    client.set_linger(Some(Duration::ZERO)).unwrap();
                }
                drop(client);
                let mut got = Vec::new();
                let mut rounds = 0u32;
                let end = loop {
                    rounds += 1;
                    assert!(rounds < 10_000, "no end after {rounds} rounds; got {got:?}");
                    let mut read = Box::pin(server.read(Vec::with_capacity(64)));
                    match poll_once(&mut read).await {
                        Some((Ok(0), _)) => break Ok(()),
                        Some((Ok(n), buf)) => got.extend_from_slice(&buf[..n]),
                        Some((Err(e), _)) => break Err(e),
                        // The other branch wins: the read is dropped.
                        None => ringsteal_rt::yield_now().await,
                    }
                };
                match reset {
                    false => {
                        assert_eq!(got, b"hi");
                        end.unwrap();
                    }
                    // A reset may discard what was unread.
                    true => {
                        assert_eq!(end.unwrap_err().kind(), std::io::ErrorKind::ConnectionReset)
                    }
                }
            })
        });
    }
}

/// A reset a dropped read met stays for a read that has room: a zero-length read does not
/// take it, and `try_io` (the caller's own system call, which would see only the kernel's
/// end of stream after it) returns it.
#[test]
fn a_kept_reset_waits_for_a_read_with_room_and_try_io_returns_it() {
    for via_try_io in [false, true] {
        with_every_runtime("kept reset", 1, move |_, rt| {
            rt.block_on(async move {
                let (client, server) = tcp_pair().await;
                let mut read = Box::pin(server.read(Vec::with_capacity(64)));
                assert!(poll_once(&mut read).await.is_none(), "nothing to read yet");
                let before = ops_completed();
                client.set_linger(Some(Duration::ZERO)).unwrap();
                drop(client);
                until_ops_completed(before, 1).await;
                drop(read);
                let (res, _) = server.read(Vec::new()).await;
                assert_eq!(res.unwrap(), 0, "nothing to read into");
                let err = if via_try_io {
                    server
                        .try_io(ringsteal_rt::io::Interest::READABLE, || Ok(()))
                        .unwrap_err()
                } else {
                    server.read(Vec::with_capacity(8)).await.0.unwrap_err()
                };
                assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset);
            })
        });
    }
}
