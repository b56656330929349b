//! What streams of completions leave behind: a dropped stream closes the connections and
//! returns the buffers it had received but not handed out, and a runtime shut down with
//! accepts and receives armed and buffers held by the application frees nothing the kernel
//! may still write (the held buffers stay readable after the runtime is gone) and leaks no
//! descriptor (the shard's ring closes with the last held buffer).
//!
//! These tests count this process's descriptors, so they run one at a time (`SERIAL`) in a
//! binary of their own.

mod common;
mod stream_support;

use std::io::Write;
use std::net::TcpStream;
use std::sync::{mpsc, Mutex};

use common::{under_every_config, yield_until, Config, HANG_LIMIT};
use ringsteal_rt::buf::RecvBuf;
use ringsteal_rt::op::{self, SharedFd};
use ringsteal_rt::Placement;
use stream_support::{listener, open_fds, tcp_pair, write_pattern, Path, PatternCheck};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn a_dropped_accept_stream_closes_the_connections_it_had_queued() {
    let _serial = serial();
    const N: usize = 8;
    under_every_config("dropped accept stream", 1, |config, b| {
        for path in Path::ACCEPT {
            let rt = path.apply(b.clone()).build().unwrap();
            rt.block_on(async {
                let (l, addr) = listener();
                let base = open_fds();
                // The test keeps the listener open itself (the stream holds it only while
                // a request is armed).
                let l = SharedFd::new(l.into());
                let mut incoming = op::accept_multishot(&l);
                let clients: Vec<TcpStream> =
                    (0..N).map(|_| TcpStream::connect(addr).unwrap()).collect();
                let first = incoming.next().await.unwrap().unwrap();
                if path == Path::Native {
                    // The multishot accept takes every pending connection: each is a
                    // descriptor of ours, one handed out and N - 1 queued in the stream.
                    yield_until(|| open_fds() == base + 2 * N).await;
                }
                drop(incoming);
                // The queued ones are closed at once; what the kernel still completes (the
                // cancellation) carries no connection.
                assert_eq!(
                    open_fds(),
                    base + N + 1,
                    "{config:?} {path:?}: clients + the one taken"
                );
                drop(first);
                drop(clients);
                assert_eq!(open_fds(), base, "{config:?} {path:?}");
            });
        }
    });
}

#[test]
fn a_dropped_recv_stream_returns_the_buffers_it_had_queued() {
    let _serial = serial();
    under_every_config("dropped recv stream", 1, |config, b| {
        let rt = b.recv_buffers(16, 1024).build().unwrap();
        let handle = rt.handle();
        rt.block_on(async move {
            let (server, mut client) = tcp_pair();
            let mut stream = op::recv_multishot(&SharedFd::new(server.into()));
            write_pattern(&mut client, 8 * 1024, 8 * 1024).unwrap();
            let first = stream.next().await.unwrap().unwrap();
            let in_use = || handle.stats().total().bufs_in_use;
            // The rest of the 8 KiB lands in further buffers, queued in the stream.
            yield_until(|| in_use() >= 4).await;
            drop(stream);
            assert_eq!(
                in_use(),
                1,
                "{config:?}: only the buffer handed out is still held"
            );
            drop(first);
            assert_eq!(in_use(), 0, "{config:?}");
        });
    });
}

/// A runtime with accept and receive streams armed on both shards when it is dropped, and
/// buffers the test still holds: returns them with what they should contain.
fn shut_down_with_streams_armed(config: Config, cancel_any: bool) -> Vec<(RecvBuf, u64)> {
    let rt = config
        .builder(2)
        .shutdown_cancel_any(cancel_any)
        .recv_buffers(8, 1024)
        .build()
        .unwrap();
    let (held_tx, held_rx) = mpsc::channel();
    let held = rt.block_on(async move {
        let mut tasks = Vec::new();
        for shard in 0..2 {
            let held_tx = held_tx.clone();
            tasks.push(ringsteal_rt::spawn_with(
                Placement::Pinned(shard),
                async move {
                    // An accept stream armed with nobody connecting.
                    let (l, _) = listener();
                    let mut incoming = op::accept_multishot(&SharedFd::new(l.into()));
                    assert!(std::future::poll_fn(|cx| std::task::Poll::Ready(
                        incoming.poll_next(cx)
                    ))
                    .await
                    .is_pending());
                    // A receive stream that took some data and is armed for more.
                    let (server, mut client) = tcp_pair();
                    let mut stream = op::recv_multishot(&SharedFd::new(server.into()));
                    write_pattern(&mut client, 4096, 4096).unwrap();
                    let mut at = 0;
                    while at < 4096 {
                        let buf = stream.next().await.unwrap().unwrap();
                        let n = buf.len() as u64;
                        held_tx.send(Some((buf, at))).unwrap();
                        at += n;
                    }
                    held_tx.send(None).unwrap();
                    // Parked forever, streams armed, until the runtime shuts down.
                    std::future::pending::<()>().await;
                    drop((incoming, stream, client));
                },
            ));
        }
        drop(held_tx);
        // Wait until both shards' streams are armed and their buffers handed over.
        let (mut held, mut done) = (Vec::new(), 0);
        while done < 2 {
            match held_rx.try_recv() {
                Ok(Some(buf)) => held.push(buf),
                Ok(None) => done += 1,
                Err(_) => ringsteal_rt::yield_now().await,
            }
        }
        drop(tasks);
        held
    });
    drop(rt);
    held
}

#[test]
fn shutdown_with_streams_armed_and_buffers_held_frees_nothing_early_and_leaks_nothing() {
    let _serial = serial();
    for cancel_any in [true, false] {
        for config in Config::ALL {
            common::hang_guard(
                &format!("shutdown with streams [{config:?}, cancel_any {cancel_any}]"),
                HANG_LIMIT,
                move || {
                    let base = open_fds();
                    let held = shut_down_with_streams_armed(config, cancel_any);
                    assert!(held.len() >= 8, "{config:?}: buffers held past the runtime");
                    // The runtime is gone; the buffers are still mapped and intact. The rings
                    // of the shards whose buffers are held are still open for them (so that
                    // their groups unregister from the right ring when they finally go).
                    assert_eq!(
                        open_fds(),
                        base + 2,
                        "{config:?}: both shards' rings kept open"
                    );
                    for (buf, at) in &held {
                        let mut check = PatternCheck { offset: *at };
                        check.feed(buf);
                    }
                    drop(held);
                    assert_eq!(
                        open_fds(),
                        base,
                        "{config:?} cancel_any {cancel_any}: a descriptor leaked"
                    );
                },
            );
        }
    }
}

#[test]
fn a_runtime_whose_buffers_all_came_back_closes_everything_at_shutdown() {
    let _serial = serial();
    under_every_config("shutdown, group unused", 1, |config, b| {
        let base = open_fds();
        let rt = b.build().unwrap();
        rt.block_on(async {
            let (rx, mut tx) = std::os::unix::net::UnixStream::pair().unwrap();
            let mut stream = op::recv_multishot(&SharedFd::new(rx.into()));
            tx.write_all(b"x").unwrap();
            let buf = stream.next().await.unwrap().unwrap();
            assert_eq!(&buf[..], b"x");
        });
        drop(rt);
        assert_eq!(
            open_fds(),
            base,
            "{config:?}: the ring and its buffer group are closed"
        );
    });
}
