//! An in-process HTTP/1.1 client that checks a server of the http groups answer by answer:
//! what criterion's `--test` pass runs against every server (and what exercises them where
//! `wrk` is not installed).
//!
//! [`check_server`] opens `connections` connections at once, spread over a few threads, and
//! walks every connection through the same script, one step on all of them before the next:
//! a `GET /`; four pipelined `GET /` in one write; a `GET /bytes/16384`; eight pipelined
//! `GET /bytes/16384` in one write (128 KiB of answers, past the servers' 64 KiB gather
//! limit, so a server must answer the rest before it reads again); a request split over two
//! writes; and a `GET /` with `Connection: close`, after which the server must close.
//! Every response is parsed here (not with the servers' own code) and compared with what it
//! must be: the status line, a `Date`, a `Content-Length` that frames exactly the expected
//! body, `Connection: close` exactly when the connection ends. Reads time out after 10 s (a
//! hang guard, never a wait).
//!
//! May not: share response-building code with the servers it checks.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::thread;
use std::time::Duration;

/// Threads the connections are spread over.
const THREADS: usize = 4;
/// Body length of the large-response step.
const LARGE: usize = 16384;
/// Requests every connection sends.
pub const REQUESTS_PER_CONNECTION: u64 = 16;

/// The body of `GET /`.
const HELLO: &[u8] = b"Hello, world!\n";

/// Checks the server at `addr` with `connections` concurrent connections; returns the
/// number of requests answered correctly, or what went wrong first.
pub fn check_server(addr: SocketAddr, connections: usize) -> Result<u64, String> {
    let threads: Vec<_> = (0..THREADS.min(connections))
        .map(|t| {
            let mine = (t..connections).step_by(THREADS).count();
            thread::spawn(move || check_connections(addr, mine))
        })
        .collect();
    let mut answered = 0;
    for t in threads {
        answered += t
            .join()
            .map_err(|_| "a check thread panicked".to_string())??;
    }
    Ok(answered)
}

/// One client's connections, walked through the script step by step.
fn check_connections(addr: SocketAddr, n: usize) -> Result<u64, String> {
    let mut conns = Vec::with_capacity(n);
    for _ in 0..n {
        let s = TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(|e| e.to_string())?;
        conns.push(Conn { s, buf: Vec::new() });
    }
    let get = b"GET / HTTP/1.1\r\nHost: check\r\n\r\n";
    for c in &mut conns {
        c.send(get)?;
    }
    for c in &mut conns {
        c.expect(HELLO, false, "GET /")?;
    }
    for c in &mut conns {
        c.send(&get.repeat(4))?;
    }
    for c in &mut conns {
        for i in 0..4 {
            c.expect(HELLO, false, &format!("pipelined GET / #{i}"))?;
        }
    }
    let large_request = format!("GET /bytes/{LARGE} HTTP/1.1\r\nHost: check\r\n\r\n");
    for c in &mut conns {
        c.send(large_request.as_bytes())?;
    }
    let large: Vec<u8> = (0..LARGE).map(|i| b'a' + (i % 26) as u8).collect();
    for c in &mut conns {
        c.expect(&large, false, "GET /bytes/16384")?;
    }
    for c in &mut conns {
        c.send(&large_request.as_bytes().repeat(8))?;
    }
    for c in &mut conns {
        for i in 0..8 {
            c.expect(&large, false, &format!("pipelined GET /bytes/16384 #{i}"))?;
        }
    }
    for c in &mut conns {
        c.send(&get[..7])?;
        c.send(&get[7..])?;
    }
    for c in &mut conns {
        c.expect(HELLO, false, "GET / in two writes")?;
    }
    for c in &mut conns {
        c.send(b"GET / HTTP/1.1\r\nHost: check\r\nConnection: close\r\n\r\n")?;
    }
    for c in &mut conns {
        c.expect(HELLO, true, "GET / with Connection: close")?;
        c.expect_eof()?;
    }
    Ok(n as u64 * REQUESTS_PER_CONNECTION)
}

struct Conn {
    s: TcpStream,
    /// Bytes received and not yet compared.
    buf: Vec<u8>,
}

impl Conn {
    fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.s.write_all(bytes).map_err(|e| format!("write: {e}"))
    }

    /// Reads one `200 OK` response and checks it: a `Date`, a `Content-Length` of
    /// `body.len()` followed by exactly `body`, and `Connection: close` if and only if
    /// `close`.
    fn expect(&mut self, body: &[u8], close: bool, what: &str) -> Result<(), String> {
        let head_len = loop {
            if let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break end + 4;
            }
            self.fill(what)?;
        };
        let head = String::from_utf8_lossy(&self.buf[..head_len]).into_owned();
        let wrong = |why: &str| format!("{what}: wrong response ({why}): {head:?}");
        let mut lines = head.trim_end().split("\r\n");
        if lines.next() != Some("HTTP/1.1 200 OK") {
            return Err(wrong("status line"));
        }
        let (mut date, mut length, mut closes) = (false, None, false);
        for line in lines {
            let (name, value) = line.split_once(':').ok_or_else(|| wrong("header"))?;
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "date" => date = value.ends_with(" GMT"),
                "content-length" if length.is_none() => length = value.parse::<usize>().ok(),
                "content-length" => return Err(wrong("two Content-Length fields")),
                "connection" => closes = value.eq_ignore_ascii_case("close"),
                _ => {}
            }
        }
        if !date {
            return Err(wrong("no Date"));
        }
        if length != Some(body.len()) {
            return Err(wrong(&format!("Content-Length is not {}", body.len())));
        }
        if closes != close {
            return Err(wrong(
                "Connection: close where it should not be, or missing",
            ));
        }
        while self.buf.len() < head_len + body.len() {
            self.fill(what)?;
        }
        if &self.buf[head_len..head_len + body.len()] != body {
            return Err(format!("{what}: wrong body"));
        }
        self.buf.drain(..head_len + body.len());
        Ok(())
    }

    /// Reads what the server sent next into the buffer.
    fn fill(&mut self, what: &str) -> Result<(), String> {
        let mut chunk = [0u8; 8192];
        match self.s.read(&mut chunk) {
            Ok(0) => Err(format!("{what}: connection closed early")),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(())
            }
            Err(e) => Err(format!("{what}: read: {e}")),
        }
    }

    /// The server must close the connection, with nothing more to read.
    fn expect_eof(&mut self) -> Result<(), String> {
        let mut chunk = [0u8; 64];
        match self.s.read(&mut chunk) {
            Ok(0) if self.buf.is_empty() => Ok(()),
            Ok(n) => Err(format!("{n} bytes after the last response, not EOF")),
            Err(e) => Err(format!("waiting for EOF: {e}")),
        }
    }
}
