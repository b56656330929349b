//! The ringsteal HTTP/1.1 server of the http groups: `examples/http_server`'s accept loop
//! and connection code (`ringsteal_benches::http::server`, on the examples' own
//! `ringsteal_examples::http::serve`) run the way the example's `main` runs it. A thread of
//! its own builds a runtime of `threads` shards and runs the accept loop in `block_on`, so
//! that thread is shard 0, as `#[ringsteal::main]`'s is; the connections are dealt to the
//! shards by the runtime (ADR-0009). The bench thread only runs `wrk` and waits, as it does
//! for every other server.
//!
//! Stopping: a oneshot completed from the bench thread ends `block_on` (the accept loop is
//! dropped with it) and the runtime is dropped on its thread.

use std::net::SocketAddr;
use std::sync::mpsc;
use std::thread::{self, JoinHandle};

use futures::channel::oneshot;
use ringsteal::net::TcpListener;
use ringsteal_benches::http::server::{self, Reads};
use ringsteal_benches::util::{race, Either};

use crate::peers::ringsteal_rt;

/// A ringsteal runtime serving HTTP on a loopback port; [`Server::stop`] stops it.
pub(crate) struct Server {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    thread: JoinHandle<Option<String>>,
}

impl Server {
    /// Starts the example's server on `threads` shards, each connection read as `reads`
    /// says.
    pub(crate) fn start(threads: usize, reads: Reads) -> Self {
        let (addr_tx, addr_rx) = mpsc::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = thread::Builder::new()
            .name("ringsteal-http".into())
            .spawn(move || {
                let rt = ringsteal_rt::runtime(threads);
                rt.block_on(async move {
                    let listener = TcpListener::bind("127.0.0.1:0")
                        .await
                        .expect("ringsteal bind");
                    addr_tx
                        .send(listener.local_addr().expect("local_addr"))
                        .expect("the bench thread waits for the address");
                    if let Either::Left(()) = race(server::serve(listener, reads), stopped).await {
                        panic!("the ringsteal accept loop ended");
                    }
                });
                ringsteal_rt::ops_per_shard(&rt)
            })
            .expect("start the ringsteal server thread");
        let addr = addr_rx.recv().expect("the ringsteal server started");
        Self { addr, stop, thread }
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the server; returns how its shards shared the completed ops (`50% 50%`).
    pub(crate) fn stop(self) -> Option<String> {
        // An error means the server thread is gone already; the join reports why.
        let _ = self.stop.send(());
        match self.thread.join() {
            Ok(shares) => shares,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}
