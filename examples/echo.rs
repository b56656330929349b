//! An echo server: every byte a client sends comes back to it.
//!
//! Shows the three things every ringsteal server does: an accept loop, one task per
//! connection (`ringsteal::spawn`), and owned buffers: a read takes the buffer and gives it
//! back filled, and the same buffer then goes out in the write, with no copy. A spawn right
//! after an `accept` is dealt to the shards in turn (ADR-0009), so the connections are
//! served on every shard with no placement named.
//!
//! Try:
//!
//! ```text
//! cargo run --example echo                 # listens on 127.0.0.1:8080
//! cargo run --example echo 127.0.0.1:0     # any free port: the first line says which
//! nc 127.0.0.1 8080                        # then type: each line comes back
//! ```
//!
//! When a client hangs up, the server prints how many bytes it echoed and on which shard.

use std::net::SocketAddr;

use ringsteal::net::TcpStream;
use ringsteal_examples::cli;

const USAGE: &str = "echo [ADDR]    (ADDR defaults to 127.0.0.1:8080; port 0 picks a free one)";

#[ringsteal::main]
async fn main() {
    let args = cli::args(USAGE, 1);
    let addr = cli::listen_addr(&args);
    let listener = cli::listen(addr, USAGE).await;
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => drop(ringsteal::spawn(echo(stream, peer))),
            Err(e) => cli::accept_failed(e).await,
        }
    }
}

async fn echo(stream: TcpStream, peer: SocketAddr) {
    let mut buf = Vec::with_capacity(4096);
    let mut echoed = 0;
    loop {
        // The buffer goes to the kernel with the read and comes back with the result.
        let (res, filled) = stream.read(buf).await;
        match res {
            Ok(0) => break, // the client closed its side
            Ok(n) => echoed += n,
            Err(e) => {
                eprintln!("{peer}: read failed: {e}");
                break;
            }
        }
        // The same buffer, now holding what was read, goes out.
        let (res, mut sent) = stream.write_all(filled).await;
        if let Err(e) = res {
            eprintln!("{peer}: write failed: {e}");
            break;
        }
        sent.clear();
        buf = sent;
    }
    println!(
        "{peer}: echoed {echoed} bytes on shard {}",
        ringsteal::current_shard().unwrap_or(0)
    );
}
