//! The guarantee of the ecosystem features (ADR-0014), at run time: a process that served
//! HTTP through hyper and moved bytes through the tokio traits has no thread but ringsteal's
//! (and the kernel's io_uring workers). Alone in its test binary, so no other test's thread
//! is counted (the test harness names a thread after each test it runs); `no_tokio_runtime.rs`
//! checks the dependency graph.
#![cfg(all(feature = "hyper", feature = "tokio-io"))]

use std::collections::BTreeSet;

#[test]
fn serving_http_and_using_the_tokio_traits_starts_no_thread_but_ringsteals() {
    use http_body_util::{BodyExt, Empty, Full};
    use hyper::body::Bytes;
    use ringsteal::hyper::{Executor, Io, Timer};
    use ringsteal::io::compat::PollIo;
    use ringsteal::net::{TcpListener, TcpStream};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let before = thread_names();
    let rt = ringsteal::Runtime::builder()
        .shards(2)
        .thread_name("rs-guarantee")
        .build()
        .unwrap();
    let during = rt.block_on(async {
        // hyper, HTTP/1.1, server and client, with the executor and the timer.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        ringsteal::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let service = hyper::service::service_fn(|_req| async {
                Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(Bytes::from(
                    "ok",
                ))))
            });
            hyper::server::conn::http1::Builder::new()
                .timer(Timer::new())
                .header_read_timeout(std::time::Duration::from_secs(10))
                .serve_connection(Io::new(stream), service)
                .await
                .unwrap();
        });
        let stream = TcpStream::connect(addr).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(Io::new(stream))
            .await
            .unwrap();
        hyper::rt::Executor::execute(&Executor::new(), async move {
            let _ = conn.await;
        });
        let req = hyper::Request::get("/")
            .header("host", "x")
            .body(Empty::<Bytes>::new())
            .unwrap();
        let res = sender.send_request(req).await.unwrap();
        assert_eq!(res.into_body().collect().await.unwrap().to_bytes(), "ok");

        // The tokio traits and tokio::sync.
        let (a, b) = ringsteal::net::UnixStream::pair().unwrap();
        let (mut a, mut b) = (PollIo::new(a), PollIo::new(b));
        let (tx, rx) = tokio::sync::oneshot::channel();
        ringsteal::spawn(async move {
            let mut buf = [0u8; 4];
            b.read_exact(&mut buf).await.unwrap();
            tx.send(buf).unwrap();
        });
        a.write_all(b"ping").await.unwrap();
        assert_eq!(&rx.await.unwrap(), b"ping");
        ringsteal::spawn_blocking(|| ()).await.unwrap();
        thread_names()
    });
    let new: Vec<_> = during.difference(&before).collect();
    assert!(!new.is_empty(), "the runtime's own threads should show");
    // The runtime's shards and blocking pool, and the kernel's io_uring threads of its rings
    // (`iou-wrk-*` io-wq workers, `iou-sqp-*` from the setup probe's SQPOLL trial), which
    // the kernel lists among the process's tasks.
    let foreign: Vec<_> = new
        .iter()
        .filter(|name| !name.starts_with("rs-guarantee") && !name.starts_with("iou-"))
        .collect();
    assert!(
        foreign.is_empty(),
        "threads that are not ringsteal's appeared: {foreign:?} (all new: {new:?})"
    );
}

/// The names of this process's threads (`comm`, at most 15 bytes each).
fn thread_names() -> BTreeSet<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|s| s.trim_end().to_string())
        .collect()
}
