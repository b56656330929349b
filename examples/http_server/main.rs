//! A small HTTP/1.1 keep-alive server, the way a tokio user would port one: an accept loop,
//! a task per connection, a hand-written request parser. The benchmarks load this very
//! server with `wrk` (`http_1000_concurrent` and its pipelined and large-response shapes in
//! `benches/benches/net.rs`) beside a tokio server of the same shape.
//!
//! ```text
//! cargo run --release --example http_server [ADDR] [--recv-stream]
//!   ADDR           where to listen (default 127.0.0.1:8080)
//!   --recv-stream  read each connection with one multishot receive (`recv_stream()`)
//!                  instead of one read request per read
//! curl http://127.0.0.1:8080/          # Hello, world!
//! curl http://127.0.0.1:8080/bytes/20  # 20 bytes of a pattern
//! wrk -t2 -c1000 -d10s http://127.0.0.1:8080/
//! ```
//!
//! `#[ringsteal::main]` starts one shard per CPU; every shard serves connections
//! (`server.rs` says how). Stop it with Ctrl-C.

// Public items: the benchmarks include these two files in a library and use them from
// other crates; here, in a binary, nothing outside can reach them.
#[allow(unreachable_pub)]
mod parse;
#[allow(unreachable_pub)]
mod server;

use server::Reads;

#[ringsteal::main]
async fn main() -> std::io::Result<()> {
    let mut addr = String::from("127.0.0.1:8080");
    let mut reads = Reads::Single;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--recv-stream" => reads = Reads::RecvStream,
            a if a.starts_with('-') => {
                eprintln!("usage: http_server [ADDR] [--recv-stream]");
                std::process::exit(2);
            }
            a => addr = a.to_string(),
        }
    }
    let listener = ringsteal::net::TcpListener::bind(addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    server::serve(listener, reads).await;
    Ok(())
}
