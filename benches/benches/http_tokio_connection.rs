//! The tokio HTTP server's connection (`http_tokio`), in a file of its own so that
//! `benches/examples/http_cache_probe.rs` runs the same code: each connection reads into the
//! spare room of one buffer (`read_buf`, at most `MAX_HEAD` bytes pending, as
//! `ringsteal_examples::http::serve` keeps), answers every complete request with the same
//! parser, routes and head writer (`app::Requests`) and writes the answers with one
//! `write_all`.

use std::io;

use ringsteal_benches::http::app::Requests;
use ringsteal_examples::http::MAX_HEAD;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Serves HTTP on `stream` until the client closes it or a request closes the connection.
pub(crate) async fn connection(mut stream: TcpStream) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut requests = Requests::default();
    let mut input = Vec::with_capacity(MAX_HEAD);
    let mut out = Vec::with_capacity(1024);
    loop {
        // `read_buf` grows the buffer when it is full; a head over `MAX_HEAD` bytes is
        // refused by the parser before that matters.
        if stream.read_buf(&mut input).await? == 0 {
            return Ok(());
        }
        // Every complete request is answered before the next read; `full` says the
        // responses reached the gather limit with requests left.
        loop {
            let handled = requests.handle(&input, &mut out);
            input.drain(..handled.consumed);
            if !out.is_empty() {
                stream.write_all(&out).await?;
                out.clear();
            }
            if handled.close {
                return stream.shutdown().await;
            }
            if !handled.full {
                break;
            }
        }
    }
}
