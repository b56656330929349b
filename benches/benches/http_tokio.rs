//! The tokio HTTP/1.1 server of the http groups: the same code shape as the ringsteal server
//! (`examples/http_server/server.rs`), written the way a tokio user writes it. An accept
//! loop spawns a task per connection (`tokio::spawn`); each connection reads into the spare
//! capacity of one `Vec` (`read_buf`), answers every complete request with the shared
//! request handling (`handle_requests`) and writes the answers with one `write_all`.
//!
//! API read from docs.rs/tokio (net::TcpListener::{bind, accept}, net::TcpStream::
//! set_nodelay, io::{AsyncReadExt::read_buf, AsyncWriteExt::write_all}).

use std::io;
use std::net::SocketAddr;

use ringsteal_benches::http::parse::handle_requests;
use ringsteal_benches::http::server::READ_BUF;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

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

async fn connection(mut stream: TcpStream) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut input = Vec::with_capacity(READ_BUF);
    let mut out = Vec::with_capacity(READ_BUF);
    loop {
        if input.capacity() - input.len() < READ_BUF {
            input.reserve(READ_BUF);
        }
        if stream.read_buf(&mut input).await? == 0 {
            return Ok(());
        }
        let handled = handle_requests(&input, &mut out);
        input.drain(..handled.consumed);
        if !out.is_empty() {
            stream.write_all(&out).await?;
            out.clear();
        }
        if handled.close {
            return Ok(());
        }
    }
}
