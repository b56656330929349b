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
//! the server prints `listening on <addr>` with the bound port and stops on SIGINT (Ctrl-C)
//! or SIGTERM.
//!
//! What replaces `axum::serve(listener, app)`: a loop over `listener.incoming()` that hands
//! each connection to `auto::Builder::serve_connection` with
//! `TowerToHyperService::new(router)`. Handlers must be `Send`, as in axum on tokio; the
//! connection tasks are ringsteal tasks, dealt over the shards as they are spawned.

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
use ringsteal_examples::cli;

const USAGE: &str =
    "axum_server [ADDR]    (ADDR defaults to 127.0.0.1:8080; port 0 picks a free one)";

/// One shard per CPU (the macro's default).
#[ringsteal::main]
async fn main() {
    let args = cli::args(USAGE, 1);
    // Listening for SIGINT and SIGTERM starts before `listening on` is printed.
    let stop = ringsteal::signal::shutdown_signal();
    let listener = cli::listen(cli::listen_addr(&args), USAGE).await;
    cli::serve_until(stop, serve(listener, router()), USAGE).await;
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

async fn serve(listener: TcpListener, app: Router) {
    let mut incoming = listener.incoming();
    while let Some(next) = incoming.next().await {
        let stream = match next {
            Ok(stream) => stream,
            // Out of descriptors, say: the stream itself waits before it retries.
            Err(e) => {
                eprintln!("accept failed: {e}");
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
}
