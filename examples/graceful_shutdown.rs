//! Graceful shutdown: an HTTP server that, on SIGINT or SIGTERM, stops accepting, lets the
//! connections in flight finish within a deadline, then exits 0.
//!
//! The recipe:
//!
//! 1. `ringsteal::signal::shutdown_signal()` is created before the server says it listens,
//!    so a signal that comes early is not lost; the accept loop waits for it beside each
//!    `accept`.
//! 2. When it completes, the listener is dropped (new connections are refused at once) and a
//!    `CancellationToken` is cancelled. Every connection watches a child of it:
//!    `http::serve` closes one that waits for its next request at once, and lets one in the
//!    middle of a request answer it, with `Connection: close`, then close.
//! 3. The connections are tasks of one `TaskGroup`, awaited under a `timeout`. Drained in
//!    time: status 0. The deadline passed: the rest are aborted, status 1, so a supervisor
//!    knows some requests were cut off.
//!
//! The signal listener is dropped once it has fired, so a second Ctrl-C during a slow drain
//! ends the process at once, as a user pressing it twice expects.
//!
//! Routes: `/` (a greeting) and `/sleep/MS` (answers after MS milliseconds, to have a request
//! in flight when the signal comes).
//!
//! Try:
//!
//! ```text
//! cargo run --example graceful_shutdown -- 127.0.0.1:8080 5000   # a 5 s deadline
//! curl http://127.0.0.1:8080/sleep/3000     # in another terminal; then, within 3 s,
//!                                          # Ctrl-C the server (or kill -TERM its pid)
//! ```
//!
//! The request in flight is answered, then the server prints that it drained and exits 0.

use std::future::pending;
use std::time::Duration;

use ringsteal::net::TcpStream;
use ringsteal::sync::CancellationToken;
use ringsteal::task::TaskGroup;
use ringsteal_examples::cli;
use ringsteal_examples::future::{race, Either};
use ringsteal_examples::http::{self, Request, Response};

const USAGE: &str =
    "graceful_shutdown [ADDR] [DEADLINE_MS]    (defaults: 127.0.0.1:8080, 10000 ms to drain)";

#[ringsteal::main]
async fn main() {
    let args = cli::args(USAGE, 2);
    let addr = cli::listen_addr(&args);
    let deadline = Duration::from_millis(cli::arg_or(&args, 1, 10_000, USAGE));
    // Listening for SIGINT and SIGTERM starts here, before `listening on` is printed: a
    // supervisor that signals as soon as it sees that line is heard.
    let mut shutdown = Box::pin(ringsteal::signal::shutdown_signal());
    let listener = cli::listen(addr, USAGE).await;

    let stop = CancellationToken::new();
    let mut connections = TaskGroup::new();
    let mut accept = Box::pin(listener.accept());
    let why = loop {
        // The signal, a connection, or a connection that ended (its handle is collected).
        let ended = async {
            match connections.is_empty() {
                true => pending().await,
                false => connections.join_next().await,
            }
        };
        let event = race(&mut shutdown, race(&mut accept, ended)).await;
        match event {
            Either::Left(Ok(signal)) => break signal,
            Either::Left(Err(e)) => {
                cli::fail(USAGE, format_args!("cannot listen for signals: {e}"))
            }
            Either::Right(Either::Left(accepted)) => {
                accept = Box::pin(listener.accept());
                match accepted {
                    Ok((stream, _peer)) => {
                        connections.spawn(connection(stream, stop.child_token()));
                    }
                    Err(e) => eprintln!("accept failed: {e}"),
                }
            }
            Either::Right(Either::Right(_ended)) => {}
        }
    };
    // A second signal now has its default effect: it ends the process.
    drop(shutdown);
    // New connections are refused from here on: the listener dropped (its cancelled accept
    // first), the socket stops listening at once, although that accept still names it.
    drop(accept);
    drop(listener);
    println!(
        "{why}: no new connections; draining {} connection(s), deadline {deadline:?}",
        connections.len()
    );
    stop.cancel();
    let drained = ringsteal::time::timeout(deadline, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    match drained {
        Ok(()) => {
            println!("drained: every connection finished; exiting with status 0");
            std::process::exit(0);
        }
        Err(_) => {
            let left = connections.len();
            connections.abort_all();
            println!("deadline passed: {left} connection(s) cut off; exiting with status 1");
            std::process::exit(1);
        }
    }
}

/// One connection, served until the client is done or `stop` is cancelled.
async fn connection(stream: TcpStream, stop: CancellationToken) {
    let _ = stream.set_nodelay(true);
    let _ = http::serve(stream, &route, Some(&stop)).await;
}

async fn route(req: Request) -> Response {
    if req.method != "GET" && req.method != "HEAD" {
        return Response::error(405).with_header("Allow", "GET, HEAD");
    }
    let path = req.path();
    if path == "/" {
        return Response::static_text(200, "Hello, world!\n");
    }
    let Some(ms) = path
        .strip_prefix("/sleep/")
        .and_then(|ms| ms.parse::<u64>().ok())
    else {
        return Response::error(404);
    };
    println!("request {path} started");
    ringsteal::time::sleep(Duration::from_millis(ms)).await;
    Response::text(200, format!("slept {ms} ms\n"))
}
