//! Runs the examples' code as tests, so an example that breaks fails `cargo test`. The
//! servers are started on `127.0.0.1:0` and driven by real clients over loopback.

#[path = "../subprocess.rs"]
#[allow(dead_code)] // its `main` is the example binary's entry point
mod subprocess;

#[path = "../hyper_server.rs"]
#[allow(dead_code)]
mod hyper_server;

#[path = "../axum_server.rs"]
#[allow(dead_code)]
mod axum_server;

#[path = "../hyper_client.rs"]
#[allow(dead_code)]
mod hyper_client;

#[path = "../tls_echo.rs"]
#[allow(dead_code)]
mod tls_echo;

use std::collections::BTreeSet;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn the_subprocess_example_runs() {
    subprocess::run().expect("the subprocess example");
}

type Run = fn(&str, Box<dyn FnOnce(SocketAddr)>, StopFuture) -> io::Result<()>;
type StopFuture = std::pin::Pin<Box<dyn Future<Output = ()>>>;

/// A server example running on its own thread, listening on `127.0.0.1:0`.
struct Running {
    addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    thread: std::thread::JoinHandle<io::Result<()>>,
}

fn start(run: Run) -> Running {
    let (ready_tx, ready_rx) = mpsc::channel();
    let (stop, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let stop: StopFuture = Box::pin(async move {
            let _ = stop_rx.await;
        });
        run(
            "127.0.0.1:0",
            Box::new(move |addr| ready_tx.send(addr).unwrap()),
            stop,
        )
    });
    let addr = ready_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the server never said it was listening");
    assert_ne!(addr.port(), 0, "the bound port, not 0");
    Running { addr, stop, thread }
}

impl Running {
    fn stop(self) {
        self.stop.send(()).unwrap();
        self.thread
            .join()
            .unwrap()
            .expect("the server ended with an error");
    }
}

/// A one-shard ringsteal runtime for the clients.
fn client_runtime() -> ringsteal::Runtime {
    ringsteal::Runtime::builder().shards(1).build().unwrap()
}

#[test]
fn the_hyper_server_answers_http1_and_http2_on_every_shard_and_the_client_fetches() {
    let server = start(hyper_server::run);
    let shards = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8);
    let rt = client_runtime();
    rt.block_on(async {
        let mut seen = BTreeSet::new();
        for i in 0..8 {
            let url = format!("http://{}/hello/{i}", server.addr);
            let (status, body) = hyper_client::fetch(&url).await.unwrap();
            assert_eq!(status, 200);
            let rest = body.strip_prefix("hello from shard ").expect(&body);
            let (shard, tail) = rest.split_once(':').unwrap();
            assert_eq!(tail.trim(), format!("/hello/{i} HTTP/1.1"));
            seen.insert(shard.to_string());
        }
        assert_eq!(seen.len(), shards, "connections served on shards {seen:?}");

        // HTTP/2 with prior knowledge, on the same port.
        let stream = ringsteal::net::TcpStream::connect(server.addr)
            .await
            .unwrap();
        let (mut h2, conn) =
            hyper::client::conn::http2::Builder::new(ringsteal::hyper::Executor::new())
                .timer(ringsteal::hyper::Timer::new())
                .handshake(ringsteal::hyper::Io::new(stream))
                .await
                .unwrap();
        let driver = ringsteal::spawn(conn);
        let req = hyper::Request::get(format!("http://{}/two", server.addr))
            .body(http_body_util::Empty::<hyper::body::Bytes>::new())
            .unwrap();
        let res = h2.send_request(req).await.unwrap();
        assert_eq!(res.version(), hyper::Version::HTTP_2);
        use http_body_util::BodyExt;
        let body = res.into_body().collect().await.unwrap().to_bytes();
        assert!(String::from_utf8_lossy(&body).ends_with("/two HTTP/2.0\n"));
        drop(h2);
        driver.await.unwrap().unwrap();

        // The client refuses what it cannot fetch.
        assert!(hyper_client::fetch("https://example.invalid/")
            .await
            .is_err());
    });
    server.stop();
}

#[test]
fn the_axum_server_routes_requests_and_shares_its_state() {
    let server = start(axum_server::run);
    let rt = client_runtime();
    rt.block_on(async {
        let (status, body) = hyper_client::fetch(&format!("http://{}/", server.addr))
            .await
            .unwrap();
        assert_eq!(
            (status, body.as_str()),
            (200, "hello from axum on ringsteal\n")
        );
        for n in 1..=3 {
            let url = format!("http://{}/hello/ring", server.addr);
            let (status, body) = hyper_client::fetch(&url).await.unwrap();
            assert_eq!(status, 200);
            assert!(
                body.starts_with(&format!("hello, ring (greeting {n}, shard ")),
                "{body}"
            );
        }
        let (status, _) = hyper_client::fetch(&format!("http://{}/nowhere", server.addr))
            .await
            .unwrap();
        assert_eq!(status, 404);
    });
    server.stop();
}

#[test]
fn the_tls_echo_example_round_trips_a_line() {
    assert_eq!(tls_echo::run().unwrap(), "hello over rustls on io_uring");
}
