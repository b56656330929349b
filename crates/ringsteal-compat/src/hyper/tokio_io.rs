//! [`TokioIo`]: hyper's I/O traits over anything with tokio's (features `hyper` and
//! `tokio-io`), for the streams that are not ringsteal's own: a TLS stream from
//! tokio-rustls or tokio-native-tls over a [`PollIo`](crate::PollIo), a compression or
//! framing layer. A plain ringsteal stream goes straight to hyper as [`Io`](super::Io). And
//! the other way, tokio's traits over hyper's: a connection hyper upgraded (a WebSocket's
//! `hyper::upgrade::Upgraded`) for tokio-tungstenite, as hyper-util's `TokioIo` does both.
//!
//! May not: hold state; every method forwards to the wrapped stream.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use hyper::rt::ReadBufCursor;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// hyper I/O (`hyper::rt::Read + Write`) over a stream with tokio's `AsyncRead` and
/// `AsyncWrite`, and tokio's traits over a stream with hyper's (an upgraded connection), as
/// hyper-util's `TokioIo` (which its `tokio` feature brings, with tokio's runtime pieces that
/// ringsteal leaves out). The stream must be `Unpin` (`Box::pin` one that is not).
///
/// ```
/// use ringsteal_compat::hyper::{Timer, TokioIo};
/// use ringsteal_compat::PollIo;
/// use ringsteal_net::{TcpListener, TcpStream};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
///     let addr = listener.local_addr().unwrap();
///     ringsteal_rt::spawn(async move {
///         let (stream, _) = listener.accept().await.unwrap();
///         // A TLS acceptor's stream would go here: `TokioIo::new(tls_stream)`.
///         let io = TokioIo::new(PollIo::new(stream));
///         let service = hyper::service::service_fn(|_req| async {
///             let body = http_body_util::Full::new(hyper::body::Bytes::from("hi"));
///             Ok::<_, std::convert::Infallible>(hyper::Response::new(body))
///         });
///         hyper::server::conn::http1::Builder::new()
///             .timer(Timer::new())
///             .serve_connection(io, service)
///             .await
///             .unwrap();
///     });
///     let io = TokioIo::new(PollIo::new(TcpStream::connect(addr).await.unwrap()));
///     let (mut sender, conn) = hyper::client::conn::http1::handshake(io).await.unwrap();
///     ringsteal_rt::spawn(conn);
///     let req = hyper::Request::get("/")
///         .header("host", "localhost")
///         .body(http_body_util::Empty::<hyper::body::Bytes>::new())
///         .unwrap();
///     assert_eq!(sender.send_request(req).await.unwrap().status(), 200);
/// });
/// ```
#[derive(Debug)]
pub struct TokioIo<T> {
    inner: T,
}

impl<T> TokioIo<T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> Self {
        Self { inner }
    }

    /// The wrapped stream.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    /// The wrapped stream, mutably.
    pub fn inner_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    /// Gives the wrapped stream back.
    pub fn into_inner(self) -> T {
        self.inner
    }
}

impl<T: AsyncRead + Unpin> hyper::rt::Read for TokioIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        // SAFETY: tokio's `ReadBuf` over the cursor's slice never de-initialises a byte
        // (ReadBufCursor::as_mut's contract): it only records what the read filled.
        let dst = unsafe { buf.as_mut() };
        let (start, room) = (dst.as_ptr().cast::<u8>(), dst.len());
        let mut tokio_buf = ReadBuf::uninit(dst);
        ready!(Pin::new(&mut self.get_mut().inner).poll_read(cx, &mut tokio_buf))?;
        // A reader may replace the `ReadBuf` it was lent (safe code can): then its count
        // says nothing about the cursor's bytes, and the read is an error (not a panic:
        // the connection fails, the program goes on).
        let filled = tokio_buf.filled();
        if filled.as_ptr() != start || filled.len() > room {
            return Poll::Ready(Err(io::Error::other(
                "the AsyncRead replaced the ReadBuf it was given",
            )));
        }
        let n = filled.len();
        // SAFETY: checked just above: the count is of this slice's first bytes, which
        // `ReadBuf` counts as filled only once written (initialised).
        unsafe { buf.advance(n) };
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> hyper::rt::Write for TokioIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// tokio's `AsyncRead` over hyper's `Read`: for a connection hyper upgraded.
impl<T: hyper::rt::Read + Unpin> AsyncRead for TokioIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        // SAFETY: hyper's `ReadBuf` over the unfilled part never de-initialises a byte
        // (ReadBuf::unfilled_mut's contract): it only records what the read filled.
        let unfilled = unsafe { buf.unfilled_mut() };
        let (start, room) = (unfilled.as_ptr().cast::<u8>(), unfilled.len());
        let mut hyper_buf = hyper::rt::ReadBuf::uninit(unfilled);
        ready!(Pin::new(&mut self.get_mut().inner).poll_read(cx, hyper_buf.unfilled()))?;
        let filled = hyper_buf.filled();
        assert!(
            filled.as_ptr() == start && filled.len() <= room,
            "the hyper Read filled some other buffer"
        );
        let n = filled.len();
        // SAFETY: the first n bytes of the unfilled part were written (hyper's `ReadBuf`
        // counts only those), and n does not pass its end.
        unsafe { buf.assume_init(n) };
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

/// tokio's `AsyncWrite` over hyper's `Write`: for a connection hyper upgraded.
impl<T: hyper::rt::Write + Unpin> AsyncWrite for TokioIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        hyper::rt::Write::poll_write(Pin::new(&mut self.get_mut().inner), cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        hyper::rt::Write::poll_write_vectored(Pin::new(&mut self.get_mut().inner), cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        hyper::rt::Write::is_write_vectored(&self.inner)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        hyper::rt::Write::poll_flush(Pin::new(&mut self.get_mut().inner), cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        hyper::rt::Write::poll_shutdown(Pin::new(&mut self.get_mut().inner), cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that swaps the `ReadBuf` it was lent for one of its own (safe code can).
    struct Swapper;

    impl AsyncRead for Swapper {
        fn poll_read(
            self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            // Leaked: a `ReadBuf` put in the caller's place must outlive the call. Four
            // bytes, once, in a test.
            let own: &'static mut [u8] = Box::leak(vec![7u8; 4].into_boxed_slice());
            *buf = ReadBuf::new(own);
            buf.advance(4);
            Poll::Ready(Ok(()))
        }
    }

    #[test]
    fn a_reader_that_swaps_the_read_buf_fails_the_read_instead_of_panicking() {
        let mut io = TokioIo::new(Swapper);
        let mut storage = [0u8; 16];
        let mut buf = hyper::rt::ReadBuf::new(&mut storage);
        let waker = std::task::Waker::from(std::sync::Arc::new(NoWake));
        let mut cx = Context::from_waker(&waker);
        match hyper::rt::Read::poll_read(Pin::new(&mut io), &mut cx, buf.unfilled()) {
            Poll::Ready(Err(e)) => assert!(e.to_string().contains("replaced"), "{e}"),
            other => panic!("expected an error, got {other:?}"),
        }
        assert!(buf.filled().is_empty(), "nothing counted as read");
    }

    struct NoWake;

    impl std::task::Wake for NoWake {
        fn wake(self: std::sync::Arc<Self>) {}
    }
}
