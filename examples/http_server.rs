//! An HTTP/1.1 server with keep-alive, written the obvious way: an accept loop and one task
//! per connection.
//!
//! Shows a real protocol on ringsteal: `ringsteal_examples::http::serve` reads requests
//! (pipelined ones too), answers each, and keeps the connection open; a malformed request
//! gets 400, a head over 8 KiB 431, and the connection is closed, as is one whose client
//! sends nothing for 30 s (`serve_with_idle_limit`).
//!
//! The accept loop is `listener.incoming()`: one multishot accept request takes every
//! connection. Each connection is a task spawned with a plain `ringsteal::spawn`, and a spawn
//! right after a connection was taken is dealt to the shards in turn (ADR-0009), so every
//! shard serves without a placement named here; `/shard` says which shard served the
//! request (open two connections and they answer from different shards).
//!
//! Routes: `/` (a fixed greeting, the one to benchmark), `/shard`, anything else 404;
//! methods other than GET and HEAD get 405.
//!
//! Try:
//!
//! ```text
//! cargo run --release --example http_server                # listens on 127.0.0.1:8080
//! curl -v http://127.0.0.1:8080/ http://127.0.0.1:8080/shard   # two requests, one connection
//! printf 'GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /shard HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' | nc 127.0.0.1 8080
//! wrk -t2 -c64 -d5s http://127.0.0.1:8080/                 # apt-get install wrk
//! ```

use std::future::{ready, Ready};

use ringsteal_examples::cli;
use ringsteal_examples::http::{self, Request, Response};

/// A client silent this long (between requests, or in the middle of one) is closed, so
/// idle or trickling connections cannot hold every descriptor.
const IDLE: std::time::Duration = std::time::Duration::from_secs(30);

const USAGE: &str =
    "http_server [ADDR]    (ADDR defaults to 127.0.0.1:8080; port 0 picks a free one)";

#[ringsteal::main]
async fn main() {
    let args = cli::args(USAGE, 1);
    let addr = cli::listen_addr(&args);
    let listener = cli::listen(addr, USAGE).await;
    let mut incoming = listener.incoming();
    while let Some(next) = incoming.next().await {
        match next {
            Ok(stream) => drop(ringsteal::spawn(async move {
                let _ = stream.set_nodelay(true);
                // A connection that fails (reset by the client, say) just ends.
                let _ = http::serve_with_idle_limit(stream, &route, None, IDLE).await;
            })),
            // Out of descriptors, say: the stream itself waits before it retries.
            Err(e) => eprintln!("accept failed: {e}"),
        }
    }
    cli::fail(USAGE, "the listener stopped accepting connections")
}

/// The application: a request in, a response out.
fn route(req: Request) -> Ready<Response> {
    ready(match (req.method.as_str(), req.path()) {
        ("GET" | "HEAD", "/") => Response::static_text(200, "Hello, world!\n"),
        ("GET" | "HEAD", "/shard") => Response::text(
            200,
            format!(
                "served by shard {}\n",
                ringsteal::current_shard().unwrap_or(0)
            ),
        ),
        ("GET" | "HEAD", _) => Response::error(404),
        _ => Response::error(405).with_header("Allow", "GET, HEAD"),
    })
}
