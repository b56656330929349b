//! `tokio::io::AsyncRead` and `AsyncWrite` for [`PollIo`] (feature `tokio-io`): tokio's
//! traits only, built with no tokio features (no runtime, reactor or timer).
//!
//! May not: hold state; every method forwards to `PollIo`.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::ReadBuf;

use crate::PollIo;

impl<S> tokio::io::AsyncRead for PollIo<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        // SAFETY: the read writes only initialised bytes into the unfilled part, never
        // de-initialising any (ReadBuf::unfilled_mut's contract).
        let dst = unsafe { buf.unfilled_mut() };
        let n = ready!(self.get_mut().poll_read_uninit(cx, dst))?;
        // SAFETY: the read initialised the first n bytes of the unfilled part.
        unsafe { buf.assume_init(n) };
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl<S> tokio::io::AsyncWrite for PollIo<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_flush(cx)
    }

    /// Sends the FIN (`shutdown(SHUT_WR)`) after every earlier write.
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_shutdown(cx)
    }
}
