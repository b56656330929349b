//! # ringsteal-net
//!
//! TCP, UDP and Unix-domain sockets for the [ringsteal](https://github.com/ringsteal/ringsteal)
//! runtime, re-exported as `ringsteal::net`. Names and behaviour follow `tokio::net`; the
//! difference is the buffers: every read and write takes an owned buffer and gives it back
//! with the result, because the kernel fills or sends it after the call returned.
//!
//! Every I/O call is one io_uring request on the shard that polls it: `SOCKET` for a
//! connecting stream (a plain `socket(2)` where the kernel lacks the opcode, before Linux
//! 5.19), `CONNECT`, `ACCEPT`, `RECV`, `SEND` (always with `MSG_NOSIGNAL`),
//! `RECVMSG`/`SENDMSG`, `SHUTDOWN`.
//! There are no readiness loops. Two exceptions, where the socket can most likely serve the
//! call at once: a stream write that follows another write of the same stream (no read in
//! between), or starts a run of writes on a stream whose last run had more than one,
//! first offers its bytes with one non-blocking `send(2)`, and only what the socket does
//! not take at once goes as a `SEND`, so a run of writes reaches the peer back to back;
//! and a stream read made when the kernel said the socket still had bytes queued after the
//! last read (`IORING_CQE_F_SOCK_NONEMPTY`) takes them with one non-blocking `recv(2)`, and
//! goes as a `RECV` only if it finds none. Creating listeners and datagram sockets, setting
//! options, binding and listening are plain system calls (they never block); host names are
//! resolved on the blocking pool.
//!
//! Streams of completions need no request per item: a listener's [`incoming`](TcpListener::incoming)
//! connections (one multishot accept), a stream's [`recv_stream`](TcpStream::recv_stream)
//! (one multishot receive into the shard's provided buffers, [`RecvBuf`]) and a datagram
//! socket's [`recv_stream`](UdpSocket::recv_stream) ([`Datagram`]s). Large writes can skip
//! the copy into the socket: [`write_all_zc`](TcpStream::write_all_zc) (from
//! [`SEND_ZC_MIN`] bytes). A `spawn` right after an accept deals the new task to the shards
//! in turn, so the server below uses every shard (ADR-0009).
//!
//! ```
//! use ringsteal_net::{TcpListener, TcpStream};
//!
//! let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
//! rt.block_on(async {
//!     let listener = TcpListener::bind("127.0.0.1:0").await?;
//!     let addr = listener.local_addr()?;
//!     // An echo server: one task per connection.
//!     ringsteal_rt::spawn(async move {
//!         let mut incoming = listener.incoming();
//!         // A failed accept is that accept's (out of descriptors: the stream pauses before
//!         // it tries again); an error of the listener ends the stream.
//!         while let Some(conn) = incoming.next().await {
//!             let Ok(stream) = conn else { continue };
//!             ringsteal_rt::spawn(async move {
//!                 let mut buf = Vec::with_capacity(4096);
//!                 loop {
//!                     let (res, b) = stream.read(buf).await;
//!                     match res {
//!                         Ok(0) | Err(_) => break,
//!                         Ok(_) => {}
//!                     }
//!                     let (res, mut b) = stream.write_all(b).await;
//!                     if res.is_err() {
//!                         break;
//!                     }
//!                     b.clear();
//!                     buf = b;
//!                 }
//!             });
//!         }
//!     });
//!     let client = TcpStream::connect(addr).await?;
//!     client.write_all(b"ring".to_vec()).await.0?;
//!     let (res, echo) = client.read_exact(vec![0; 4]).await;
//!     res?;
//!     assert_eq!(echo, b"ring");
//!     Ok::<(), std::io::Error>(())
//! })
//! .unwrap();
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]

#[macro_use]
mod stream_api;
#[macro_use]
mod datagram_api;

mod datagram_poll;
#[cfg(feature = "stream")]
mod futures_stream;
mod incoming;
mod inline;
mod into_std;
mod kept_accept;
mod kept_datagrams;
mod listener_fd;
mod polled_accept;
#[cfg(feature = "bytes")]
mod recv_buf;
mod recv_stream;
mod resolve;
mod sockopt;
mod stream;
pub mod tcp;
mod udp;
pub mod unix;

pub use incoming::Incoming;
pub use into_std::IntoStdError;
pub use recv_stream::RecvStream;
pub use resolve::{lookup_host, ToSocketAddrs};
pub use ringsteal_rt::buf::RecvBuf;
pub use ringsteal_rt::op::{Datagram, RecvMsgStream, ACCEPT_AHEAD};
pub use stream::SEND_ZC_MIN;
pub use tcp::{TcpListener, TcpSocket, TcpStream};
pub use udp::UdpSocket;
pub use unix::{UnixDatagram, UnixListener, UnixStream};
