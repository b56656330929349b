//! Thread-per-connection servers on `std::net`: the echo peer every runtime talks to in the
//! stream workloads ([`echo`]), and the std HTTP server of the http groups ([`http`]).
//!
//! A [`ThreadServer`] listens on a loopback port (backlog [`super::BACKLOG`]); an acceptor
//! thread starts one thread per connection running the handler; when the handler returns,
//! the connection is shut down (the acceptor holds a second handle on it, so dropping the
//! handler's would not close it). Dropping the server stops
//! accepting, shuts down every connection still open (a client may be gone without the
//! server having heard of it: a connect that overflowed the accept queue completes later,
//! after its client closed, and such a connection is never read from again) and joins every
//! thread.
//!
//! May not: use a runtime; the echo peer must be the same plain code for every runtime.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use ringsteal_examples::http::MAX_HEAD;

use crate::http::app::Requests;

/// Stack of a connection thread: the handlers keep their buffers on the heap.
const STACK: usize = 128 * 1024;

/// A listener on `127.0.0.1` with a thread per accepted connection.
pub struct ThreadServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl ThreadServer {
    /// Listens on a free loopback port and serves each connection with `handler` on a
    /// thread of its own (named `name`).
    pub fn start(name: &str, handler: fn(TcpStream)) -> io::Result<Self> {
        let listener = super::listen_loopback(0, false)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let conn_name = format!("{name}-conn");
        let acceptor = thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                // Each connection's thread, and a handle on its socket to shut it down.
                let mut conns: Vec<(JoinHandle<()>, TcpStream)> = Vec::new();
                for stream in listener.incoming() {
                    if stopping.load(Ordering::Acquire) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let Ok(handle) = stream.try_clone() else {
                        continue;
                    };
                    conns.retain(|(c, _)| !c.is_finished());
                    let Ok(own) = stream.try_clone() else {
                        continue;
                    };
                    let spawned = thread::Builder::new()
                        .name(conn_name.clone())
                        .stack_size(STACK)
                        .spawn(move || {
                            handler(stream);
                            // The acceptor's handle keeps the descriptor open: end the
                            // connection itself, so the peer sees it closed now.
                            let _ = own.shutdown(Shutdown::Both);
                        });
                    match spawned {
                        Ok(c) => conns.push((c, handle)),
                        Err(e) => eprintln!("{conn_name}: cannot start a thread: {e}"),
                    }
                }
                for (c, handle) in conns {
                    let _ = handle.shutdown(Shutdown::Both);
                    let _ = c.join();
                }
            })?;
        Ok(Self {
            addr,
            stop,
            acceptor: Some(acceptor),
        })
    }

    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for ThreadServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Wakes the acceptor out of `accept`; it sees the flag and stops.
        drop(TcpStream::connect(self.addr));
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
    }
}

/// Echoes everything it reads until the peer closes: reads of up to 64 KiB, each written
/// back whole before the next read.
pub fn echo(mut stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if stream.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
        }
    }
}

/// Serves HTTP/1.1 on one connection with the shared request step ([`Requests`]): blocking
/// reads into the spare room of one buffer (grown by `MAX_HEAD` when full), every complete
/// request answered, one `write_all` per read (or per
/// [`GATHER_LIMIT`](crate::http::app::GATHER_LIMIT) of responses).
pub fn http(mut stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let mut requests = Requests::default();
    let mut input = vec![0u8; MAX_HEAD];
    let mut have = 0;
    let mut out = Vec::with_capacity(1024);
    loop {
        if have == input.len() {
            input.resize(input.len() + MAX_HEAD, 0);
        }
        let n = match stream.read(&mut input[have..]) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        have += n;
        // Every complete request is answered before the next read (`full`: the responses
        // reached the gather limit with requests left).
        loop {
            let handled = requests.handle(&input[..have], &mut out);
            input.copy_within(handled.consumed..have, 0);
            have -= handled.consumed;
            if !out.is_empty() {
                if stream.write_all(&out).is_err() {
                    return;
                }
                out.clear();
            }
            if handled.close {
                let _ = stream.shutdown(Shutdown::Write);
                return;
            }
            if !handled.full {
                break;
            }
        }
    }
}
