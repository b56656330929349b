//! An in-process HTTP/1.1 client that checks a server of the http groups answer by answer:
//! what criterion's `--test` pass runs against every server (and what exercises them where
//! `wrk` is not installed).
//!
//! [`check_server`] opens `connections` connections at once, spread over a few threads, and
//! walks every connection through the same script, one step on all of them before the next:
//! a `GET /`; four pipelined `GET /` in one write; a `GET /bytes/16384`; a request split over
//! two writes; and a `GET /` with `Connection: close`, after which the server must close.
//! Every response is compared with what it must be, written out here (not produced by the
//! server's own code). Reads time out after 10 s (a hang guard, never a wait).
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
pub const REQUESTS_PER_CONNECTION: u64 = 8;

const HELLO_RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nServer: ringsteal-example\r\n\
Content-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, world!";
const CLOSE_RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nServer: ringsteal-example\r\n\
Content-Type: text/plain\r\nContent-Length: 13\r\nConnection: close\r\n\r\nHello, world!";

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
        c.expect(HELLO_RESPONSE, "GET /")?;
    }
    for c in &mut conns {
        c.send(&get.repeat(4))?;
    }
    for c in &mut conns {
        for i in 0..4 {
            c.expect(HELLO_RESPONSE, &format!("pipelined GET / #{i}"))?;
        }
    }
    let large_request = format!("GET /bytes/{LARGE} HTTP/1.1\r\nHost: check\r\n\r\n");
    for c in &mut conns {
        c.send(large_request.as_bytes())?;
    }
    let mut large = format!(
        "HTTP/1.1 200 OK\r\nServer: ringsteal-example\r\nContent-Type: text/plain\r\n\
         Content-Length: {LARGE}\r\n\r\n"
    )
    .into_bytes();
    large.extend((0..LARGE).map(|i| b'a' + (i % 26) as u8));
    for c in &mut conns {
        c.expect(&large, "GET /bytes/16384")?;
    }
    for c in &mut conns {
        c.send(&get[..7])?;
        c.send(&get[7..])?;
    }
    for c in &mut conns {
        c.expect(HELLO_RESPONSE, "GET / in two writes")?;
    }
    for c in &mut conns {
        c.send(b"GET / HTTP/1.1\r\nHost: check\r\nConnection: close\r\n\r\n")?;
    }
    for c in &mut conns {
        c.expect(CLOSE_RESPONSE, "GET / with Connection: close")?;
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

    /// Reads until `want.len()` bytes are buffered and compares them with `want`, failing
    /// as soon as the bytes received so far differ from it.
    fn expect(&mut self, want: &[u8], what: &str) -> Result<(), String> {
        let mut chunk = [0u8; 8192];
        loop {
            let have = self.buf.len().min(want.len());
            if self.buf[..have] != want[..have] {
                let shown = &self.buf[..have.min(200)];
                return Err(format!(
                    "{what}: wrong response: {:?}",
                    String::from_utf8_lossy(shown)
                ));
            }
            if have == want.len() {
                break;
            }
            match self.s.read(&mut chunk) {
                Ok(0) => return Err(format!("{what}: connection closed early")),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) => return Err(format!("{what}: read: {e}")),
            }
        }
        self.buf.drain(..want.len());
        Ok(())
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
