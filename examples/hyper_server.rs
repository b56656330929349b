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
//! the server prints `listening on <addr>` with the bound port and stops on SIGINT (Ctrl-C)
//! or SIGTERM.
//!
//! What changes from a tokio + hyper-util server: `ringsteal::hyper::Io` instead of
//! `TokioIo`, `ringsteal::hyper::{Executor, Timer}` instead of `TokioExecutor` and
//! `TokioTimer`, and `ringsteal::net::TcpListener`. The timer is always set: without one,
//! hyper ignores its header-read timeout.

use std::convert::Infallible;
use std::io;
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
use ringsteal_examples::cli;

const USAGE: &str =
    "hyper_server [ADDR]    (ADDR defaults to 127.0.0.1:8080; port 0 picks a free one)";

/// One shard per CPU (the macro's default); every shard serves connections.
#[ringsteal::main]
async fn main() {
    let args = cli::args(USAGE, 1);
    // Listening for SIGINT and SIGTERM starts before `listening on` is printed.
    let stop = ringsteal::signal::shutdown_signal();
    let listener = cli::listen(cli::listen_addr(&args), USAGE).await;
    cli::serve_until(stop, accept_loop(listener), USAGE).await;
}

/// How long a connection may take to send its request's headers.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

async fn accept_loop(listener: TcpListener) {
    // One multishot accept for every connection.
    let mut incoming = listener.incoming();
    while let Some(next) = incoming.next().await {
        match next {
            // A spawn right after an accept is dealt to the next shard (ADR-0009): the
            // connection's task, and so its I/O, lives there.
            Ok(stream) => drop(ringsteal::spawn(async move {
                if let Err(e) = serve_connection(stream).await {
                    eprintln!("connection: {e}");
                }
            })),
            // Out of descriptors, say: the stream itself waits before it retries.
            Err(e) => eprintln!("accept failed: {e}"),
        }
    }
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
