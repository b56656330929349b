//! The ringsteal server of the http groups: `examples/http_server`'s accept loop as it is
//! written there (`listener.incoming()`, one plain `ringsteal::spawn` per connection, which
//! the runtime deals to the shards in turn (ADR-0009), and `ringsteal_examples::http::serve`
//! on the connection), answering with [`super::app::route`] in place of the example's own
//! routes (the same `GET /`, plus `/bytes/N`).
//!
//! [`Reads::RecvStream`] serves each connection through a receive stream instead of one read
//! request per read ([`super::recv_stream_io`]), so the pipelined and large-response shapes
//! can show what a multishot receive gives.

use ringsteal::net::TcpListener;
use ringsteal_examples::http;

use super::app::handler;
use super::recv_stream_io::RecvStreamIo;

/// How each connection reads its requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// `http::serve` on the stream: one `read` (an `IORING_OP_RECV`) per read.
    Single,
    /// `http::serve` on the stream's `recv_stream()`: one multishot receive for every read.
    RecvStream,
}

/// Serves HTTP on `listener` until it stops accepting, as `examples/http_server`'s `main`
/// does.
pub async fn serve(listener: TcpListener, reads: Reads) {
    let mut incoming = listener.incoming();
    while let Some(next) = incoming.next().await {
        match next {
            // One spawn per way of reading, so that each task's future is its own size (one
            // `async` block for both would make every connection's as large as the larger).
            // A connection that fails (reset by the client, say) just ends.
            Ok(stream) => drop(match reads {
                Reads::Single => ringsteal::spawn(async move {
                    let _ = stream.set_nodelay(true);
                    let _ = http::serve(stream, &handler, None).await;
                }),
                Reads::RecvStream => ringsteal::spawn(async move {
                    let _ = stream.set_nodelay(true);
                    let _ = http::serve(RecvStreamIo::new(stream), &handler, None).await;
                }),
            }),
            // Out of descriptors, say: the stream itself waits before it retries.
            Err(e) => eprintln!("accept failed: {e}"),
        }
    }
}
