//! An axum router on ringsteal, served by hyper-util's `auto` connection builder (HTTP/1.1,
//! and HTTP/2 with prior knowledge) with ringsteal's executor and timer. No tokio runtime
//! exists: axum is built with its default features off (no `tokio` feature) and `http1` on.
//!
//! ```text
//! cargo run --release --example axum_server -- 127.0.0.1:8080
//! curl http://127.0.0.1:8080/
//! curl http://127.0.0.1:8080/hello/ringsteal
//! curl http://127.0.0.1:8080/sleep/3000 & sleep 1; kill -TERM %?  # the answer still comes
//! websocat ws://127.0.0.1:8080/chat    # in two terminals: each line goes to everyone
//! ```
//!
//! The first argument is the listen address (default `127.0.0.1:8080`; port 0 picks one);
//! the server prints `listening on <addr>` with the bound port and stops on SIGINT (Ctrl-C)
//! or SIGTERM, gracefully: it stops accepting, lets the requests in flight finish (for up to
//! 10 s) and closes idle connections.
//!
//! What replaces `axum::serve(listener, app).with_graceful_shutdown(signal)`: a loop over
//! `listener.incoming()` that hands each connection to
//! `auto::Builder::serve_connection_with_upgrades` with
//! `TowerToHyperService::new(router)`, watched by hyper-util's `GracefulShutdown`. Handlers
//! must be `Send`, as in axum on tokio; the connection tasks are ringsteal tasks, dealt over
//! the shards as they are spawned.
//!
//! `/chat` is a WebSocket broadcast chat: every text message a client sends goes to every
//! connected client. axum's `ws` extractor does not carry over (its upgrade spawns on
//! tokio), so the handler upgrades by hand: it checks the handshake headers, answers `101`
//! with `Sec-WebSocket-Accept`, and in a ringsteal task takes the upgraded connection
//! (`hyper::upgrade::on`), wraps it in `ringsteal::hyper::TokioIo` for tokio-tungstenite
//! and runs the chat over a `tokio::sync::broadcast` channel (tokio's sync types need no
//! tokio runtime).

use std::fmt::Display;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use futures_util::{SinkExt, StreamExt};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use ringsteal::hyper::{Executor, Io, Timer, TokioIo};
use ringsteal::net::TcpListener;
use ringsteal_examples::cli;
use ringsteal_examples::future::{race, Either};
use tokio::sync::broadcast;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Message, Role};
use tokio_tungstenite::WebSocketStream;

const USAGE: &str =
    "axum_server [ADDR]    (ADDR defaults to 127.0.0.1:8080; port 0 picks a free one)";

/// One shard per CPU (the macro's default).
#[ringsteal::main]
async fn main() {
    let args = cli::args(USAGE, 1);
    // Listening for SIGINT and SIGTERM starts before `listening on` is printed.
    let stop = ringsteal::signal::shutdown_signal();
    let listener = cli::listen(cli::listen_addr(&args), USAGE).await;
    serve(listener, router(), stop).await;
}

/// How many greetings were served, and the chat's channel, shared by every handler on
/// every shard.
#[derive(Clone)]
struct AppState {
    greeted: Arc<AtomicU64>,
    chat: broadcast::Sender<String>,
}

impl Default for AppState {
    fn default() -> Self {
        Self {
            greeted: Arc::default(),
            chat: broadcast::channel(1024).0,
        }
    }
}

fn router() -> Router {
    Router::new()
        .route("/", get(|| async { "hello from axum on ringsteal\n" }))
        .route("/hello/{name}", get(greet))
        .route("/sleep/{ms}", get(sleep))
        .route("/chat", get(chat))
        .with_state(AppState::default())
}

/// Answers after `ms` milliseconds: a request a graceful shutdown lets finish.
async fn sleep(Path(ms): Path<u64>) -> String {
    println!("request /sleep/{ms} started");
    ringsteal::time::sleep(Duration::from_millis(ms)).await;
    format!("slept {ms} ms\n")
}

async fn greet(State(state): State<AppState>, Path(name): Path<String>) -> String {
    let n = state.greeted.fetch_add(1, Ordering::Relaxed) + 1;
    let shard = ringsteal::current_shard().unwrap_or(0);
    format!("hello, {name} (greeting {n}, shard {shard})\n")
}

/// Upgrades `/chat` to a WebSocket by hand (what axum's `WebSocketUpgrade` does on tokio),
/// then runs the connection's chat in a task of its own.
async fn chat(State(state): State<AppState>, mut req: Request) -> Response {
    let headers = req.headers();
    let upgrade = headers.get(header::UPGRADE).and_then(|v| v.to_str().ok());
    let version = headers.get(header::SEC_WEBSOCKET_VERSION);
    let key = headers.get(header::SEC_WEBSOCKET_KEY);
    let (true, Some(b"13"), Some(key)) = (
        upgrade.is_some_and(|u| u.eq_ignore_ascii_case("websocket")),
        version.map(HeaderValue::as_bytes),
        key,
    ) else {
        let mut refused = Response::new(Body::from("a WebSocket handshake (version 13) only\n"));
        *refused.status_mut() = StatusCode::BAD_REQUEST;
        return refused;
    };
    let accept = derive_accept_key(key.as_bytes());
    let upgraded = hyper::upgrade::on(&mut req);
    ringsteal::spawn(async move {
        match upgraded.await {
            Ok(upgraded) => {
                let io = TokioIo::new(upgraded);
                let ws = WebSocketStream::from_raw_socket(io, Role::Server, None).await;
                run_chat(ws, state.chat).await;
            }
            Err(e) => eprintln!("websocket upgrade: {e}"),
        }
    });
    Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::UPGRADE, "websocket")
        .header(header::CONNECTION, "upgrade")
        .header(header::SEC_WEBSOCKET_ACCEPT, accept)
        .body(Body::empty())
        .expect("a valid response")
}

/// One chat connection: what it sends goes to everyone (itself included), and what anyone
/// sends comes to it, in order. Subscribed before the first message is read, so a client
/// sees every message sent after its own first one.
async fn run_chat<S>(ws: WebSocketStream<S>, chat: broadcast::Sender<String>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut to_client, mut from_client) = ws.split();
    let mut heard = chat.subscribe();
    let forward = ringsteal::spawn(async move {
        loop {
            match heard.recv().await {
                Ok(text) => {
                    if to_client.send(Message::text(text)).await.is_err() {
                        break;
                    }
                }
                // A slow client missed messages: tell it, and go on.
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    let note = Message::text(format!("(missed {n} messages)"));
                    if to_client.send(note).await.is_err() {
                        break;
                    }
                }
                Err(broadcast::error::RecvError::Closed) => break,
            }
        }
    });
    while let Some(Ok(message)) = from_client.next().await {
        match message {
            Message::Text(text) => {
                let _ = chat.send(text.to_string());
            }
            Message::Close(_) => break,
            _ => {}
        }
    }
    forward.abort();
}

/// Serves `app` until `stop` (the shutdown signal) completes, then drains.
async fn serve<S: Display>(
    listener: TcpListener,
    app: Router,
    stop: impl Future<Output = std::io::Result<S>>,
) {
    let graceful = GracefulShutdown::new();
    let mut incoming = listener.incoming();
    let mut stop = pin!(stop);
    let signal = loop {
        let next = match race(stop.as_mut(), incoming.next()).await {
            Either::Left(signal) => break signal,
            Either::Right(Some(next)) => next,
            Either::Right(None) => cli::fail(USAGE, "the listener stopped accepting connections"),
        };
        let stream = match next {
            Ok(stream) => stream,
            // Out of descriptors, say: the stream itself waits before it retries.
            Err(e) => {
                eprintln!("accept failed: {e}");
                continue;
            }
        };
        let service = TowerToHyperService::new(app.clone());
        let watcher = graceful.watcher();
        // Dealt to the next shard, as every spawn right after an accept (ADR-0009).
        ringsteal::spawn(async move {
            let mut builder = auto::Builder::new(Executor::new());
            builder
                .http1()
                .timer(Timer::new())
                .header_read_timeout(Duration::from_secs(10));
            builder.http2().timer(Timer::new());
            // With upgrades, as `axum::serve` does: a WebSocket handshake gets its
            // connection (without, it gets its 101 and then a reset).
            let conn = builder.serve_connection_with_upgrades(Io::new(stream), service);
            if let Err(e) = watcher.watch(conn).await {
                eprintln!("connection: {e}");
            }
        });
    };
    match signal {
        Ok(signal) => println!("stopped by {signal}"),
        Err(e) => cli::fail(USAGE, format_args!("cannot listen for signals: {e}")),
    }
    // No new connections; the requests in flight finish, idle connections close.
    drop(incoming);
    drop(listener);
    let drained = ringsteal::time::timeout(Duration::from_secs(10), graceful.shutdown()).await;
    if drained.is_err() {
        eprintln!("connections still open after 10 s were cut off");
    }
}
