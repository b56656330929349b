//! The HTTP servers of the networking suite answer correctly: each is checked, answer by
//! answer, by the in-process client (`net::http_client`: 64 concurrent connections, plain,
//! pipelined, large, split and closing requests) over loopback; ringsteal's is
//! `examples/http_server`'s own code on a 2-shard runtime, run as the example runs it. The
//! benchmarks (`benches/benches/net.rs`) run the same check before they measure; these
//! tests keep the servers honest without running criterion.

use ringsteal::net::TcpListener;
use ringsteal::Runtime;
use ringsteal_benches::http::server::{self, Reads};
use ringsteal_benches::net::http_client::{check_server, REQUESTS_PER_CONNECTION};
use ringsteal_benches::net::thread_server::{self, ThreadServer};
use ringsteal_benches::util::{race, Either};

const CONNECTIONS: usize = 64;

/// Serves with the example's server (accept loop in `block_on`, as its `main` runs it)
/// until the check, on the blocking pool, is done, and checks that every connection was
/// dealt to the shards.
fn check_ringsteal(reads: Reads) {
    let rt = Runtime::builder().shards(2).build().expect("runtime");
    let answered = rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local_addr");
        let check = ringsteal::spawn_blocking(move || check_server(addr, CONNECTIONS));
        match race(server::serve(listener, reads), check).await {
            Either::Left(()) => panic!("accept loop ended"),
            Either::Right(out) => out.expect("check thread"),
        }
    });
    assert_eq!(
        answered,
        Ok(CONNECTIONS as u64 * REQUESTS_PER_CONNECTION),
        "{reads:?}"
    );
    // Written as the quick start writes a server, it deals its connections to both shards.
    let spread = rt.handle().stats().total().spawns_spread;
    assert_eq!(spread, CONNECTIONS as u64, "{reads:?}: connections dealt");
}

#[test]
fn ringsteal_server_answers_every_request_with_one_read_per_read() {
    check_ringsteal(Reads::Single);
}

#[test]
fn ringsteal_server_answers_every_request_over_a_receive_stream() {
    check_ringsteal(Reads::RecvStream);
}

#[test]
fn std_thread_per_connection_server_answers_every_request() {
    let s = ThreadServer::start("std-http-test", thread_server::http).expect("std server");
    assert_eq!(
        check_server(s.addr(), CONNECTIONS),
        Ok(CONNECTIONS as u64 * REQUESTS_PER_CONNECTION)
    );
}

#[test]
fn the_check_fails_against_a_server_that_answers_wrongly() {
    // An echo server sends the requests back: the check must notice.
    let s = ThreadServer::start("echo-test", thread_server::echo).expect("echo server");
    let got = check_server(s.addr(), 4);
    assert!(
        got.as_ref().is_err_and(|e| e.contains("wrong response")),
        "{got:?}"
    );
}

#[test]
fn a_receive_stream_reader_delivers_every_byte_in_order_into_small_buffers() {
    use ringsteal::io::AsyncReadOwned;
    use ringsteal::net::TcpStream;
    use ringsteal_benches::http::recv_stream_io::RecvStreamIo;

    let rt = Runtime::builder().shards(1).build().expect("runtime");
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let client = TcpStream::connect(listener.local_addr()?).await?;
        let (server, _) = listener.accept().await?;
        let sent: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let writer = ringsteal::spawn(async move {
            let (res, _) = client.write_all(sent).await;
            res
        });
        let mut reader = RecvStreamIo::new(server);
        let mut got = Vec::new();
        loop {
            // 100 bytes at a time: most reads take part of a provided buffer.
            let (res, buf) = reader.read(Vec::with_capacity(100)).await;
            if res? == 0 {
                break;
            }
            got.extend_from_slice(&buf);
        }
        writer.await.expect("writer task")?;
        let want: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        assert_eq!(got.len(), want.len());
        assert!(got == want, "bytes lost or reordered");
        Ok::<(), std::io::Error>(())
    })
    .expect("receive stream reader");
}
