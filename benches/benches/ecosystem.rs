//! The ecosystem on ringsteal (issue 15, ADR-0014):
//!
//! * `net_echo_rtt_256b_compat/<placement>/<path>`: one 256-byte echo round trip over
//!   loopback TCP, client and echo server written against `tokio::io::AsyncRead/AsyncWrite`
//!   on ringsteal, against the native owned-buffer path. Paths: `native` (owned buffers,
//!   one `SEND`/`RECV` request each), `readiness` (ringsteal's adapter: `POLL_ADD`, then a
//!   non-blocking `recv`/`send` into the caller's buffer) and `copying` (the other design
//!   ADR-0014 measured: an adapter that copies through an owned buffer and submits
//!   `RECV`/`SEND` requests, as monoio-compat and compio's first adapters did; written here
//!   only to be measured). Placements: `one_shard` (client and server tasks on one shard)
//!   and `two_shards` (client on shard 0, server pinned on shard 1).
//! * `hyper_hello_1000_concurrent/<server>`: 1,000 keep-alive HTTP/1.1 connections each
//!   send one request to a hyper "hello world" server and read the response; one iteration
//!   is those 1,000 requests. The server is the same hyper version and service code on
//!   ringsteal (2 shards, `ringsteal::hyper`) and on tokio (2 workers, hyper-util's
//!   `TokioIo`/`TokioTimer`); `ringsteal_http_server` answers the same requests without
//!   hyper, with the HTTP/1.1 core of the `http_server` example (`ringsteal_examples::http`:
//!   owned-buffer reads and writes, pipelining, one write per batch of responses), the
//!   hand-written server hyper on ringsteal is held against. The load comes from one client thread (a tokio
//!   `current_thread` runtime with raw sockets), the same for all. After each server's
//!   run the server's CPU time per request is measured on a fixed load (every server
//!   thread's `schedstat` run time over 50 iterations, divided by the 50,000 requests; the
//!   median of three) and printed: on this 2-vCPU machine both servers are near the
//!   loopback floor, so CPU per request is the figure that separates them.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use ringsteal::io::compat::PollIo;
use ringsteal::net::{TcpListener, TcpStream};
use ringsteal::{Placement, Runtime};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

mod peers;

const MSG: usize = 256;

// ---------------------------------------------------------------------------------------
// net_echo_rtt_256b_compat

/// The copying design, for measurement only: reads land in an owned buffer (`RECV`) and are
/// copied out; writes are copied into an owned buffer and sent (`SEND`), and `poll_write`
/// reports the count when that request completes. Its flaw (ADR-0014): a caller that
/// changes its buffer after `Pending` is told that bytes of the *old* buffer were written.
mod copying {
    use std::future::Future;
    use std::io;
    use std::os::fd::AsRawFd;
    use std::pin::Pin;
    use std::task::{ready, Context, Poll};

    use ringsteal::op::{self, Op, RecvOp, SendOp, SharedFd};
    use tokio::io::ReadBuf;

    pub(crate) struct CopyIo {
        fd: SharedFd,
        rbuf: Vec<u8>,
        rpos: usize,
        reading: Option<Op<RecvOp<Vec<u8>>>>,
        wbuf: Vec<u8>,
        writing: Option<Op<SendOp<Vec<u8>>>>,
    }

    impl CopyIo {
        pub(crate) fn new(fd: &SharedFd) -> Self {
            Self {
                fd: fd.clone(),
                rbuf: Vec::with_capacity(64 * 1024),
                rpos: 0,
                reading: None,
                wbuf: Vec::with_capacity(64 * 1024),
                writing: None,
            }
        }
    }

    impl tokio::io::AsyncRead for CopyIo {
        fn poll_read(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            let this = self.get_mut();
            if this.reading.is_some() || this.rpos == this.rbuf.len() {
                let fd = &this.fd;
                let rbuf = &mut this.rbuf;
                let op = this.reading.get_or_insert_with(|| {
                    let mut b = std::mem::take(rbuf);
                    b.clear();
                    op::recv(fd, b, 0)
                });
                let (res, b) = ready!(Pin::new(op).poll(cx));
                this.reading = None;
                this.rbuf = b;
                this.rpos = 0;
                res?;
            }
            let n = (this.rbuf.len() - this.rpos).min(buf.remaining());
            buf.put_slice(&this.rbuf[this.rpos..this.rpos + n]);
            this.rpos += n;
            Poll::Ready(Ok(()))
        }
    }

    impl tokio::io::AsyncWrite for CopyIo {
        fn poll_write(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            src: &[u8],
        ) -> Poll<io::Result<usize>> {
            let this = self.get_mut();
            let fd = &this.fd;
            let wbuf = &mut this.wbuf;
            let op = this.writing.get_or_insert_with(|| {
                let mut b = std::mem::take(wbuf);
                b.clear();
                b.extend_from_slice(src);
                op::send(fd, b, 0)
            });
            let (res, b) = ready!(Pin::new(op).poll(cx));
            this.writing = None;
            this.wbuf = b;
            Poll::Ready(res)
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            // SAFETY: plain system call on a descriptor this adapter holds open.
            let r = unsafe { libc::shutdown(self.fd.as_raw_fd(), libc::SHUT_WR) };
            Poll::Ready(if r < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(())
            })
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Path {
    Native,
    Readiness,
    Copying,
}

async fn tcp_pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let c = ringsteal::spawn_with(Placement::Pinned(0), async move {
        TcpStream::connect(addr).await.unwrap()
    });
    let (s, _) = l.accept().await.unwrap();
    let c = c.await.unwrap();
    c.set_nodelay(true).unwrap();
    s.set_nodelay(true).unwrap();
    (c, s)
}

/// Echoes MSG-byte messages until the peer closes, through the tokio traits.
async fn echo_poll(mut io: impl AsyncRead + AsyncWrite + Unpin) {
    let mut buf = [0u8; MSG];
    while io.read_exact(&mut buf).await.is_ok() {
        io.write_all(&buf).await.unwrap();
    }
}

/// `iters` round trips through the tokio traits; returns their time.
async fn client_poll(mut io: impl AsyncRead + AsyncWrite + Unpin, iters: u64) -> Duration {
    let msg = [7u8; MSG];
    let mut buf = [0u8; MSG];
    let start = Instant::now();
    for _ in 0..iters {
        io.write_all(&msg).await.unwrap();
        io.read_exact(&mut buf).await.unwrap();
    }
    let took = start.elapsed();
    assert_eq!(buf, msg);
    took
}

async fn echo_rtt(path: Path, server_shard: usize, iters: u64) -> Duration {
    let (client, server) = tcp_pair().await;
    let echo = ringsteal::spawn_with(Placement::Pinned(server_shard), async move {
        match path {
            Path::Native => {
                let mut buf = vec![0u8; MSG];
                loop {
                    let (res, b) = server.read_exact(buf).await;
                    if res.is_err() {
                        break;
                    }
                    let (res, b) = server.write_all(b).await;
                    res.unwrap();
                    buf = b;
                }
            }
            Path::Readiness => echo_poll(PollIo::new(server)).await,
            Path::Copying => echo_poll(copying::CopyIo::new(server.shared_fd())).await,
        }
    });
    let took = match path {
        Path::Native => {
            let msg = vec![7u8; MSG];
            let mut buf = vec![0u8; MSG];
            let mut msg = msg;
            let start = Instant::now();
            for _ in 0..iters {
                let (res, m) = client.write_all(msg).await;
                res.unwrap();
                msg = m;
                let (res, b) = client.read_exact(buf).await;
                res.unwrap();
                buf = b;
            }
            let took = start.elapsed();
            assert_eq!(buf, msg);
            drop(client);
            took
        }
        Path::Readiness => client_poll(PollIo::new(client), iters).await,
        Path::Copying => {
            let took = client_poll(copying::CopyIo::new(client.shared_fd()), iters).await;
            drop(client);
            took
        }
    };
    echo.await.unwrap();
    took
}

fn net_echo_rtt_256b_compat(c: &mut Criterion) {
    let rt = Runtime::builder()
        .shards(ringsteal_benches::threads().max(2))
        .build()
        .unwrap();
    let mut g = c.benchmark_group("net_echo_rtt_256b_compat");
    for (placement, server_shard) in [("one_shard", 0), ("two_shards", 1)] {
        let entries = [
            ("native", Path::Native),
            ("readiness", Path::Readiness),
            ("copying", Path::Copying),
        ]
        .into_iter()
        .map(|(name, path)| {
            let rt = &rt;
            peers::entry(name, move |g: &mut peers::Group<'_>| {
                g.bench_function(format!("{placement}/{name}"), |b| {
                    b.iter_custom(|iters| rt.block_on(echo_rtt(path, server_shard, iters)))
                });
            })
        })
        .collect();
        peers::run_rotated(
            &mut g,
            &format!("net_echo_rtt_256b_compat/{placement}"),
            entries,
        );
    }
    g.finish();
}

// ---------------------------------------------------------------------------------------
// hyper_hello_1000_concurrent

const CONNS: usize = 1000;
/// Iterations (of CONNS requests) per CPU-time measurement.
const CPU_ITERS: u64 = 50;
const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nhost: bench\r\n\r\n";

/// Requests served by whichever server runs (the same service code for both).
static SERVED: AtomicU64 = AtomicU64::new(0);

async fn hello(_req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    SERVED.fetch_add(1, Ordering::Relaxed);
    Ok(Response::new(Full::new(Bytes::from_static(b"hello world"))))
}

/// The `http_server` example's route for this load: the same body as [`hello`].
fn hello_by_hand(
    _req: ringsteal_examples::http::Request,
) -> std::future::Ready<ringsteal_examples::http::Response> {
    SERVED.fetch_add(1, Ordering::Relaxed);
    std::future::ready(ringsteal_examples::http::Response::static_text(
        200,
        "hello world",
    ))
}

/// A running server: its address, and how to stop it.
struct Server {
    addr: SocketAddr,
    stop: Box<dyn FnOnce()>,
}

/// A ringsteal server, with hyper or the `http_server` example's core (`by_hand`): shard 0 is the thread `<name>-0` (it
/// runs `block_on`), shard 1 `<name>-1`; a spawn right after an accept is dealt to the next
/// shard (ADR-0009), so connections alternate between them.
fn ringsteal_server(threads: usize, name: &'static str, by_hand: bool) -> Server {
    let (tx, rx) = mpsc::channel();
    let stopping = Arc::new(AtomicBool::new(false));
    let flag = stopping.clone();
    let join = thread::Builder::new()
        .name(format!("{name}-0"))
        .spawn(move || {
            let rt = Runtime::builder()
                .shards(threads)
                .thread_name(name)
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap()).unwrap();
                loop {
                    let (stream, _) = listener.accept().await.unwrap();
                    if flag.load(Ordering::SeqCst) {
                        break;
                    }
                    stream.set_nodelay(true).unwrap();
                    ringsteal::spawn(async move {
                        if by_hand {
                            let _ =
                                ringsteal_examples::http::serve(stream, &hello_by_hand, None).await;
                            return;
                        }
                        let _ = http1::Builder::new()
                            .timer(ringsteal::hyper::Timer::new())
                            .serve_connection(ringsteal::hyper::Io::new(stream), service_fn(hello))
                            .await;
                    });
                }
            });
        })
        .unwrap();
    let addr = rx.recv().unwrap();
    Server {
        addr,
        stop: Box::new(move || {
            stopping.store(true, Ordering::SeqCst);
            drop(std::net::TcpStream::connect(addr));
            join.join().unwrap();
        }),
    }
}

/// The same server on tokio: a multi-thread runtime with `threads` workers (`tk-srv`),
/// hyper-util's `TokioIo` and `TokioTimer`.
fn tokio_server(threads: usize) -> Server {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name("tk-srv")
        .enable_all()
        .build()
        .unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let stopping = Arc::new(AtomicBool::new(false));
    let flag = stopping.clone();
    let accept = rt.spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            if flag.load(Ordering::SeqCst) {
                break;
            }
            stream.set_nodelay(true).unwrap();
            tokio::spawn(async move {
                let _ = http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service_fn(hello))
                    .await;
            });
        }
    });
    Server {
        addr,
        stop: Box::new(move || {
            stopping.store(true, Ordering::SeqCst);
            drop(std::net::TcpStream::connect(addr));
            rt.block_on(accept).unwrap();
            rt.shutdown_timeout(Duration::from_secs(5));
        }),
    }
}

/// The load: one thread with a tokio `current_thread` runtime and CONNS keep-alive
/// connections; `run(iters)` sends one request on every connection per iteration, all at
/// once, and returns the time the iterations took.
struct Client {
    tx: mpsc::Sender<u64>,
    done: mpsc::Receiver<Duration>,
    join: thread::JoinHandle<()>,
}

impl Client {
    fn start(addr: SocketAddr) -> Self {
        let (tx, rx) = mpsc::channel::<u64>();
        let (done_tx, done) = mpsc::channel();
        let join = thread::Builder::new()
            .name("bench-client".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async move {
                    let mut conns = Vec::with_capacity(CONNS);
                    for _ in 0..CONNS {
                        let s = tokio::net::TcpStream::connect(addr).await.unwrap();
                        s.set_nodelay(true).unwrap();
                        conns.push((s, Vec::with_capacity(512)));
                    }
                    while let Ok(iters) = rx.recv() {
                        let start = Instant::now();
                        for _ in 0..iters {
                            futures::future::join_all(
                                conns.iter_mut().map(|(s, buf)| one_request(s, buf)),
                            )
                            .await;
                        }
                        done_tx.send(start.elapsed()).unwrap();
                    }
                });
            })
            .unwrap();
        Self { tx, done, join }
    }

    fn run(&self, iters: u64) -> Duration {
        self.tx.send(iters).unwrap();
        self.done.recv().unwrap()
    }

    fn stop(self) {
        drop(self.tx);
        self.join.join().unwrap();
    }
}

/// Sends REQUEST and reads one whole response (headers, then `content-length` bytes).
async fn one_request(s: &mut tokio::net::TcpStream, buf: &mut Vec<u8>) {
    s.write_all(REQUEST).await.unwrap();
    buf.clear();
    loop {
        let n = s.read_buf(buf).await.unwrap();
        assert!(n > 0, "the server closed a keep-alive connection");
        if let Some(end) = response_len(buf) {
            assert!(buf.starts_with(b"HTTP/1.1 200"));
            if buf.len() >= end {
                assert_eq!(buf.len(), end, "one response per request");
                assert!(buf.ends_with(b"hello world"));
                return;
            }
        }
    }
}

/// The length of the response at the start of `buf`, once its headers are complete.
fn response_len(buf: &[u8]) -> Option<usize> {
    let head = buf.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let text = std::str::from_utf8(&buf[..head]).ok()?;
    let len = text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("content-length")
            .then(|| v.trim().parse::<usize>().ok())?
    })?;
    Some(head + len)
}

/// Total CPU time (ns, from `/proc/self/task/*/schedstat`) of this process's threads whose
/// name starts with `prefix`.
fn cpu_ns_of_threads(prefix: &str) -> io::Result<u64> {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task")? {
        let dir = task?.path();
        let Ok(comm) = std::fs::read_to_string(dir.join("comm")) else {
            continue; // the thread exited meanwhile
        };
        if !comm.starts_with(prefix) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(dir.join("schedstat")) else {
            continue;
        };
        total += stat
            .split_whitespace()
            .next()
            .and_then(|t| t.parse::<u64>().ok())
            .unwrap_or(0);
    }
    Ok(total)
}

fn hyper_hello_1000_concurrent(c: &mut Criterion) {
    let threads = ringsteal_benches::threads();
    let mut g = c.benchmark_group("hyper_hello_1000_concurrent");
    g.throughput(Throughput::Elements(CONNS as u64));
    g.sample_size(20);
    let entries = [
        ("ringsteal", "rs-srv"),
        ("ringsteal_http_server", "rs-hand"),
        ("tokio", "tk-srv"),
    ]
    .into_iter()
    .map(|(name, prefix)| {
        peers::entry(name, move |g: &mut peers::Group<'_>| {
            let server = match name {
                "ringsteal" => ringsteal_server(threads, prefix, false),
                "ringsteal_http_server" => ringsteal_server(threads, prefix, true),
                _ => tokio_server(threads),
            };
            let client = Client::start(server.addr);
            client.run(1); // every connection accepted and served once
            g.bench_function(name, |b| b.iter_custom(|iters| client.run(iters)));
            // CPU per request on a fixed load, the same for both runtimes: three runs of
            // CPU_ITERS iterations, the median.
            let mut per_request: Vec<f64> = (0..3)
                .map(|_| {
                    let cpu0 = cpu_ns_of_threads(prefix).unwrap();
                    let served0 = SERVED.load(Ordering::Relaxed);
                    client.run(CPU_ITERS);
                    let cpu = cpu_ns_of_threads(prefix).unwrap() - cpu0;
                    let served = SERVED.load(Ordering::Relaxed) - served0;
                    assert_eq!(served, CPU_ITERS * CONNS as u64);
                    cpu as f64 / 1000.0 / served as f64
                })
                .collect();
            per_request.sort_by(f64::total_cmp);
            eprintln!(
                "hyper_hello_1000_concurrent/{name}: server CPU {:.2} µs per request \
                     (median of {per_request:.2?}, {} requests each, {threads} server threads)",
                per_request[1],
                CPU_ITERS * CONNS as u64
            );
            client.stop();
            (server.stop)();
        })
    })
    .collect();
    peers::run_rotated(&mut g, "hyper_hello_1000_concurrent", entries);
    g.finish();
}

criterion_group!(
    benches,
    net_echo_rtt_256b_compat,
    hyper_hello_1000_concurrent
);
criterion_main!(benches);
