//! A stream write that follows another write (no read between) tries one inline
//! (non-blocking) send before it submits a request: a socket with room takes a small write in
//! the poll that makes it, and what it does not take goes by ring, after the inline part and
//! before any other write of the stream. The first write after a read goes by ring, unless
//! the stream's last run of writes had more than one write.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::sync::Arc;

use common::{with_every_runtime, Rng};
use ringsteal_net::{RecvStream, TcpStream};
use ringsteal_rt::Placement;
use support::*;

#[test]
fn a_write_that_follows_a_write_completes_in_its_first_poll() {
    with_every_runtime("inline write", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            client.write_all(b"run: ".to_vec()).await.0.unwrap();
            let before = ops_completed();
            let mut all = Box::pin(client.write_all(b"hello ".to_vec()));
            let (res, _) = poll_once(&mut all).await.expect("write_all waited");
            res.unwrap();
            let mut one = Box::pin(client.write(b"world".to_vec()));
            let (res, _) = poll_once(&mut one).await.expect("write waited");
            assert_eq!(res.unwrap(), 5);
            assert_eq!(ops_completed(), before, "no request was made");
            let (res, got) = server.read_exact(vec![0; 16]).await;
            res.unwrap();
            assert_eq!(got, b"run: hello world");
        })
    });
}

#[test]
fn the_first_write_after_a_read_goes_by_ring() {
    with_every_runtime("ring write after read", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            for round in 0..3u8 {
                server.write_all(vec![round]).await.0.unwrap();
                let (res, got) = client.read_exact(vec![0; 1]).await;
                res.unwrap();
                assert_eq!(got, [round]);
                // A reply: batched with the shard's other requests, not a system call.
                let mut reply = Box::pin(client.write_all(vec![round; 3]));
                assert!(poll_once(&mut reply).await.is_none(), "round {round}");
                reply.await.0.unwrap();
                let (res, got) = server.read_exact(vec![0; 3]).await;
                res.unwrap();
                assert_eq!(got, [round; 3]);
            }
        })
    });
}

#[test]
fn on_a_stream_that_writes_in_runs_the_first_write_after_a_read_is_inline_too() {
    with_every_runtime("inline first write of a run", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            for round in 0..3u8 {
                // A run of two writes (the first by ring only in round 0), then a read.
                let mut first = Box::pin(client.write_all(vec![round; 2]));
                let (res, _) = match poll_once(&mut first).await {
                    Some(done) => {
                        assert!(round > 0, "the stream's first write went inline");
                        done
                    }
                    None => {
                        assert_eq!(round, 0, "round {round}: a run's first write waited");
                        first.await
                    }
                };
                res.unwrap();
                client.write_all(vec![round; 3]).await.0.unwrap();
                let (res, got) = server.read_exact(vec![0; 5]).await;
                res.unwrap();
                assert_eq!(got, [round; 5]);
                server.write_all(vec![round]).await.0.unwrap();
                let (res, got) = client.read_exact(vec![0; 1]).await;
                res.unwrap();
                assert_eq!(got, [round]);
            }
            // A run of one write tells the next run to start by ring again.
            let mut lone = Box::pin(client.write_all(vec![9]));
            let (res, _) = poll_once(&mut lone)
                .await
                .expect("after a run of two: inline");
            res.unwrap();
            let (res, _) = server.read_exact(vec![0; 1]).await;
            res.unwrap();
            server.write_all(vec![8]).await.0.unwrap();
            client.read_exact(vec![0; 1]).await.0.unwrap();
            let mut next = Box::pin(client.write_all(vec![7]));
            assert!(poll_once(&mut next).await.is_none(), "after a run of one");
            next.await.0.unwrap();
            let (res, got) = server.read_exact(vec![0; 1]).await;
            res.unwrap();
            assert_eq!(got, [7]);
        })
    });
}

#[test]
fn a_readv_or_a_receive_stream_delivery_ends_a_run_of_writes_too() {
    with_every_runtime("runs ended by readv and deliveries", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            // A run of one write, ended by a `readv`: the next run starts by ring (had the
            // `readv` not ended the run, the next write would continue it, inline).
            client.write_all(vec![1]).await.0.unwrap();
            server.write_all(vec![2]).await.0.unwrap();
            let (res, _) = client.readv(vec![vec![0u8; 1]]).await;
            assert_eq!(res.unwrap(), 1);
            let mut next = Box::pin(client.write_all(vec![3]));
            assert!(poll_once(&mut next).await.is_none(), "after readv: by ring");
            next.await.0.unwrap();
            client.write_all(vec![4]).await.0.unwrap();
            // That run of two, ended by a receive stream's delivery: the next starts inline.
            let mut data = client.recv_stream();
            deliver(&server, &mut data, 5).await;
            let before = ops_completed();
            let mut next = Box::pin(client.write_all(vec![6]));
            let (res, _) = poll_once(&mut next)
                .await
                .expect("after a delivery: inline");
            res.unwrap();
            assert_eq!(ops_completed(), before, "no request was made");
            // A run of one, ended by a delivery: the next starts by ring again.
            deliver(&server, &mut data, 7).await;
            let mut next = Box::pin(client.write_all(vec![8]));
            assert!(
                poll_once(&mut next).await.is_none(),
                "after a run of one: by ring"
            );
            next.await.0.unwrap();
            let (res, got) = server.read_exact(vec![0; 5]).await;
            res.unwrap();
            assert_eq!(got, [1, 3, 4, 6, 8]);
        })
    });
}

/// Sends `byte` from `server` and takes it from the client's receive stream `data`.
async fn deliver(server: &TcpStream, data: &mut RecvStream, byte: u8) {
    server.write_all(vec![byte]).await.0.unwrap();
    let got = ringsteal_rt::time::timeout(OP_GUARD, data.next())
        .await
        .expect("the receive stream stalled")
        .expect("a delivery")
        .unwrap();
    assert_eq!(&got[..], [byte]);
}

#[test]
fn a_write_to_a_reset_connection_fails_with_the_socket_error() {
    with_every_runtime("inline write error", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            server.set_linger(Some(std::time::Duration::ZERO)).unwrap();
            drop(server); // resets the connection
                          // The reset may take a moment to arrive; every write until then succeeds.
            let deadline = std::time::Instant::now() + OP_GUARD;
            let err = loop {
                assert!(std::time::Instant::now() < deadline, "writes never failed");
                match client.write_all(b"x".to_vec()).await.0 {
                    Ok(()) => ringsteal_rt::yield_now().await,
                    Err(e) => break e,
                }
            };
            assert!(
                matches!(
                    err.kind(),
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
                ),
                "{err}"
            );
        })
    });
}

#[test]
fn writes_from_two_shards_partly_inline_partly_by_ring_never_interleave() {
    const WRITES: usize = 150;
    with_every_runtime("inline and ring writes", 2, |config, rt| {
        rt.block_on(async move {
            let (client, server) = tcp_pair().await;
            let mut std_server = server.into_std().unwrap();
            let reader = std::thread::spawn(move || {
                let mut all = Vec::new();
                std::io::Read::read_to_end(&mut std_server, &mut all).unwrap();
                all
            });
            let client = Arc::new(client);
            let mut tasks = Vec::new();
            for (shard, tag) in [(0, 1u8), (1, 2u8)] {
                let c = client.clone();
                let mut rng = Rng::new(config as u64 * 2 + tag as u64);
                tasks.push(ringsteal_rt::spawn_with(
                    Placement::Pinned(shard),
                    async move {
                        let mut lens = Vec::new();
                        for i in 0..WRITES {
                            // Mostly small writes (inline), some far larger than the socket
                            // takes at once (inline start, the rest by ring).
                            let len =
                                1 + rng.below(if i % 10 == 0 { 600_000 } else { 2_000 }) as usize;
                            c.write_all(vec![tag; len]).await.0.unwrap();
                            lens.push(len);
                        }
                        lens
                    },
                ));
            }
            let mut lens = Vec::new();
            for t in tasks {
                lens.push(t.await.unwrap());
            }
            let client = Arc::into_inner(client).expect("every writer is done");
            client.shutdown(std::net::Shutdown::Write).await.unwrap();
            let all = reader.join().unwrap();
            // Runs of one tag: each run is whole writes of that task, in order.
            let mut next = [0usize; 2];
            let mut at = 0;
            while at < all.len() {
                let tag = all[at];
                let run = all[at..].iter().take_while(|&&b| b == tag).count();
                let mine = &lens[tag as usize - 1];
                let mut covered = 0;
                while covered < run {
                    let i = next[tag as usize - 1];
                    assert!(
                        i < mine.len(),
                        "{config:?}: more bytes of task {tag} than it wrote"
                    );
                    covered += mine[i];
                    next[tag as usize - 1] += 1;
                }
                assert_eq!(covered, run, "{config:?}: a write of task {tag} was split");
                at += run;
            }
            assert_eq!(next, [WRITES, WRITES], "{config:?}: writes missing");
        })
    });
}
