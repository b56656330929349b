//! [`Incoming`]: a listener's connections as a stream, from one multishot accept request
//! (`ringsteal_rt::op::accept_multishot`: re-armed whenever the kernel ends it, single-shot
//! accepts where the runtime has no multishot accept).
//!
//! Every connection it yields marks the polling task's next default `spawn` to be dealt to
//! the shards in turn (`ringsteal_rt::spread_next_spawn`, ADR-0009), as `accept` does.
//!
//! May not: decide the accept policy (errors, back-off, re-arming: the op layer's).

use std::fmt;
use std::io;
use std::os::fd::OwnedFd;
use std::task::{Context, Poll};

use ringsteal_rt::op;

use crate::kept_accept::WaitSlot;
use crate::listener_fd::ListenerHandle;

/// The connections of a [`TcpListener`](crate::TcpListener) or
/// [`UnixListener`](crate::UnixListener), from [`incoming`](crate::TcpListener::incoming): one
/// multishot `IORING_OP_ACCEPT` takes every connection the kernel queues, and is re-armed
/// whenever the kernel ends it. It accepts ahead: while the stream lives, polled or not,
/// the connections that arrive are accepted and held (a descriptor each) until polled, up
/// to [`ACCEPT_AHEAD`](crate::ACCEPT_AHEAD) (64). There it pauses (the request is
/// cancelled), later clients wait in the kernel's accept queue, and the next poll that
/// finds it drained arms it again. (The bound is soft: until the cancel lands, at the
/// shard's next tick, the kernel may take what arrives, a burst that its backlog held
/// included.) A server that must hold no connection beyond its limit loops on `accept()`
/// instead.
///
/// Each item is a connection or an error. Running out of descriptors (`EMFILE`, `ENFILE`) or
/// memory is yielded as the error and the stream goes on, retrying after a pause that grows
/// from 5 ms to 1 s (reset by the next connection), since nothing signals when descriptors
/// free up; errors of one connection (`ECONNABORTED`) are yielded and the stream goes on;
/// an error that says the socket cannot accept ends it (`None` next). Dropping the stream
/// cancels the request; the connections the kernel accepted for it that nobody took go to
/// the listener's next `accept()` (or `Incoming`), as a dropped `accept()`'s does
/// (ADR-0028): closed only with the listener, never leaked.
/// The stream keeps the socket listening after its listener is dropped; once both are gone
/// the socket stops listening at once (its address can be bound again), even while the
/// cancelled request still holds the descriptor.
///
/// A task that takes a connection from it and then `spawn`s (default placement) in the same
/// poll has the spawned task dealt to the shards in turn, so the connections of the obvious
/// accept loop use every shard (ADR-0009). `poll_next` has the signature of
/// `futures::Stream::poll_next`, so a one-line adapter makes it a `Stream`.
///
/// ```
/// use ringsteal_net::{TcpListener, TcpStream};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let addr = listener.local_addr()?;
///     let server = ringsteal_rt::spawn(async move {
///         let mut incoming = listener.incoming();
///         let mut served = Vec::new();
///         while let Some(conn) = incoming.next().await {
///             let stream = conn?;
///             // Dealt to shard 0, then 1, then 0 ...
///             served.push(ringsteal_rt::spawn(async move {
///                 stream.write_all(b"hi".to_vec()).await.0.map(|()| ringsteal_rt::current_shard())
///             }));
///             if served.len() == 2 {
///                 break;
///             }
///         }
///         let mut shards = Vec::new();
///         for s in served {
///             shards.push(s.await.unwrap()?.unwrap());
///         }
///         Ok::<_, std::io::Error>(shards)
///     });
///     for _ in 0..2 {
///         let c = TcpStream::connect(addr).await?;
///         let (res, hi) = c.read_exact(vec![0; 2]).await;
///         res?;
///         assert_eq!(hi, b"hi");
///     }
///     let mut shards = server.await.unwrap()?;
///     shards.sort();
///     assert_eq!(shards, [0, 1]);
///     Ok::<(), std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct Incoming<S> {
    // Dropped first: the accept is cancelled before `listener` may stop the socket.
    accepts: op::AcceptStream,
    make: fn(OwnedFd) -> S,
    /// Keeps the socket listening after its listener is dropped.
    listener: ListenerHandle,
    /// Its place among the waiters for a kept connection.
    kept_slot: WaitSlot,
}

impl<S> Incoming<S> {
    pub(crate) fn new(listener: &ListenerHandle, make: fn(OwnedFd) -> S) -> Self {
        Self {
            accepts: op::accept_multishot(listener.shared()),
            make,
            listener: listener.clone(),
            kept_slot: WaitSlot::default(),
        }
    }

    /// The next connection (or error); `None` once the listener cannot accept any more.
    /// The request is submitted on the first poll, on the polling shard's ring.
    ///
    /// ```
    /// use std::task::Poll;
    /// use ringsteal_net::{TcpListener, TcpStream};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut incoming = listener.incoming();
    ///     // Nobody has connected: the first poll arms the accept and is pending.
    ///     let first = std::future::poll_fn(|cx| Poll::Ready(incoming.poll_next(cx).is_pending()));
    ///     assert!(first.await);
    ///     let _client = TcpStream::connect(listener.local_addr()?).await?;
    ///     let conn = std::future::poll_fn(|cx| incoming.poll_next(cx)).await;
    ///     assert!(conn.unwrap().is_ok());
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<S>>> {
        // First a connection an abandoned `accept()` (or `Incoming`) of the listener kept
        // (no lock while there is none).
        let kept = self.listener.kept();
        let fd = match kept.take() {
            Some((fd, _)) => fd,
            None => match self.accepts.poll_next(cx) {
                Poll::Ready(Some(Ok(fd))) => fd,
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(None) => return Poll::Ready(None),
                // Waiting on the kernel: an abandoned request may still hand one over.
                Poll::Pending => match kept.poll_take(&mut self.kept_slot, cx) {
                    Poll::Ready((fd, _)) => fd,
                    Poll::Pending => return Poll::Pending,
                },
            },
        };
        ringsteal_rt::spread_next_spawn();
        Poll::Ready(Some(Ok((self.make)(fd))))
    }

    /// The next connection (or error); `None` once the listener cannot accept any more.
    pub async fn next(&mut self) -> Option<io::Result<S>> {
        std::future::poll_fn(|cx| self.poll_next(cx)).await
    }

    /// Accept requests submitted so far: 1 while the kernel keeps one multishot accept
    /// armed; one per connection where the runtime has no multishot accept.
    pub fn requests_submitted(&self) -> u64 {
        self.accepts.requests_submitted()
    }
}

impl<S> Drop for Incoming<S> {
    /// Cancels the request; the connections it accepted that nobody took go to the
    /// listener's next `accept()` (or `Incoming`), as an abandoned `accept()`'s do
    /// (ADR-0028), rather than being closed.
    fn drop(&mut self) {
        // An unarmed stream in its place: dropping it does nothing.
        let accepts = std::mem::replace(
            &mut self.accepts,
            op::accept_multishot(self.listener.shared()),
        );
        // The kept queue, not the listener's handle: a dropped listener stops listening at
        // once, not when this request's cancel completes (ADR-0010).
        let kept = self.listener.kept().clone();
        kept.stop_waiting(&mut self.kept_slot);
        accepts.abandon_into(move |conn| kept.keep_accepted(conn));
    }
}

impl<S> fmt::Debug for Incoming<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Incoming")
            .field("accepts", &self.accepts)
            .finish()
    }
}
