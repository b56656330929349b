//! hyper 1.x, hyper-util and axum on ringsteal: HTTP/1.1 and HTTP/2 servers and clients over
//! loopback, the local and `Send` executors, hyper-util's `auto` server and legacy client,
//! and the timer (header-read timeout, `reset` from another thread, sleeps that move shards).
//! Each runs under MSG_RING and eventfd wakes.

#![cfg(feature = "hyper")]

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;

use std::convert::Infallible;
use std::future::{poll_fn, Future};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Context;
use std::time::{Duration, Instant};

use common::{hang_guard, Config, HANG_LIMIT};
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Bytes, Incoming};
use hyper::rt::Timer as _;
use hyper::{Request, Response};
use ringsteal_compat::hyper::{Executor, Io, LocalExecutor, Timer};
use ringsteal_net::{TcpListener, TcpStream};
use ringsteal_rt::time::timeout;
use ringsteal_rt::{Placement, Runtime};

const GUARD: Duration = Duration::from_secs(20);

/// Runs `body` on a 2-shard runtime under MSG_RING and under eventfd wakes.
fn on_runtimes<F, Fut>(name: &str, body: F)
where
    F: Fn() -> Fut + Send + Sync + Copy + 'static,
    Fut: Future<Output = ()>,
{
    for config in [Config::MsgRing, Config::EventFd] {
        hang_guard(&format!("{name} [{config:?}]"), HANG_LIMIT, move || {
            let rt: Runtime = config.runtime(2);
            rt.block_on(async move {
                timeout(GUARD * 2, body()).await.expect("test body stalled");
            });
        });
    }
}

/// Answers with the shard that served the request and the request's path.
async fn whoami(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let shard = ringsteal_rt::current_shard().expect("served on a shard");
    let body = format!("{} {}", shard, req.uri().path());
    Ok(Response::new(Full::new(Bytes::from(body))))
}

async fn get(
    sender: &mut hyper::client::conn::http1::SendRequest<Empty<Bytes>>,
    path: &str,
) -> String {
    let req = Request::get(path)
        .header("host", "test")
        .body(Empty::new())
        .unwrap();
    // hyper's contract: an HTTP/1 sender takes the next request once the connection has
    // finished the previous exchange (`ready`); without it a request can be refused as
    // "connection was not ready" when the connection task has not run yet.
    sender.ready().await.unwrap();
    let res = sender.send_request(req).await.unwrap();
    assert_eq!(res.status(), 200);
    let body = res.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(body.to_vec()).unwrap()
}

#[test]
fn http1_keep_alive_connections_are_served_on_every_shard() {
    on_runtimes("http1 every shard", || async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        const CONNS: usize = 8;
        let server = ringsteal_rt::spawn(async move {
            for _ in 0..CONNS {
                let (stream, _) = listener.accept().await.unwrap();
                ringsteal_rt::spawn_with(Placement::RoundRobin, async move {
                    hyper::server::conn::http1::Builder::new()
                        .timer(Timer::new())
                        .serve_connection(Io::new(stream), hyper::service::service_fn(whoami))
                        .await
                        .unwrap();
                });
            }
        });
        let mut shards = std::collections::BTreeSet::new();
        for c in 0..CONNS {
            let stream = TcpStream::connect(addr).await.unwrap();
            let (mut sender, conn) = hyper::client::conn::http1::handshake(Io::new(stream))
                .await
                .unwrap();
            let driver = ringsteal_rt::spawn(conn);
            for r in 0..5 {
                let path = format!("/c{c}/r{r}");
                let body = get(&mut sender, &path).await;
                let (shard, echoed) = body.split_once(' ').unwrap();
                assert_eq!(echoed, path);
                shards.insert(shard.parse::<usize>().unwrap());
            }
            drop(sender);
            driver.await.unwrap().unwrap();
        }
        assert_eq!(
            shards.len(),
            2,
            "connections were served on shards {shards:?}"
        );
        server.await.unwrap();
    });
}

#[test]
fn http2_streams_run_on_the_send_executor() {
    on_runtimes("http2 send executor", || async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = ringsteal_rt::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            hyper::server::conn::http2::Builder::new(Executor::new())
                .timer(Timer::new())
                .serve_connection(Io::new(stream), hyper::service::service_fn(whoami))
                .await
                .unwrap();
        });
        let stream = TcpStream::connect(addr).await.unwrap();
        let (sender, conn) = hyper::client::conn::http2::Builder::new(Executor::new())
            .timer(Timer::new())
            .handshake(Io::new(stream))
            .await
            .unwrap();
        let driver = ringsteal_rt::spawn(conn);
        // 50 requests at once over one connection, from tasks on both shards.
        let requests: Vec<_> = (0..50)
            .map(|i| {
                let mut sender = sender.clone();
                ringsteal_rt::spawn_with(Placement::RoundRobin, async move {
                    let req = Request::get(format!("http://test/s{i}"))
                        .body(Empty::<Bytes>::new())
                        .unwrap();
                    let res = sender.send_request(req).await.unwrap();
                    let body = res.into_body().collect().await.unwrap().to_bytes();
                    let text = String::from_utf8(body.to_vec()).unwrap();
                    assert!(text.ends_with(&format!(" /s{i}")), "{text}");
                })
            })
            .collect();
        for r in requests {
            r.await.unwrap();
        }
        drop(sender);
        driver.await.unwrap().unwrap();
        server.await.unwrap();
    });
}

#[test]
fn the_local_executor_serves_http2_with_a_service_that_is_not_send() {
    on_runtimes("http2 local executor", || async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = ringsteal_rt::spawn_local(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let hits = std::rc::Rc::new(std::cell::Cell::new(0u32)); // !Send
            let service = hyper::service::service_fn(move |_req: Request<Incoming>| {
                let hits = hits.clone();
                async move {
                    hits.set(hits.get() + 1);
                    Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(
                        hits.get().to_string(),
                    ))))
                }
            });
            hyper::server::conn::http2::Builder::new(LocalExecutor::new())
                .timer(Timer::new())
                .serve_connection(Io::new(stream), service)
                .await
                .unwrap();
        });
        let stream = TcpStream::connect(addr).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http2::Builder::new(Executor::new())
            .timer(Timer::new())
            .handshake(Io::new(stream))
            .await
            .unwrap();
        let driver = ringsteal_rt::spawn(conn);
        for expect in 1..=5u32 {
            let req = Request::get("http://test/")
                .body(Empty::<Bytes>::new())
                .unwrap();
            let res = sender.send_request(req).await.unwrap();
            let body = res.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(body, expect.to_string().as_bytes());
        }
        drop(sender);
        driver.await.unwrap().unwrap();
        server.await.unwrap();
    });
}

#[test]
fn the_header_read_timeout_closes_a_silent_connection() {
    on_runtimes("header read timeout", || async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = ringsteal_rt::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let started = Instant::now();
            let res = hyper::server::conn::http1::Builder::new()
                .timer(Timer::new())
                .header_read_timeout(Duration::from_millis(200))
                .serve_connection(Io::new(stream), hyper::service::service_fn(whoami))
                .await;
            (res.is_err(), started.elapsed())
        });
        let client = TcpStream::connect(addr).await.unwrap();
        // Half a request line, then silence.
        client.write_all(b"GET / HT".to_vec()).await.0.unwrap();
        let mut all = Vec::new();
        loop {
            let (res, buf) = timeout(GUARD, client.read(Vec::with_capacity(1024)))
                .await
                .expect("the server never timed the connection out");
            match res.unwrap() {
                0 => break,
                n => all.extend_from_slice(&buf[..n]),
            }
        }
        let (failed, took) = server.await.unwrap();
        assert!(failed, "the connection ended with the timeout error");
        assert!(
            took >= Duration::from_millis(200),
            "timed out after {took:?}"
        );
        let text = String::from_utf8_lossy(&all);
        assert!(
            text.is_empty() || text.starts_with("HTTP/1.1 408"),
            "{text}"
        );
    });
}

#[test]
fn the_header_read_timeout_runs_on_the_paused_runtime_clock() {
    // hyper takes its deadlines from `Timer::now`. On a paused clock moved a day ahead of
    // `std`'s, a deadline taken from `std::time::Instant::now()` would already be a day in
    // the past and fire at once; from the runtime's clock it fires an hour later, paused time.
    const HOUR: Duration = Duration::from_secs(3600);
    for config in [Config::MsgRing, Config::EventFd] {
        hang_guard(
            &format!("paused header timeout [{config:?}]"),
            HANG_LIMIT,
            move || {
                config.runtime(1).block_on(async {
                    ringsteal_rt::time::pause();
                    ringsteal_rt::time::advance(Duration::from_secs(24 * 3600)).await;
                    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
                    let addr = listener.local_addr().unwrap();
                    let server = ringsteal_rt::spawn(async move {
                        let (stream, _) = listener.accept().await.unwrap();
                        hyper::server::conn::http1::Builder::new()
                            .timer(Timer::new())
                            .header_read_timeout(HOUR)
                            .serve_connection(Io::new(stream), hyper::service::service_fn(whoami))
                            .await
                            .is_err()
                    });
                    let start = ringsteal_rt::time::Instant::now();
                    let client = TcpStream::connect(addr).await.unwrap();
                    client.write_all(b"GET / HT".to_vec()).await.0.unwrap();
                    // No ringsteal timeout here: on the paused clock it would fire first. The
                    // hang guard bounds the real time.
                    loop {
                        let (res, _) = client.read(Vec::with_capacity(1024)).await;
                        if res.unwrap() == 0 {
                            break;
                        }
                    }
                    let waited = start.elapsed();
                    assert!(
                        server.await.unwrap(),
                        "the connection ended with the timeout error"
                    );
                    assert!(
                    waited >= HOUR && waited < HOUR + Duration::from_secs(1),
                    "the header-read timeout fired after {waited:?} of paused time, not an hour"
                );
                });
            },
        );
    }
}

#[test]
fn a_timer_reset_from_another_thread_moves_a_pending_sleep() {
    on_runtimes("timer reset from a thread", || async {
        let timer = Timer::new();
        let sleep = Arc::new(Mutex::new(timer.sleep(Duration::from_secs(3600))));
        let polled = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let (shared, seen) = (sleep.clone(), polled.clone());
        let waiter = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
            poll_fn(|cx| {
                let mut sleep = shared.lock().unwrap();
                let res = sleep.as_mut().poll(cx);
                // Still under the lock: once the flag shows and the lock is free, the
                // sleep is registered with this task's waker and the task is parked.
                seen.store(true, Ordering::SeqCst);
                res
            })
            .await;
        });
        while !(polled.load(Ordering::SeqCst) && sleep.try_lock().is_ok()) {
            ringsteal_rt::yield_now().await;
        }
        // Reset from a plain thread: the registered waker must fire at the new deadline
        // without a new poll (the hour-long deadline would outlast the guard).
        let s = sleep.clone();
        std::thread::spawn(move || {
            let mut guard = s.lock().unwrap();
            timer.reset(&mut guard, Instant::now() + Duration::from_millis(5));
        })
        .join()
        .unwrap();
        timeout(GUARD, waiter)
            .await
            .expect("the reset sleep never fired")
            .unwrap();
        assert!(started.elapsed() < GUARD);
    });
}

#[test]
fn a_sleep_polled_on_another_shard_moves_there_and_still_fires() {
    on_runtimes("sleep moves shards", || async {
        let timer = Timer::new();
        let mut sleep = timer.sleep(Duration::from_millis(30));
        // Registered on this shard...
        let waker = noop_waker();
        assert!(sleep
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        // ...then awaited on shard 1.
        let moved = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
            sleep.await;
            ringsteal_rt::current_shard()
        });
        assert_eq!(moved.await.unwrap(), Some(1));
    });
}

#[test]
fn axum_router_served_by_hyper_util_auto_over_http1_and_http2() {
    use axum::extract::{Path, State};
    use axum::routing::get as route_get;
    use hyper_util::server::conn::auto;
    use hyper_util::service::TowerToHyperService;

    on_runtimes("axum auto", || async {
        let state = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let app = axum::Router::new()
            .route("/", route_get(|| async { "hello from axum" }))
            .route(
                "/count/{name}",
                route_get(
                    |State(n): State<Arc<std::sync::atomic::AtomicUsize>>,
                     Path(name): Path<String>| async move {
                        let n = n.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                        format!("{name} {n}")
                    },
                ),
            )
            .with_state(state);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = ringsteal_rt::spawn(async move {
            for _ in 0..2 {
                let (stream, _) = listener.accept().await.unwrap();
                let service = TowerToHyperService::new(app.clone());
                ringsteal_rt::spawn(async move {
                    let mut builder = auto::Builder::new(Executor::new());
                    builder.http1().timer(Timer::new());
                    builder.http2().timer(Timer::new());
                    builder
                        .serve_connection(Io::new(stream), service)
                        .await
                        .unwrap();
                });
            }
        });
        // HTTP/1.1
        let stream = TcpStream::connect(addr).await.unwrap();
        let (mut h1, conn) = hyper::client::conn::http1::handshake(Io::new(stream))
            .await
            .unwrap();
        let d1 = ringsteal_rt::spawn(conn);
        assert_eq!(get(&mut h1, "/").await, "hello from axum");
        assert_eq!(get(&mut h1, "/count/a").await, "a 1");
        // HTTP/2 with prior knowledge, on another connection: the same router state.
        let stream = TcpStream::connect(addr).await.unwrap();
        let (mut h2, conn) = hyper::client::conn::http2::Builder::new(Executor::new())
            .timer(Timer::new())
            .handshake(Io::new(stream))
            .await
            .unwrap();
        let d2 = ringsteal_rt::spawn(conn);
        let req = Request::get("http://test/count/b")
            .body(Empty::<Bytes>::new())
            .unwrap();
        let res = h2.send_request(req).await.unwrap();
        assert_eq!(res.version(), hyper::Version::HTTP_2);
        let body = res.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body, "b 2");
        drop((h1, h2));
        d1.await.unwrap().unwrap();
        d2.await.unwrap().unwrap();
        server.await.unwrap();
    });
}

/// hyper-util's legacy client with ringsteal's `Send` executor and timer, connecting through
/// ringsteal's `HttpConnector` (feature `hyper-client`).
#[cfg(feature = "hyper-client")]
mod legacy_client {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    use hyper_util::client::legacy::Client;
    use ringsteal_compat::hyper::HttpConnector;

    type Connector = HttpConnector;

    #[test]
    fn hyper_util_legacy_client_pools_connections_on_ringsteal() {
        on_runtimes("legacy client", || async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            // Requests served per accepted connection.
            let served: Arc<Mutex<Vec<Arc<AtomicUsize>>>> = Arc::default();
            let conns = served.clone();
            ringsteal_rt::spawn(async move {
                while let Ok((stream, _)) = listener.accept().await {
                    let requests = Arc::new(AtomicUsize::new(0));
                    conns.lock().unwrap().push(requests.clone());
                    ringsteal_rt::spawn(async move {
                        let service = hyper::service::service_fn(move |req| {
                            requests.fetch_add(1, SeqCst);
                            whoami(req)
                        });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .timer(Timer::new())
                            .serve_connection(Io::new(stream), service)
                            .await;
                    });
                }
            });
            let client: Client<Connector, Empty<Bytes>> = Client::builder(Executor::new())
                .timer(Timer::new())
                .pool_timer(Timer::new())
                .build(HttpConnector::new());
            for i in 0..10 {
                let uri: hyper::Uri = format!("http://{addr}/p{i}").parse().unwrap();
                let res = client.get(uri).await.unwrap();
                assert_eq!(res.status(), 200);
                let body = res.into_body().collect().await.unwrap().to_bytes();
                assert!(body.ends_with(format!(" /p{i}").as_bytes()));
            }
            // Pooled: a connection served more than one request. (Not necessarily one
            // connection for all ten: hyper-util gives a connection back to the pool from a
            // task of its own, and a request checked out before that task ran starts a new
            // connection, which the pool then keeps too.)
            let per_conn: Vec<usize> = served
                .lock()
                .unwrap()
                .iter()
                .map(|c| c.load(SeqCst))
                .collect();
            assert_eq!(per_conn.iter().sum::<usize>(), 10, "{per_conn:?}");
            assert!(
                per_conn.iter().any(|&n| n >= 2),
                "no keep-alive connection was reused: requests per connection {per_conn:?}"
            );
        });
    }

    /// A refused connection, an `https` URI, and a connect that outlives its timeout are
    /// errors of the request, each with its cause, never a hang or a panic.
    #[test]
    fn the_connector_reports_what_went_wrong() {
        on_runtimes("connector errors", || async {
            // A port nobody listens on: bind, note it, close.
            let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = closed.local_addr().unwrap();
            drop(closed);
            let client = |connector| -> Client<Connector, Empty<Bytes>> {
                Client::builder(Executor::new())
                    .timer(Timer::new())
                    .build(connector)
            };
            let cause = |err: hyper_util::client::legacy::Error| {
                let source = std::error::Error::source(&err)
                    .expect("a cause")
                    .to_string();
                (err.is_connect(), source)
            };

            let err = client(HttpConnector::new())
                .get(format!("http://{addr}/").parse().unwrap())
                .await
                .unwrap_err();
            let (is_connect, source) = cause(err);
            assert!(is_connect);
            assert!(
                source.contains("tcp connect to 127.0.0.1") && source.contains("refused"),
                "{source}"
            );

            let err = client(HttpConnector::new())
                .get("https://127.0.0.1:1/".parse().unwrap())
                .await
                .unwrap_err();
            let (_, source) = cause(err);
            assert!(source.contains("not http"), "{source}");

            // A zero timeout fires before any connect can complete.
            let mut impatient = HttpConnector::new();
            impatient.set_connect_timeout(Some(Duration::ZERO));
            let err = client(impatient)
                .get(format!("http://{addr}/").parse().unwrap())
                .await
                .unwrap_err();
            let (is_connect, source) = cause(err);
            assert!(is_connect);
            assert!(source.contains("took longer than"), "{source}");

            // A timeout with no end on the clock is none: the refusal, not a panic.
            let mut patient = HttpConnector::new();
            patient.set_connect_timeout(Some(Duration::MAX));
            let err = client(patient)
                .get(format!("http://{addr}/").parse().unwrap())
                .await
                .unwrap_err();
            let (is_connect, source) = cause(err);
            assert!(is_connect && source.contains("refused"), "{source}");
        });
    }
}

/// A waker that does nothing (`Waker::noop` needs Rust 1.85; the MSRV is 1.80).
fn noop_waker() -> std::task::Waker {
    struct Noop;
    impl std::task::Wake for Noop {
        fn wake(self: std::sync::Arc<Self>) {}
    }
    std::task::Waker::from(std::sync::Arc::new(Noop))
}

/// hyper-util's `GracefulShutdown` (feature `server-graceful`) drains a ringsteal server as
/// it drains a tokio one: after the shutdown signal a request in flight still gets its
/// answer, the connection then closes, and `shutdown()` ends once it has.
#[test]
fn hyper_utils_graceful_shutdown_lets_a_request_in_flight_finish() {
    on_runtimes("graceful shutdown", || async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
        let started_tx = Arc::new(Mutex::new(Some(started_tx)));
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let server = ringsteal_rt::spawn(async move {
            let graceful = hyper_util::server::graceful::GracefulShutdown::new();
            let (stream, _) = listener.accept().await.unwrap();
            let slow = hyper::service::service_fn(move |_req: Request<Incoming>| {
                let started = started_tx.clone();
                async move {
                    if let Some(tx) = started.lock().unwrap().take() {
                        tx.send(()).unwrap();
                    }
                    ringsteal_rt::time::sleep(Duration::from_millis(50)).await;
                    Ok::<_, Infallible>(Response::new(Full::new(Bytes::from("done"))))
                }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(Timer::new())
                .serve_connection(Io::new(stream), slow);
            ringsteal_rt::spawn(graceful.watch(conn));
            stop_rx.await.unwrap();
            timeout(GUARD, graceful.shutdown())
                .await
                .expect("the drain never ended");
        });
        let stream = TcpStream::connect(addr).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(Io::new(stream))
            .await
            .unwrap();
        let driver = ringsteal_rt::spawn(conn);
        let req = Request::get("/slow")
            .header("host", "test")
            .body(Empty::<Bytes>::new())
            .unwrap();
        let response = ringsteal_rt::spawn(sender.send_request(req));
        started_rx.await.unwrap();
        stop_tx.send(()).unwrap();
        let res = response.await.unwrap().unwrap();
        assert_eq!(res.status(), 200);
        let body = res.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&body[..], b"done");
        server.await.unwrap();
        // The server closed the connection once the answer was out.
        driver.await.unwrap().unwrap();
    });
}

/// A connection hyper upgraded (what a WebSocket handshake does) goes to code written
/// against tokio's I/O traits through `hyper::TokioIo`, as through hyper-util's `TokioIo`:
/// here an echo that reads and writes 256 KiB after the `101` on both ends.
#[cfg(feature = "tokio-io")]
#[test]
fn an_upgraded_connection_speaks_tokio_io_through_tokio_io() {
    use ringsteal_compat::hyper::TokioIo;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    on_runtimes("upgrade through TokioIo", || async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = ringsteal_rt::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let upgrade = hyper::service::service_fn(|mut req: Request<Incoming>| async move {
                ringsteal_rt::spawn(async move {
                    let upgraded = hyper::upgrade::on(&mut req).await.unwrap();
                    let mut io = TokioIo::new(upgraded);
                    let mut buf = vec![0u8; 16 * 1024];
                    loop {
                        let n = io.read(&mut buf).await.unwrap();
                        if n == 0 {
                            break;
                        }
                        io.write_all(&buf[..n]).await.unwrap();
                    }
                    io.shutdown().await.unwrap();
                });
                let res = Response::builder()
                    .status(101)
                    .header("connection", "upgrade")
                    .header("upgrade", "echo")
                    .body(Empty::<Bytes>::new())
                    .unwrap();
                Ok::<_, Infallible>(res)
            });
            hyper::server::conn::http1::Builder::new()
                .timer(Timer::new())
                .serve_connection(Io::new(stream), upgrade)
                .with_upgrades()
                .await
                .unwrap();
        });
        let stream = TcpStream::connect(addr).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(Io::new(stream))
            .await
            .unwrap();
        let driver = ringsteal_rt::spawn(conn.with_upgrades());
        let req = Request::get("/")
            .header("host", "test")
            .header("connection", "upgrade")
            .header("upgrade", "echo")
            .body(Empty::<Bytes>::new())
            .unwrap();
        let res = sender.send_request(req).await.unwrap();
        assert_eq!(res.status(), 101);
        let mut io = TokioIo::new(hyper::upgrade::on(res).await.unwrap());
        let data: Vec<u8> = (0..256 * 1024u32).map(|i| (i % 251) as u8).collect();
        let mut back = vec![0u8; data.len()];
        for (chunk, into) in data.chunks(32 * 1024).zip(back.chunks_mut(32 * 1024)) {
            io.write_all(chunk).await.unwrap();
            timeout(GUARD, io.read_exact(into))
                .await
                .expect("the echo stalled")
                .unwrap();
        }
        assert!(back == data, "the echoed bytes differ");
        io.shutdown().await.unwrap();
        let mut rest = Vec::new();
        io.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty());
        driver.await.unwrap().unwrap();
        server.await.unwrap();
    });
}
