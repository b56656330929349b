//! The server: an accept loop that spawns one task per connection, and the connection loop
//! (read, answer every complete request, write the answers at once).
//!
//! Written the way the book's quick start writes a server: `listener.incoming()` (one
//! multishot accept for every connection) and a plain `ringsteal::spawn` per connection.
//! Nothing names a placement: a spawn right after the listener handed out a connection is
//! dealt to the shards in turn, so every shard serves (ADR-0009).
//!
//! Each connection reads with owned buffers, one of two ways ([`Reads`]):
//! - `Single`: one `read` (an `IORING_OP_RECV`) per read, into the spare capacity of the
//!   connection's request buffer;
//! - `RecvStream`: `stream.recv_stream()`, one multishot receive for every read of the
//!   connection, the data in the shard's provided buffers; requests complete in one
//!   buffer are answered from it without a copy.
//!
//! Either way the responses to one read are gathered into one `Vec` and written with one
//! `write_all`, so a pipelining client gets all the answers to one read in one send.
//!
//! May not: use anything but `std`, `ringsteal` and [`super::parse`] (the benchmarks include
//! this file as it is).

use std::io;

use ringsteal::buf::IoBuf;
use ringsteal::net::{TcpListener, TcpStream};

use super::parse::handle_requests;

/// Bytes a connection reads at once (and the initial size of its buffers).
pub const READ_BUF: usize = 4096;

/// How each connection reads its requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// One `read` per read: one `IORING_OP_RECV` each.
    Single,
    /// One `recv_stream()`: a multishot receive into provided buffers.
    RecvStream,
}

/// Accepts connections on `listener` until it cannot accept any more, spawning a task per
/// connection. Errors of one accept (a connection reset before it was taken, running out of
/// descriptors) are printed and the loop goes on: the stream of connections retries by
/// itself.
pub async fn serve(listener: TcpListener, reads: Reads) {
    let mut incoming = listener.incoming();
    while let Some(conn) = incoming.next().await {
        match conn {
            Ok(stream) => {
                ringsteal::spawn(connection(stream, reads));
            }
            Err(e) => eprintln!("accept: {e}"),
        }
    }
}

/// Serves one connection until the client closes it, asks to, or sends a bad request; an
/// I/O error ends it too (there is nobody to tell).
pub async fn connection(stream: TcpStream, reads: Reads) {
    let _ = match reads {
        Reads::Single => read_loop(stream).await,
        Reads::RecvStream => recv_stream_loop(stream).await,
    };
}

async fn read_loop(stream: TcpStream) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut input = Vec::with_capacity(READ_BUF);
    let mut out = Vec::with_capacity(READ_BUF);
    loop {
        // Room for a full read after any partial request (the parser refuses a partial
        // request before it grows past its head and body limits).
        if input.capacity() - input.len() < READ_BUF {
            input.reserve(READ_BUF);
        }
        let len = input.len();
        let (res, slice) = stream.read(input.slice(len..)).await;
        input = slice.into_inner();
        if res? == 0 {
            return Ok(());
        }
        let handled = handle_requests(&input, &mut out);
        input.drain(..handled.consumed);
        if !out.is_empty() {
            let (res, written) = stream.write_all(out).await;
            out = written;
            res?;
            out.clear();
        }
        if handled.close {
            return Ok(());
        }
    }
}

async fn recv_stream_loop(stream: TcpStream) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut received = stream.recv_stream();
    // A request split over two buffers, copied aside until it is complete.
    let mut pending: Vec<u8> = Vec::new();
    let mut out = Vec::with_capacity(READ_BUF);
    while let Some(buf) = received.next().await {
        let buf = buf?;
        let handled = if pending.is_empty() {
            let handled = handle_requests(&buf, &mut out);
            pending.extend_from_slice(&buf[handled.consumed..]);
            handled
        } else {
            pending.extend_from_slice(&buf);
            let handled = handle_requests(&pending, &mut out);
            pending.drain(..handled.consumed);
            handled
        };
        // The provided buffer goes back to the shard's ring before the write waits.
        drop(buf);
        if !out.is_empty() {
            let (res, written) = stream.write_all(out).await;
            out = written;
            res?;
            out.clear();
        }
        if handled.close {
            return Ok(());
        }
    }
    Ok(())
}
