//! [`PollIo`]: a ringsteal stream with poll-based reads and writes; the trait impls are in
//! `futures_io.rs`, `tokio_io.rs` and `hyper/io.rs`.
//!
//! May not: touch the descriptor itself (`ringsteal_rt::io::PollStream` does).

use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::task::{Context, Poll};

use ringsteal_rt::io::{PollSource, PollStream};

/// A ringsteal stream (TCP, Unix, an owned half) read and written through poll-based traits:
/// `futures_io`'s, `tokio::io`'s and `hyper::rt`'s, each behind its feature.
///
/// Bytes move between the socket and the caller's buffer with non-blocking system calls
/// after io_uring reports the socket ready; nothing is copied through an owned buffer, a
/// write returns only bytes the kernel took, and a call left `Pending` holds nothing.
/// Flushing has nothing to flush (it waits for an owned-buffer write in flight);
/// shutting down sends the FIN. A handle without a direction (a read half) fails calls of
/// the other with `Unsupported`.
///
/// The stream's owned-buffer methods stay usable: `get_ref().read(buf)` and the adapter
/// take turns on the stream's lanes, so bytes an abandoned owned-buffer read kept are read
/// first and no request overtakes another (ADR-0014).
///
/// ```
/// use ringsteal_compat::PollIo;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = ringsteal_net::UnixStream::pair().unwrap();
///     let mut a = PollIo::new(a);
///     let n = std::future::poll_fn(|cx| a.poll_write(cx, b"hi")).await.unwrap();
///     assert_eq!(n, 2);
///     // The owned-buffer API of the other end reads what the adapter wrote.
///     let (res, buf) = b.read(Vec::with_capacity(8)).await;
///     assert_eq!(&buf[..res.unwrap()], b"hi");
///     let b = a.into_inner();
///     drop(b);
/// });
/// ```
pub struct PollIo<S> {
    io: PollStream,
    inner: S,
}

impl<S: PollSource> PollIo<S> {
    /// Wraps `stream`.
    pub fn new(stream: S) -> Self {
        Self {
            io: PollStream::new(stream.poll_parts()),
            inner: stream,
        }
    }
}

impl<S> PollIo<S> {
    /// The stream, for its owned-buffer methods and options.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The stream, mutably. The adapter keeps the descriptor it was made with: a stream
    /// swapped in here is not the one it reads and writes (make a new `PollIo` for that).
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The stream back. Nothing is lost: the adapter holds no bytes of its own.
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// Reads into `dst` (possibly uninitialised); see `PollStream::poll_read`.
    pub fn poll_read_uninit(
        &mut self,
        cx: &mut Context<'_>,
        dst: &mut [MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>> {
        self.io.poll_read(cx, dst)
    }

    /// Reads into `dst`; the bytes received come first in it.
    pub fn poll_read(&mut self, cx: &mut Context<'_>, dst: &mut [u8]) -> Poll<io::Result<usize>> {
        // SAFETY: `[u8]` and `[MaybeUninit<u8>]` have the same layout, and the read only ever
        // writes initialised bytes into the slice (as `PollStream::poll_read` promises), so it
        // stays initialised.
        let dst = unsafe { &mut *(dst as *mut [u8] as *mut [MaybeUninit<u8>]) };
        self.io.poll_read(cx, dst)
    }

    /// Writes from `src`: the count of bytes the kernel took.
    pub fn poll_write(&mut self, cx: &mut Context<'_>, src: &[u8]) -> Poll<io::Result<usize>> {
        self.io.poll_write(cx, src)
    }

    /// Writes from `bufs` in order, with one `sendmsg`.
    pub fn poll_write_vectored(
        &mut self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.io.poll_write_vectored(cx, bufs)
    }

    /// Ready once no owned-buffer write of the stream is in flight.
    pub fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_flush(cx)
    }

    /// Sends the FIN after every earlier write.
    pub fn poll_shutdown(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_shutdown(cx)
    }
}

// The stream is never pinned through the adapter (no method hands out `Pin<&mut S>`), so
// moving the adapter never moves a pinned value.
impl<S> Unpin for PollIo<S> {}

impl<S: std::fmt::Debug> std::fmt::Debug for PollIo<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PollIo")
            .field("stream", &self.inner)
            .field("io", &self.io)
            .finish()
    }
}
