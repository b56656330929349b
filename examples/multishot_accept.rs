//! A server that accepts every connection with one multishot `IORING_OP_ACCEPT` request.
//!
//! An accept loop normally submits one accept request per connection. A multishot accept
//! (Linux 5.19) is submitted once and posts a completion for each new connection, until it
//! is cancelled: `TcpListener::incoming()` turns it into a stream of connections, and re-arms
//! it if the kernel ever ends it. Each client here is greeted with its number and how many
//! accept requests the server has submitted so far: with multishot, still 1. (On a kernel
//! without it the stream falls back to one accept per connection, and says so.) Each
//! greeting is a task spawned right after its connection came, so it is dealt to the next
//! shard (ADR-0009), as after `accept`.
//!
//! Try:
//!
//! ```text
//! cargo run --example multishot_accept             # listens on 127.0.0.1:8080
//! for i in 1 2 3; do nc 127.0.0.1 8080; done        # three connections, one request
//! ```

use ringsteal::{Feature, RuntimeHandle};
use ringsteal_examples::cli;

const USAGE: &str =
    "multishot_accept [ADDR]    (ADDR defaults to 127.0.0.1:8080; port 0 picks a free one)";

#[ringsteal::main]
async fn main() {
    let args = cli::args(USAGE, 1);
    let addr = cli::listen_addr(&args);
    let listener = cli::listen(addr, USAGE).await;
    let multishot = RuntimeHandle::current()
        .features()
        .supports(Feature::MultishotAccept);
    println!(
        "accepting with {}",
        if multishot {
            "one multishot accept request"
        } else {
            "single-shot accepts (this kernel has no multishot accept)"
        }
    );

    // Submitted on its first poll; every connection from then on is a completion of it.
    let mut incoming = listener.incoming();
    let mut accepted = 0u64;
    while let Some(next) = incoming.next().await {
        let stream = match next {
            Ok(stream) => stream,
            // The stream goes on after errors such as running out of descriptors (it waits
            // a little before it retries those).
            Err(e) => {
                eprintln!("accept failed: {e}");
                continue;
            }
        };
        accepted += 1;
        let requests = incoming.requests_submitted();
        let greeting = format!(
            "connection {accepted}: {requests} accept request(s) submitted for {accepted} connection(s)\n"
        );
        print!("{greeting}");
        drop(ringsteal::spawn(async move {
            let _ = stream.write_all(greeting.into_bytes()).await;
            // Dropping the stream closes the connection.
        }));
    }
}
