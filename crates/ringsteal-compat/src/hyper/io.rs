//! `hyper::rt::Read` and `hyper::rt::Write` for [`PollIo`], straight over the readiness
//! path (not through the tokio traits).
//!
//! May not: hold state; every method forwards to `PollIo`.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use hyper::rt::ReadBufCursor;

use crate::PollIo;

impl<S> hyper::rt::Read for PollIo<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        // SAFETY: the read writes only initialised bytes into the cursor's slice, never
        // de-initialising any (ReadBufCursor::as_mut's contract).
        let dst = unsafe { buf.as_mut() };
        let n = ready!(self.get_mut().poll_read_uninit(cx, dst))?;
        // SAFETY: the read initialised the first n bytes of the slice.
        unsafe { buf.advance(n) };
        Poll::Ready(Ok(()))
    }
}

impl<S> hyper::rt::Write for PollIo<S> {
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

    /// True: headers and body go out in one `sendmsg`, not copied into one buffer first.
    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_flush(cx)
    }

    /// Sends the FIN after every earlier write.
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_shutdown(cx)
    }
}
