//! An axum router on ringsteal, served by hyper-util's `auto` connection builder (HTTP/1.1,
//! and HTTP/2 with prior knowledge) with ringsteal's executor and timer. No tokio runtime
//! exists: axum is built with its default features off (no `tokio` feature) and `http1` on.
//!
//! ```text
//! cargo run --release --example axum_server -- 127.0.0.1:8080
//! curl http://127.0.0.1:8080/
//! curl http://127.0.0.1:8080/hello/ringsteal
//! ```
//!
//! The first argument is the listen address (default `127.0.0.1:8080`; port 0 picks one);
//! the server prints `listening on <addr>` with the bound port and stops on Ctrl-C.
//!
//! What replaces `axum::serve(listener, app)`: a loop over `listener.incoming()` that hands each connection to
//! `auto::Builder::serve_connection` with `TowerToHyperService::new(router)`. Handlers must
//! be `Send`, as in axum on tokio; the connection tasks are stealable ringsteal tasks.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::routing::get;
use axum::Router;
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use ringsteal::hyper::{Executor, Io, Timer};
use ringsteal::net::TcpListener;
use ringsteal::Runtime;

fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".to_string());
    let stop = async {
        let _ = ringsteal::signal::ctrl_c().await;
    };
    if let Err(e) = run(&addr, |_| {}, stop) {
        eprintln!("axum_server: {e}");
        std::process::exit(1);
    }
}

/// How many greetings were served, shared by every handler on every shard.
#[derive(Clone, Default)]
struct AppState {
    greeted: Arc<AtomicU64>,
}

fn router() -> Router {
    Router::new()
        .route("/", get(|| async { "hello from axum on ringsteal\n" }))
        .route("/hello/{name}", get(greet))
        .with_state(AppState::default())
}

async fn greet(State(state): State<AppState>, Path(name): Path<String>) -> String {
    let n = state.greeted.fetch_add(1, Ordering::Relaxed) + 1;
    let shard = ringsteal::current_shard().unwrap_or(0);
    format!("hello, {name} (greeting {n}, shard {shard})\n")
}

/// Serves the router on `addr` with one shard per CPU until `stop` completes; `ready` is
/// told the bound address once the server listens.
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
            res = serve(listener, router()) => res,
            () = stop => Ok(()),
        }
    })
}

async fn serve(listener: TcpListener, app: Router) -> io::Result<()> {
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
        let service = TowerToHyperService::new(app.clone());
        // Dealt to the next shard, as every spawn right after an accept (ADR-0009).
        ringsteal::spawn(async move {
            let mut builder = auto::Builder::new(Executor::new());
            builder
                .http1()
                .timer(Timer::new())
                .header_read_timeout(Duration::from_secs(10));
            builder.http2().timer(Timer::new());
            if let Err(e) = builder.serve_connection(Io::new(stream), service).await {
                eprintln!("connection: {e}");
            }
        });
    }
    Err(io::Error::other("the listener stopped accepting"))
}
