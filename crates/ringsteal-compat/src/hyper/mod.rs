//! hyper 1.x on ringsteal (feature `hyper`): the runtime pieces hyper asks its user for.
//!
//! * [`Executor`] spawns the tasks hyper makes (HTTP/2 streams, hyper-util's client pool) as
//!   ringsteal tasks; they must be `Send`, as hyper-util's client and `auto` server require.
//!   [`LocalExecutor`] spawns `!Send` futures on the current shard.
//! * [`Timer`] gives hyper ringsteal timers: its [`Sleep`] is `Send + Sync` (it can be
//!   polled on any shard, reset and dropped from any thread; polled before its deadline on
//!   a thread that runs no shard it panics, as every ringsteal timer does) and `reset`
//!   moves the timer in place.
//! * [`Io`] is [`PollIo`](crate::PollIo): `hyper::rt::Read` and `Write` over a ringsteal
//!   stream, implemented directly on io_uring readiness.
//! * `HttpConnector` (feature `hyper-client`) connects hyper-util's legacy `Client` over
//!   ringsteal TCP, in place of hyper-util's tokio one; [`Io`] and `TokioIo` are
//!   hyper-util's `Connection` there, so a connector of your own can yield them too.
//! * `TokioIo` (with the feature `tokio-io` too) gives hyper any stream with tokio's I/O
//!   traits (a TLS stream: tokio-rustls over a `PollIo`), and tokio's traits to a
//!   connection hyper upgraded (a WebSocket's), as hyper-util's `TokioIo` does.
//!
//! **Always give hyper a timer.** Without one, hyper ignores `header_read_timeout` (HTTP/1)
//! and keep-alive timeouts (HTTP/2), or panics when they are set; every example here sets
//! `.timer(Timer::new())`.
//!
//! ```
//! use http_body_util::Full;
//! use hyper::body::Bytes;
//! use hyper::server::conn::http1;
//! use hyper::service::service_fn;
//! use ringsteal_compat::hyper::{Io, Timer};
//! use ringsteal_net::{TcpListener, TcpStream};
//!
//! let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
//! rt.block_on(async {
//!     let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
//!     let addr = listener.local_addr().unwrap();
//!     ringsteal_rt::spawn(async move {
//!         let (stream, _) = listener.accept().await.unwrap();
//!         let service = service_fn(|_req| async {
//!             Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(Bytes::from("hello"))))
//!         });
//!         http1::Builder::new()
//!             .timer(Timer::new())
//!             .header_read_timeout(std::time::Duration::from_secs(5))
//!             .serve_connection(Io::new(stream), service)
//!             .await
//!             .unwrap();
//!     });
//!     let stream = TcpStream::connect(addr).await.unwrap();
//!     let (mut sender, conn) = hyper::client::conn::http1::handshake(Io::new(stream)).await.unwrap();
//!     ringsteal_rt::spawn(conn);
//!     let req = hyper::Request::get("/").header("host", "localhost").body(http_body_util::Empty::<Bytes>::new()).unwrap();
//!     let res = sender.send_request(req).await.unwrap();
//!     assert_eq!(res.status(), 200);
//! });
//! ```

#[cfg(feature = "hyper-client")]
mod connect_addrs;
#[cfg(feature = "hyper-client")]
mod connector;
mod executor;
mod io;
mod timer;
#[cfg(feature = "tokio-io")]
mod tokio_io;

#[cfg(feature = "hyper-client")]
pub use connector::HttpConnector;
pub use executor::{Executor, LocalExecutor};
pub use timer::{Sleep, Timer};
#[cfg(feature = "tokio-io")]
pub use tokio_io::TokioIo;

/// A ringsteal stream as hyper I/O (`hyper::rt::Read + Write`); the name hyper-util users
/// know as `TokioIo`. It is [`PollIo`](crate::PollIo).
pub type Io<S> = crate::PollIo<S>;
