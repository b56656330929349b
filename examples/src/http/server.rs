//! One HTTP/1.1 connection, served to its end: [`serve`] reads requests (pipelined ones
//! too), hands each to the handler, writes the responses, keeps the connection open while
//! both sides want it, and closes it cleanly.
//!
//! Owns: the connection's buffers and its state (bytes of a request body still to discard,
//! whether to close). May not: parse (`request.rs`) or format (`response.rs`) itself, or
//! accept connections (the caller's accept loop does).

use std::future::Future;
use std::io;
use std::time::Duration;

use ringsteal::buf::IoBuf;
use ringsteal::io::{AsyncReadOwned, AsyncWriteOwned};
use ringsteal::sync::CancellationToken;

use super::request::{parse_request, ParseError, Version, MAX_HEAD};
use super::response::{write_head, Body, Response};

/// How long a closing connection keeps reading (and discarding) what the client still sends
/// after the last response, so that closing does not reset the connection under the
/// client's feet (a reset can destroy the response before the client has read it).
const LINGER: Duration = Duration::from_secs(1);

/// Chunk size for sending a file body.
const FILE_CHUNK: usize = 64 * 1024;

/// Responses to pipelined requests are gathered into one write, up to this many bytes: a
/// client that pipelines many requests for large responses and does not read would
/// otherwise make the server hold all of them at once (the writes wait for the client).
const GATHER_LIMIT: usize = 64 * 1024;

/// Serves HTTP/1.1 on `stream` until the client closes it, either side says
/// `Connection: close`, a request is refused, or `stop` is cancelled; returns how many
/// requests were answered.
///
/// * **Keep-alive and pipelining.** Requests are answered in order; all those that arrived
///   together are answered with one write (every 64 KiB of responses, so a client that
///   pipelines and does not read holds up the server's memory by that much at most).
/// * **Bodies.** A request's body (`Content-Length`) is read and discarded, so the next
///   request is found where it starts; handlers see only the head. A `Transfer-Encoding`
///   is answered with 501 and the connection closed.
/// * **Refusals.** A malformed head gets 400, one longer than [`MAX_HEAD`] bytes 431, an
///   unknown version 505, each with `Connection: close`, and the connection is closed.
/// * **`HEAD`.** The handler's response goes out without its body (its `Content-Length`
///   stays).
/// * **Stopping.** Once `stop` is cancelled, a connection waiting for its next request
///   closes at once, and one in the middle of a request answers it with
///   `Connection: close`, then closes: the recipe of a graceful shutdown.
/// * **Replies and the next read.** Without `stop`, the replies and the read of the next
///   request go as one `write_all_then_read` (one pair of linked requests on a stream);
///   with it, the replies are sent first, so a stop never cuts one short.
///
/// The handler gets each request by value and returns the response (any future: it may do
/// I/O). `stream` is anything with the owned-buffer I/O traits: `TcpStream`, `&TcpStream`,
/// `UnixStream`.
///
/// ```
/// use ringsteal::io::AsyncReadOwned;
/// use ringsteal::net::{TcpListener, TcpStream};
/// use ringsteal_examples::http::{self, Response};
///
/// let rt = ringsteal::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let addr = listener.local_addr()?;
///     let server = ringsteal::spawn(async move {
///         let (stream, _) = listener.accept().await?;
///         let hello = |_req| async { Response::text(200, "hello\n") };
///         http::serve(stream, &hello, None).await
///     });
///     let mut client = TcpStream::connect(addr).await?;
///     let two = "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
///     client.write_all(two.as_bytes().to_vec()).await.0?;
///     let (res, replies) = client.read_to_end(Vec::new()).await;
///     res?;
///     let replies = String::from_utf8(replies).unwrap();
///     assert_eq!(replies.matches("HTTP/1.1 200 OK").count(), 2);
///     assert!(replies.ends_with("Connection: close\r\n\r\nhello\n"));
///     assert_eq!(server.await.unwrap()?, 2);
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub async fn serve<S, H, F>(
    stream: S,
    handler: &H,
    stop: Option<&CancellationToken>,
) -> io::Result<u64>
where
    S: AsyncReadOwned + AsyncWriteOwned,
    H: Fn(super::Request) -> F,
    F: Future<Output = Response>,
{
    serve_limited(stream, handler, stop, None).await
}

/// As [`serve`], and a connection whose client sends nothing for `idle` (between requests,
/// or in the middle of one: a client that opens connections and sends a head byte by byte
/// to hold them, say) is closed. The time counts from when the last replies started going
/// out (they go with the read, as one `write_all_then_read`), so a client that does not
/// take its replies for that long is closed too. What a server facing the internet wants;
/// the benchmarks use [`serve`], as the servers they compare it with have no such limit
/// either.
///
/// ```
/// use std::time::Duration;
/// use ringsteal_examples::http::{self, Response};
///
/// let rt = ringsteal::Runtime::builder().shards(1).start_paused(true).build().unwrap();
/// rt.block_on(async {
///     let (server_end, client) = ringsteal::net::UnixStream::pair()?;
///     let hello = |_req| async { Response::text(200, "hello\n") };
///     // Half a request, then silence: closed once the limit passes (on a paused clock, at
///     // once).
///     client.write_all(b"GET / HT".to_vec()).await.0?;
///     let answered = http::serve_with_idle_limit(server_end, &hello, None, Duration::from_secs(30)).await?;
///     assert_eq!(answered, 0);
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub async fn serve_with_idle_limit<S, H, F>(
    stream: S,
    handler: &H,
    stop: Option<&CancellationToken>,
    idle: Duration,
) -> io::Result<u64>
where
    S: AsyncReadOwned + AsyncWriteOwned,
    H: Fn(super::Request) -> F,
    F: Future<Output = Response>,
{
    serve_limited(stream, handler, stop, Some(idle)).await
}

async fn serve_limited<S, H, F>(
    mut stream: S,
    handler: &H,
    stop: Option<&CancellationToken>,
    idle: Option<Duration>,
) -> io::Result<u64>
where
    S: AsyncReadOwned + AsyncWriteOwned,
    H: Fn(super::Request) -> F,
    F: Future<Output = Response>,
{
    let stopped = || stop.is_some_and(|s| s.is_cancelled());
    let mut inbuf: Vec<u8> = Vec::with_capacity(MAX_HEAD);
    let mut out: Vec<u8> = Vec::with_capacity(1024);
    let mut body_left: u64 = 0;
    let mut answered = 0;
    loop {
        // Answer every request that is complete in the buffer.
        loop {
            if body_left > 0 {
                let n = body_left.min(inbuf.len() as u64);
                inbuf.drain(..n as usize);
                body_left -= n;
                if body_left > 0 {
                    break;
                }
            }
            // The request is parsed and handed to the handler in a scope with no `await`
            // in it, and the response answered in another: what is live across an `await`
            // is kept in the task's future (memory the connection last touched a request
            // ago), the rest stays on the stack.
            let handling = match parse_request(&inbuf) {
                Ok(Some((req, len))) => {
                    inbuf.drain(..len);
                    body_left = req.content_length;
                    let asked = (req.version, req.keep_alive, req.method == "HEAD");
                    Some((asked, handler(req)))
                }
                Ok(None) => break,
                Err(e) => {
                    write_error(&mut out, e);
                    None
                }
            };
            let Some(((version, keep_alive, head_only), handling)) = handling else {
                send(&mut stream, &mut out).await?;
                close(&mut stream).await;
                return Ok(answered);
            };
            let resp = handling.await;
            answered += 1;
            // Asked after the handler ran: a stop that came meanwhile closes after this one.
            let close_after = !keep_alive || stopped();
            let file = answer(&mut out, resp, version, close_after, head_only);
            if let Some((file, len)) = file {
                send(&mut stream, &mut out).await?;
                send_file(&mut stream, &file, len).await?;
            }
            if close_after {
                send(&mut stream, &mut out).await?;
                close(&mut stream).await;
                return Ok(answered);
            }
            if out.len() >= GATHER_LIMIT {
                send(&mut stream, &mut out).await?;
            }
        }
        // One write for everything answered since the last read, and a wait for more of the
        // request (or the next one). Without a stop to watch, both in one call: a stream
        // sends and reads with one pair of linked requests (`write_all_then_read`).
        let between_requests = inbuf.is_empty() && body_left == 0;
        let len = inbuf.len();
        if stop.is_some() {
            send(&mut stream, &mut out).await?;
        }
        let spare = inbuf.slice(len..);
        // Each branch awaits its own future: a future is copied whole when it is moved into
        // place, so one future for every branch (the stop's is 552 bytes) made the common
        // one pay for the largest, once per request.
        let read = match stop {
            // Between requests, a stop closes the connection at once: nothing is lost (the
            // replies were sent before this wait began).
            Some(stop) if between_requests => {
                within(idle, stop.run_until_cancelled(stream.read(spare)))
                    .await
                    .flatten()
            }
            Some(_) => within(idle, stream.read(spare)).await,
            None if out.is_empty() => within(idle, stream.read(spare)).await,
            None => {
                let out_now = std::mem::take(&mut out);
                let step = match idle {
                    None => Some(stream.write_all_then_read(out_now, spare).await),
                    Some(_) => within(idle, stream.write_all_then_read(out_now, spare)).await,
                };
                step.map(|((sent, mut back), read)| {
                    back.clear();
                    out = back;
                    match sent {
                        Ok(()) => read,
                        Err(e) => (Err(e), read.1),
                    }
                })
            }
        };
        let Some((res, buf)) = read else {
            let _ = stream.shutdown().await;
            return Ok(answered);
        };
        inbuf = buf.into_inner();
        if res? == 0 {
            // The client closed its side; a partial request in the buffer dies with it.
            return Ok(answered);
        }
    }
}

/// Appends `resp`'s head and body to `out` (no body for `HEAD`); a file body is returned
/// instead, to be sent after what `out` holds.
fn answer(
    out: &mut Vec<u8>,
    resp: Response,
    version: Version,
    close_after: bool,
    head_only: bool,
) -> Option<(ringsteal::fs::File, u64)> {
    write_head(out, &resp, version, close_after);
    if head_only {
        return None;
    }
    match resp.body {
        Body::Empty => None,
        Body::Bytes(bytes) => {
            out.extend_from_slice(&bytes);
            None
        }
        Body::Static(bytes) => {
            out.extend_from_slice(bytes);
            None
        }
        Body::File { file, len } => Some((file, len)),
    }
}

/// Writes what `out` holds (if anything) and empties it.
async fn send<S: AsyncWriteOwned>(stream: &mut S, out: &mut Vec<u8>) -> io::Result<()> {
    if out.is_empty() {
        return Ok(());
    }
    let (res, mut buf) = stream.write_all(std::mem::take(out)).await;
    buf.clear();
    *out = buf;
    res
}

/// `io`'s output, or `None` if it takes longer than `idle` (a client silent for too long:
/// closed, with whatever partial request it sent).
async fn within<F: Future>(idle: Option<Duration>, io: F) -> Option<F::Output> {
    match idle {
        Some(idle) => ringsteal::time::timeout(idle, io).await.ok(),
        None => Some(io.await),
    }
}

/// Sends the first `len` bytes of `file`. A file that shrank under us is an error: the
/// `Content-Length` already sent cannot be honoured, so the connection must close.
async fn send_file<S: AsyncWriteOwned>(
    stream: &mut S,
    file: &ringsteal::fs::File,
    len: u64,
) -> io::Result<()> {
    let mut pos = 0;
    let mut chunk = Vec::with_capacity(FILE_CHUNK.min(len as usize));
    while pos < len {
        let want = FILE_CHUNK.min((len - pos) as usize);
        chunk.clear();
        let (res, buf) = file.read_at(chunk.slice(..want), pos).await;
        chunk = buf.into_inner();
        if res? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file shrank while it was being sent",
            ));
        }
        pos += chunk.len() as u64;
        let (res, buf) = stream.write_all(chunk).await;
        res?;
        chunk = buf;
    }
    Ok(())
}

/// The response to a refused request head.
fn write_error(out: &mut Vec<u8>, e: ParseError) {
    let resp = Response::text(
        e.status(),
        format!("{} {}: {e}\n", e.status(), super::reason(e.status())),
    );
    write_head(out, &resp, Version::Http11, true);
    if let Body::Bytes(body) = resp.body {
        out.extend_from_slice(&body);
    }
}

/// Ends the connection after a last response: shut down the write side (the client reads
/// end of stream after the response), then read and discard what the client still sends,
/// for at most [`LINGER`], so that closing with unread bytes does not reset the connection
/// before the client has read the response.
async fn close<S: AsyncReadOwned + AsyncWriteOwned>(stream: &mut S) {
    if stream.shutdown().await.is_err() {
        return;
    }
    let _ = ringsteal::time::timeout(LINGER, async {
        let mut buf = Vec::with_capacity(4096);
        loop {
            buf.clear();
            let (res, b) = stream.read(buf).await;
            buf = b;
            if !matches!(res, Ok(1..)) {
                break;
            }
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd;

    use super::*;
    use crate::http::Request;

    /// Bytes waiting to be read on `fd` (`FIONREAD`).
    fn waiting(fd: &impl AsRawFd) -> usize {
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int.
        let r = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut n) };
        assert_eq!(r, 0);
        n as usize
    }

    #[test]
    fn a_large_response_to_a_pipelined_request_goes_out_before_the_next_is_answered() {
        const BODY: usize = 64 * 1024;
        let rt = ringsteal::Runtime::builder().shards(1).build().unwrap();
        rt.block_on(async {
            let (server_end, client) = std::os::unix::net::UnixStream::pair().unwrap();
            let stream = ringsteal::net::UnixStream::from_std(server_end).unwrap();
            let seen_by_client = std::cell::RefCell::new(Vec::new());
            let handler = |_req: Request| {
                // What the client could read when this request is answered.
                seen_by_client.borrow_mut().push(waiting(&client));
                std::future::ready(Response::text(200, "x".repeat(BODY)))
            };
            // Two pipelined requests, in one write; the client reads nothing meanwhile.
            let two = "GET / HTTP/1.1\r\nHost: a\r\n\r\n".to_string()
                + "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
            std::io::Write::write_all(&mut &client, two.as_bytes()).unwrap();
            let answered = serve(stream, &handler, None).await.unwrap();
            assert_eq!(answered, 2);
            let seen = seen_by_client.into_inner();
            assert_eq!(seen[0], 0);
            assert!(
                seen[1] > BODY,
                "the first response was held back while the next request was answered: {seen:?}"
            );
        });
    }
}
