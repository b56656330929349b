//! The `stream` feature: `futures_core::Stream` on every stream type, driven by
//! `futures_util::StreamExt` as a tokio-stream user would (`next`, `take`, `collect`,
//! `map`), over real sockets, files, timers and signals.

use std::collections::BTreeSet;
use std::time::Duration;

use futures_util::StreamExt;
use ringsteal::net::{TcpListener, TcpStream, UdpSocket};
use ringsteal::Runtime;

fn runtime() -> Runtime {
    Runtime::builder().shards(2).build().unwrap()
}

/// A hang guard: the body must finish within a generous time.
fn guarded<F: std::future::Future>(rt: &Runtime, body: F) -> F::Output {
    let out = rt.block_on(ringsteal::time::timeout(Duration::from_secs(60), body));
    out.expect("the stream test hung")
}

#[test]
fn an_incoming_is_a_stream_of_connections() {
    let rt = runtime();
    guarded(&rt, async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let clients = ringsteal::spawn(async move {
            let mut conns = Vec::new();
            for _ in 0..3 {
                conns.push(TcpStream::connect(addr).await.unwrap());
            }
            conns
        });
        let accepted: Vec<_> = listener
            .incoming()
            .take(3)
            .map(|conn| conn.unwrap().peer_addr().unwrap())
            .collect()
            .await;
        let conns = clients.await.unwrap();
        let mut peers: Vec<_> = conns.iter().map(|c| c.local_addr().unwrap()).collect();
        let mut accepted = accepted;
        peers.sort();
        accepted.sort();
        assert_eq!(accepted, peers);
    });
}

#[test]
fn receive_streams_yield_the_bytes_in_order_then_end() {
    let rt = runtime();
    guarded(&rt, async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let sent = data.clone();
        let writer = ringsteal::spawn(async move {
            client.write_all(sent).await.0.unwrap();
            client.shutdown(std::net::Shutdown::Write).await.unwrap();
        });
        let mut got = Vec::new();
        let mut chunks = server.recv_stream();
        while let Some(buf) = chunks.next().await {
            got.extend_from_slice(&buf.unwrap());
        }
        writer.await.unwrap();
        assert_eq!(got, data);

        // Datagrams: one item each.
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let mut datagrams = b.recv_stream();
        for i in 0..3u8 {
            a.send_to(vec![i; 10], b.local_addr().unwrap())
                .await
                .0
                .unwrap();
            let d = datagrams.next().await.unwrap().unwrap();
            assert_eq!(d.payload(), &[i; 10][..]);
        }
    });
}

#[test]
fn an_interval_is_an_endless_stream_of_ticks() {
    let rt = runtime();
    guarded(&rt, async {
        let start = ringsteal::time::Instant::now();
        let ticks: Vec<_> = ringsteal::time::interval(Duration::from_millis(2))
            .take(4)
            .collect()
            .await;
        assert_eq!(ticks.len(), 4);
        assert!(ticks
            .windows(2)
            .all(|w| w[1] - w[0] >= Duration::from_millis(2)));
        assert!(ticks[0] >= start);
    });
}

#[test]
fn a_directory_listing_is_a_stream_of_entries() {
    let dir = std::env::temp_dir().join(format!("ringsteal-streams-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let names: BTreeSet<String> = (0..5).map(|i| format!("f{i}")).collect();
    for n in &names {
        std::fs::write(dir.join(n), b"x").unwrap();
    }
    let rt = runtime();
    let listed: BTreeSet<String> = guarded(&rt, async {
        ringsteal::fs::read_dir(&dir)
            .await
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
            .await
    });
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(listed, names);
}

#[test]
fn a_signal_is_a_stream_of_deliveries() {
    let rt = runtime();
    guarded(&rt, async {
        let mut usr1 =
            ringsteal_signal::signal(ringsteal_signal::SignalKind::user_defined1()).unwrap();
        // SAFETY: raise sends a signal to this thread; the listener above handles it.
        assert_eq!(unsafe { libc::raise(libc::SIGUSR1) }, 0);
        assert_eq!(usr1.next().await, Some(()));
    });
}
