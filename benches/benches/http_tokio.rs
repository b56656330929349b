//! The tokio HTTP/1.1 server of the http groups, with the code shape of
//! `examples/http_server` (`ringsteal_benches::http::server`) written the way a tokio user
//! writes it: an accept loop spawns a task per connection (`tokio::spawn`); each connection
//! reads into the spare room of one buffer (`read_buf`, at most `MAX_HEAD` bytes pending, as
//! `ringsteal_examples::http::serve` keeps), answers every complete request with the same
//! parser, routes and head writer (`app::Requests`) and writes the answers with one
//! `write_all`.
//!
//! API read from docs.rs/tokio (net::TcpListener::{bind, accept}, net::TcpStream::
//! set_nodelay, io::{AsyncReadExt::read_buf, AsyncWriteExt::{write_all, shutdown}}).

use std::io;
use std::net::SocketAddr;

use tokio::net::TcpListener;

use crate::http_tokio_connection::connection;
use crate::peers::tokio_rt;

/// A multi-thread tokio runtime with `threads` workers serving HTTP on a loopback port;
/// dropping it stops the server.
pub(crate) struct Server {
    rt: tokio::runtime::Runtime,
    addr: SocketAddr,
}

impl Server {
    pub(crate) fn start(threads: usize) -> Self {
        let rt = tokio_rt::multi_thread(threads);
        let listener = rt
            .block_on(TcpListener::bind("127.0.0.1:0"))
            .expect("tokio bind");
        let addr = listener.local_addr().expect("local_addr");
        rt.spawn(async move {
            if let Err(e) = serve(listener).await {
                panic!("tokio accept: {e}");
            }
        });
        Self { rt, addr }
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the server (every task is dropped with the runtime).
    pub(crate) fn stop(self) {
        self.rt.shutdown_background();
    }
}

async fn serve(listener: TcpListener) -> io::Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        tokio::spawn(connection(stream));
    }
}
