//! The net crate with its kernel features taken away, as on the oldest kernels it runs on,
//! and what each fallback leaves behind: a runtime with every feature switch off at once,
//! plain rings and no `IORING_ASYNC_CANCEL_ANY` at shutdown (a 5.15 kernel) runs an echo
//! server on both shards and shuts down with streams armed; a dropped `incoming()` closes
//! the connections it had accepted, on multishot and on single-shot accepts; and a runtime
//! dropped with accept, receive and datagram streams armed on each fallback, with and
//! without CANCEL_ANY, returns promptly. Every case ends with the descriptor count where it
//! began, and `/proc/self/fd` is process-wide, so this binary holds one test that runs its
//! cases in turn.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::time::{Duration, Instant};

use common::{hang_guard, Config, Signal, HANG_LIMIT};
use ringsteal_net::{TcpListener, TcpStream, UdpSocket, UnixStream};
use ringsteal_rt::time::timeout;
use ringsteal_rt::{Builder, Feature, Placement, Runtime, WakeMechanism};
use support::*;

/// Every feature the builder can take away.
const EVERY_FEATURE: [Feature; 10] = [
    Feature::MsgRing,
    Feature::SendMsgRing,
    Feature::Socket,
    Feature::SendZc,
    Feature::Waitid,
    Feature::Ftruncate,
    Feature::MultishotAccept,
    Feature::MultishotRecv,
    Feature::ProvidedBufferRing,
    Feature::Sqpoll,
];

/// Far below the runtimes' shutdown timeout: cancelled requests complete in microseconds.
const PROMPT_SHUTDOWN: Duration = Duration::from_secs(5);

/// `b` with `without` taken away, if any.
fn without(b: Builder, without: Option<Feature>) -> Builder {
    match without {
        Some(f) => b.without_feature(f),
        None => b,
    }
}

/// Arms `next` (its request goes to the kernel on this first poll), which must wait.
async fn arm<F: std::future::Future + Unpin>(next: &mut F) {
    assert!(poll_once(next).await.is_none(), "nothing should be ready");
}

/// An echo server taking `n` connections from `incoming()`, one task each, echoing through
/// receive streams; `n` clients each send 64 KiB with `write_all_zc` and read it back.
/// Returns the accept requests `incoming()` submitted.
async fn echo_over_incoming(n: u64) -> u64 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let server = ringsteal_rt::spawn(async move {
        let mut incoming = l.incoming();
        let mut echoes = Vec::new();
        for _ in 0..n {
            let s = timeout(OP_GUARD, incoming.next())
                .await
                .expect("incoming() stalled")
                .unwrap()
                .unwrap();
            echoes.push(ringsteal_rt::spawn(async move {
                let mut data = s.recv_stream();
                while let Some(buf) = timeout(OP_GUARD, data.next())
                    .await
                    .expect("the receive stream stalled")
                {
                    s.write_all(buf.unwrap()).await.0.unwrap();
                }
            }));
        }
        for e in echoes {
            e.await.unwrap();
        }
        incoming.requests_submitted()
    });
    for seed in 0..n {
        let c = TcpStream::connect(addr).await.unwrap();
        let out = stream_bytes(seed, 0, 64 * 1024);
        c.write_all_zc(out).await.0.unwrap();
        let (res, back) = c.read_exact(vec![0; 64 * 1024]).await;
        res.unwrap();
        check_stream(seed, 0, &back);
    }
    server.await.unwrap()
}

/// Every feature off, plain rings, no CANCEL_ANY at shutdown: an echo server over
/// `incoming()` on both shards (single-shot accepts and heap receives, plain sends, sockets
/// from `socket(2)`, eventfd doorbells), a UDP datagram, and then a runtime dropped with an
/// accept and a receive stream armed on each shard, which returns promptly.
fn everything_off_at_once(wake: WakeMechanism) {
    let rt = EVERY_FEATURE
        .into_iter()
        .fold(Runtime::builder().shards(2), Builder::without_feature)
        .wake(wake)
        .defer_taskrun(false)
        .coop_taskrun(false)
        .shutdown_cancel_any(false)
        .build()
        .unwrap();
    for f in EVERY_FEATURE {
        assert!(!rt.features().supports(f), "{f:?} was taken away");
    }
    assert_eq!(
        rt.block_on(echo_over_incoming(6)),
        6,
        "{wake:?}: one accept per connection"
    );
    rt.block_on(async {
        let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let mut datagrams = rx.recv_stream();
        let to = rx.local_addr().unwrap();
        tx.send_to(b"datagram".to_vec(), to).await.0.unwrap();
        let d = timeout(OP_GUARD, datagrams.next()).await.unwrap();
        assert_eq!(d.unwrap().unwrap().payload(), b"datagram", "{wake:?}");
        let armed = Signal::new();
        for shard in 0..2 {
            let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let (a, b) = UnixStream::pair().unwrap();
            let armed = armed.clone();
            ringsteal_rt::spawn_with(Placement::Pinned(shard), async move {
                let (mut incoming, mut data) = (l.incoming(), a.recv_stream());
                let (mut accept, mut recv) = (Box::pin(incoming.next()), Box::pin(data.next()));
                arm(&mut accept).await;
                arm(&mut recv).await;
                armed.add();
                // Nobody connects or writes: the runtime is dropped with both armed.
                std::future::pending::<()>().await;
                drop((accept, recv, b));
            });
        }
        armed.wait_for(2).await;
    });
    let start = Instant::now();
    drop(rt);
    let took = start.elapsed();
    assert!(took < PROMPT_SHUTDOWN, "{wake:?}: shutdown took {took:?}");
}

/// An `incoming()` dropped after yielding one of four queued connections closes the others
/// it had accepted (multishot) or leaves them to the listener's close (single-shot): every
/// client sees its connection end (end of file or a reset) while the runtime still runs, so
/// nothing but the drops can have closed them.
fn a_dropped_incoming_closes_what_it_accepted(config: Config, path: Option<Feature>) {
    let rt = without(config.builder(1), path).build().unwrap();
    let ends = rt.block_on(async {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let mut incoming = l.incoming();
        let clients: Vec<_> = (0..4)
            .map(|_| std::net::TcpStream::connect(addr).unwrap())
            .collect();
        let first = timeout(OP_GUARD, incoming.next()).await.unwrap();
        drop(first.unwrap().unwrap());
        drop((incoming, l));
        let mut ends = Vec::new();
        for mut c in clients {
            // Read on the blocking pool, so this shard goes on reaping the cancels.
            let end = ringsteal_rt::spawn_blocking(move || {
                c.set_read_timeout(Some(OP_GUARD)).unwrap();
                std::io::Read::read(&mut c, &mut [0u8; 1]).map_err(|e| e.kind())
            });
            ends.push(end.await.unwrap());
        }
        ends
    });
    drop(rt);
    for end in ends {
        assert!(
            matches!(end, Ok(0) | Err(std::io::ErrorKind::ConnectionReset)),
            "{config:?} {path:?}: a connection outlived its dropped incoming(): {end:?}"
        );
    }
}

/// A runtime dropped with an accept stream, a receive stream and a datagram stream armed on
/// each of its two shards, on fallback `path`, with or without CANCEL_ANY: the drop returns
/// promptly (each single-shot request is cancelled by its own `user_data` without
/// CANCEL_ANY).
fn streams_armed_at_shutdown(config: Config, path: Feature, cancel_any: bool) {
    let rt = config
        .builder(2)
        .without_feature(path)
        .shutdown_cancel_any(cancel_any)
        .build()
        .unwrap();
    rt.block_on(async {
        let armed = Signal::new();
        for shard in 0..2 {
            let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let (a, b) = UnixStream::pair().unwrap();
            let u = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let armed = armed.clone();
            ringsteal_rt::spawn_with(Placement::Pinned(shard), async move {
                let mut incoming = l.incoming();
                let mut data = a.recv_stream();
                let mut datagrams = u.recv_stream();
                let mut accept = Box::pin(incoming.next());
                let mut recv = Box::pin(data.next());
                let mut datagram = Box::pin(datagrams.next());
                arm(&mut accept).await;
                arm(&mut recv).await;
                arm(&mut datagram).await;
                armed.add();
                std::future::pending::<()>().await;
                drop((accept, recv, datagram, b));
            });
        }
        armed.wait_for(2).await;
    });
    let start = Instant::now();
    drop(rt);
    let took = start.elapsed();
    assert!(
        took < PROMPT_SHUTDOWN,
        "{config:?} without {path:?}, cancel_any {cancel_any}: shutdown took {took:?}"
    );
}

#[test]
fn fallback_paths_serve_shut_down_and_close_every_descriptor() {
    let base = open_fds();
    let check = |what: &str| assert_eq!(open_fds(), base, "{what}: descriptors left open");
    for wake in [WakeMechanism::Auto, WakeMechanism::EventFd] {
        let what = format!("everything off [{wake:?}]");
        hang_guard(&what, HANG_LIMIT, move || everything_off_at_once(wake));
        check(&what);
    }
    for config in Config::ALL {
        for path in [None, Some(Feature::MultishotAccept)] {
            let what = format!("dropped incoming [{config:?}, without {path:?}]");
            hang_guard(&what, HANG_LIMIT, move || {
                a_dropped_incoming_closes_what_it_accepted(config, path)
            });
            check(&what);
        }
        for path in [
            Feature::MultishotAccept,
            Feature::MultishotRecv,
            Feature::ProvidedBufferRing,
        ] {
            for cancel_any in [true, false] {
                let what =
                    format!("armed at shutdown [{config:?}, without {path:?}, {cancel_any}]");
                hang_guard(&what, HANG_LIMIT, move || {
                    streams_armed_at_shutdown(config, path, cancel_any)
                });
                check(&what);
            }
        }
    }
}
