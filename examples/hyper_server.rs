//! hyper 1.x on ringsteal: an HTTP/1.1 and HTTP/2 server with hyper's own `server::conn`
//! builders, one connection task per accepted socket, dealt over every shard.
//!
//! ```text
//! cargo run --release --example hyper_server -- 127.0.0.1:8080
//! curl http://127.0.0.1:8080/hello
//! curl --http2-prior-knowledge http://127.0.0.1:8080/hello
//! ```
//!
//! The first argument is the listen address (default `127.0.0.1:8080`; port 0 picks one);
//! the server prints `listening on <addr>` with the bound port and stops on Ctrl-C.
//!
//! What changes from a tokio + hyper-util server: `ringsteal::hyper::Io` instead of
//! `TokioIo`, `ringsteal::hyper::{Executor, Timer}` instead of `TokioExecutor` and
//! `TokioTimer`, and `ringsteal::net::TcpListener`. The timer is always set: without one,
//! hyper ignores its header-read timeout.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper::{Request, Response};
use ringsteal::hyper::{Executor, Io, Timer};
use ringsteal::net::{TcpListener, TcpStream};
use ringsteal::Runtime;

fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".to_string());
    let stop = async {
        let _ = ringsteal::signal::ctrl_c().await;
    };
    if let Err(e) = run(&addr, |_| {}, stop) {
        eprintln!("hyper_server: {e}");
        std::process::exit(1);
    }
}

/// Serves on `addr` with one shard per CPU until `stop` completes; `ready` is told the bound
/// address once the server listens.
pub(crate) fn run(
    addr: &str,
    ready: impl FnOnce(SocketAddr),
    stop: impl Future<Output = ()>,
) -> io::Result<()> {
    let shards = std::thread::available_parallelism().map_or(2, |n| n.get());
    let rt = Runtime::builder().shards(shards).build()?;
    rt.block_on(async {
        let listener = TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        println!("listening on {local}");
        ready(local);
        tokio::select! {
            res = accept_loop(listener) => res,
            () = stop => Ok(()),
        }
    })
}

/// How long a connection may take to send its request's headers.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

async fn accept_loop(listener: TcpListener) -> io::Result<()> {
    // One multishot accept for every connection.
    let mut incoming = listener.incoming();
    while let Some(stream) = incoming.next().await {
        let stream = match stream {
            Ok(stream) => stream,
            // Out of descriptors, or one connection aborted: the stream goes on (and backs
            // off while descriptors are short).
            Err(e) => {
                eprintln!("accept: {e}");
                continue;
            }
        };
        // A spawn right after an accept is dealt to the next shard (ADR-0009): the
        // connection's task, and so its I/O, lives there.
        ringsteal::spawn(async move {
            if let Err(e) = serve_connection(stream).await {
                eprintln!("connection: {e}");
            }
        });
    }
    Err(io::Error::other("the listener stopped accepting"))
}

/// HTTP/2 if the client opens with the prior-knowledge preface (`PRI * HTTP/2.0...`),
/// HTTP/1.1 otherwise. Every HTTP/1 request line starts with a method, so three bytes
/// decide; they are read with the owned-buffer API and handed to hyper first ([`Rewind`]).
async fn serve_connection(stream: TcpStream) -> Result<(), Box<dyn std::error::Error>> {
    stream.set_nodelay(true)?;
    // hyper's header-read timeout starts once hyper reads; these bytes get the same bound.
    let (res, first) =
        ringsteal::time::timeout(HEADER_READ_TIMEOUT, stream.read_exact(vec![0u8; 3]))
            .await
            .map_err(|_| {
                io::Error::new(io::ErrorKind::TimedOut, "no request within the timeout")
            })?;
    res?;
    let h2 = first == b"PRI";
    let io = Rewind {
        first,
        io: Io::new(stream),
    };
    if h2 {
        http2::Builder::new(Executor::new())
            .timer(Timer::new())
            .keep_alive_interval(Duration::from_secs(20))
            .serve_connection(io, service_fn(hello))
            .await?;
    } else {
        http1::Builder::new()
            .timer(Timer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT)
            .serve_connection(io, service_fn(hello))
            .await?;
    }
    Ok(())
}

/// A connection whose first bytes were already read: hyper reads them first, then the
/// socket (what hyper-util's `auto` builder does inside).
struct Rewind {
    first: Vec<u8>,
    io: Io<TcpStream>,
}

impl hyper::rt::Read for Rewind {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        if self.first.is_empty() {
            return Pin::new(&mut self.io).poll_read(cx, buf);
        }
        let n = self.first.len().min(buf.remaining());
        buf.put_slice(&self.first[..n]);
        self.first.drain(..n);
        Poll::Ready(Ok(()))
    }
}

impl hyper::rt::Write for Rewind {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        hyper::rt::Write::poll_write(Pin::new(&mut self.io), cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        hyper::rt::Write::poll_write_vectored(Pin::new(&mut self.io), cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        hyper::rt::Write::is_write_vectored(&self.io)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        hyper::rt::Write::poll_flush(Pin::new(&mut self.io), cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        hyper::rt::Write::poll_shutdown(Pin::new(&mut self.io), cx)
    }
}

/// The service: `hello from shard N` (which shard served it) and the path.
async fn hello(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let shard = ringsteal::current_shard().unwrap_or(0);
    let body = format!(
        "hello from shard {shard}: {} {:?}\n",
        req.uri().path(),
        req.version()
    );
    Ok(Response::new(Full::new(Bytes::from(body))))
}
