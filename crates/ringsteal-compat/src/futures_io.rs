//! `futures_io::AsyncRead` and `AsyncWrite` for [`PollIo`] (feature `futures-io`).
//!
//! May not: hold state; every method forwards to `PollIo`.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::PollIo;

impl<S> futures_io::AsyncRead for PollIo<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().poll_read(cx, buf)
    }
}

impl<S> futures_io::AsyncWrite for PollIo<S> {
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

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_flush(cx)
    }

    /// Sends the FIN (`shutdown(SHUT_WR)`); the descriptor stays open until the value drops.
    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_shutdown(cx)
    }
}
