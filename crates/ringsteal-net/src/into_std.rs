//! [`IntoStdError`]: why a stream could not become a std stream yet, with the stream given
//! back inside the `io::Error` that `into_std` returns.
//!
//! Owns: the refused stream and the reason. May not: touch the descriptor.

use std::fmt;
use std::io;

/// The error inside the `io::Error` that [`TcpStream::into_std`](crate::TcpStream::into_std)
/// and [`UnixStream::into_std`](crate::UnixStream::into_std) return when the stream cannot
/// be handed over without losing bytes: a read or write is still in flight on it (one whose
/// future was dropped, until the shard has reaped its cancellation; or one of another task),
/// a [`RecvStream`](crate::RecvStream) of the stream has not ended (polled or not), or a
/// cancelled read left bytes that only this stream can return. The stream comes back whole:
/// read the kept bytes, drop the receive stream, or let the shard run (a cancellation is
/// reaped within a tick or two: `ringsteal::yield_now().await`) and try again.
///
/// ```
/// use std::future::{poll_fn, Future};
/// use std::task::Poll;
/// use ringsteal_net::{IntoStdError, UnixStream};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, _b) = UnixStream::pair().unwrap();
///     {
///         // A read that is submitted, then dropped: it is cancelled in the kernel, and
///         // the stream cannot change hands until the shard has reaped that.
///         let mut read = Box::pin(a.read(Vec::with_capacity(8)));
///         poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx).is_pending())).await;
///     }
///     let refused = a.into_std().unwrap_err();
///     let mut stream = IntoStdError::<UnixStream>::recover(refused).expect("given back");
///     let std_stream = loop {
///         ringsteal_rt::yield_now().await; // the shard reaps the cancellation
///         match stream.into_std() {
///             Ok(s) => break s,
///             Err(e) => stream = IntoStdError::recover(e).expect("given back"),
///         }
///     };
///     # drop(std_stream);
/// });
/// ```
pub struct IntoStdError<S> {
    stream: S,
    reason: &'static str,
}

impl<S> IntoStdError<S> {
    pub(crate) fn new(stream: S, reason: &'static str) -> Self {
        Self { stream, reason }
    }

    /// The stream, unchanged.
    pub fn into_stream(self) -> S {
        self.stream
    }
}

impl<S: Send + Sync + 'static> IntoStdError<S> {
    /// The stream inside `err` if `into_std` refused it (`err` holds an `IntoStdError<S>`);
    /// `err` itself otherwise.
    pub fn recover(err: io::Error) -> Result<S, io::Error> {
        if !err.get_ref().is_some_and(|e| e.is::<Self>()) {
            return Err(err);
        }
        let inner = err.into_inner().expect("checked: a custom error");
        Ok(inner
            .downcast::<Self>()
            .expect("checked: an IntoStdError<S>")
            .stream)
    }
}

impl<S> fmt::Debug for IntoStdError<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntoStdError")
            .field("reason", &self.reason)
            .finish_non_exhaustive()
    }
}

impl<S> fmt::Display for IntoStdError<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason)
    }
}

impl<S> std::error::Error for IntoStdError<S> {}

impl<S: Send + Sync + 'static> From<IntoStdError<S>> for io::Error {
    fn from(e: IntoStdError<S>) -> Self {
        io::Error::other(e)
    }
}
