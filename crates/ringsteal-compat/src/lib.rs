//! # ringsteal-compat
//!
//! Poll-based I/O for the [ringsteal](https://github.com/ringsteal/ringsteal) runtime, so that
//! crates written against `futures-io`, `tokio::io` or hyper 1.x run on it unchanged;
//! re-exported as `ringsteal::io::compat` and `ringsteal::hyper`.
//!
//! [`PollIo`] wraps a ringsteal stream (TCP, Unix, their owned halves) and implements, each
//! behind its feature:
//!
//! * `futures_io::AsyncRead` / `AsyncWrite` (feature `futures-io`),
//! * `tokio::io::AsyncRead` / `AsyncWrite` (feature `tokio-io`: the traits only; tokio is
//!   built with no features, so no runtime, reactor or timer exists),
//! * `hyper::rt::Read` / `Write` (feature `hyper`), directly, not through the tokio traits,
//!   with hyper's [`Executor`](hyper::Executor)s and [`Timer`](hyper::Timer) in [`hyper`].
//!
//! Reads and writes go straight between the socket and the caller's buffer with
//! non-blocking system calls, after io_uring reported the socket ready (a `POLL_ADD` on the
//! shard's ring): no copy through an owned buffer, `poll_write` counts only bytes the kernel
//! took, and a call left `Pending` holds nothing (ADR-0014; the mechanism is
//! `ringsteal_rt::io::PollStream`).
//!
//! ```
//! # #[cfg(feature = "tokio-io")] {
//! use ringsteal_compat::PollIo;
//! use ringsteal_net::{TcpListener, TcpStream};
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
//! rt.block_on(async {
//!     let listener = TcpListener::bind("127.0.0.1:0").await?;
//!     let addr = listener.local_addr()?;
//!     let server = ringsteal_rt::spawn(async move {
//!         let (stream, _) = listener.accept().await?;
//!         let mut io = PollIo::new(stream);
//!         let mut buf = [0u8; 5];
//!         io.read_exact(&mut buf).await?;
//!         io.write_all(&buf).await?;
//!         io.shutdown().await // sends the FIN
//!     });
//!     let mut client = PollIo::new(TcpStream::connect(addr).await?);
//!     client.write_all(b"hello").await?;
//!     let mut echo = Vec::new();
//!     client.read_to_end(&mut echo).await?;
//!     assert_eq!(echo, b"hello");
//!     server.await.unwrap()
//! })
//! .unwrap();
//! # }
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

#[cfg(feature = "futures-io")]
mod futures_io;
#[cfg(feature = "hyper")]
pub mod hyper;
mod poll_io;
#[cfg(feature = "tokio-io")]
mod tokio_io;

pub use poll_io::PollIo;
