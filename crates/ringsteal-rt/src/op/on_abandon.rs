//! [`OnAbandon`]: an operation whose output, when its future was dropped before taking it,
//! goes to a sink instead of being dropped: the connection an abandoned accept made, the
//! datagram an abandoned receive took.
//!
//! The runtime builds an op's output at its last completion even when the future is gone
//! (it calls `Operation::complete` for that too) and drops it. The output here, a
//! [`Claimed`], hands what it holds to its [`Abandoned`] sink when it is dropped untaken.
//!
//! May not: know what the sink does with it.

use std::fmt;
use std::io;

use super::{Operation, Sqes};

/// Where the output of a request whose future was dropped goes.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use ringsteal_rt::buf::BufResult;
/// use ringsteal_rt::op::{Abandoned, OnAbandon, Op, RecvOp, SharedFd};
///
/// /// Keeps the bytes of receives whose futures were dropped.
/// struct KeepBytes(Arc<Mutex<Vec<u8>>>);
/// impl Abandoned<BufResult<usize, Vec<u8>>> for KeepBytes {
///     fn abandoned(self, (res, buf): BufResult<usize, Vec<u8>>) {
///         if let Ok(n) = res {
///             self.0.lock().unwrap().extend_from_slice(&buf[..n]);
///         }
///     }
/// }
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// let kept = Arc::new(Mutex::new(Vec::new()));
/// rt.block_on(async {
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let a = SharedFd::new(a.into());
///     std::io::Write::write_all(&mut &b, b"hi").unwrap();
///     let recv = RecvOp::new(&a, Vec::with_capacity(8), 0);
///     let (res, buf) = Op::new(OnAbandon::new(recv, KeepBytes(kept.clone())))
///         .await
///         .into_inner(); // taken: the sink gets nothing
///     assert_eq!(&buf[..res.unwrap()], b"hi");
/// });
/// assert!(kept.lock().unwrap().is_empty());
/// ```
pub trait Abandoned<O>: Send + 'static {
    /// Takes the output of a request whose future was dropped before taking it.
    fn abandoned(self, out: O);
}

/// An operation that hands its output to `sink` if its future is dropped before taking it.
/// Await it as an [`Op`](super::Op) and take the output with [`Claimed::into_inner`].
///
/// ```
/// use std::future::{poll_fn, Future};
/// use std::sync::mpsc;
/// use ringsteal_rt::buf::BufResult;
/// use ringsteal_rt::op::{Abandoned, OnAbandon, Op, RecvOp, SharedFd};
///
/// /// Sends the bytes of a dropped receive on a channel.
/// struct Forward(mpsc::Sender<Vec<u8>>);
/// impl Abandoned<BufResult<usize, Vec<u8>>> for Forward {
///     fn abandoned(self, (res, mut buf): BufResult<usize, Vec<u8>>) {
///         buf.truncate(res.unwrap_or(0));
///         let _ = self.0.send(buf);
///     }
/// }
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// let (tx, rx) = mpsc::channel();
/// rt.block_on(async {
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let a = SharedFd::new(a.into());
///     std::io::Write::write_all(&mut &b, b"late").unwrap();
///     // Polled once (the request goes to the kernel, where bytes wait), then dropped.
///     let mut recv = Op::new(OnAbandon::new(RecvOp::new(&a, Vec::with_capacity(8), 0), Forward(tx)));
///     poll_fn(|cx| { assert!(std::pin::Pin::new(&mut recv).poll(cx).is_pending()); std::task::Poll::Ready(()) }).await;
///     drop(recv);
///     // The runtime finishes the request and hands its output to the sink.
///     while rx.try_recv().map(|got| assert_eq!(got, b"late")).is_err() {
///         ringsteal_rt::yield_now().await;
///     }
/// });
/// ```
pub struct OnAbandon<T, A> {
    op: T,
    sink: A,
}

impl<T: Operation, A: Abandoned<T::Output>> OnAbandon<T, A> {
    /// `op`, whose output goes to `sink` if nobody takes it.
    pub fn new(op: T, sink: A) -> Self {
        Self { op, sink }
    }
}

impl<T: fmt::Debug, A> fmt::Debug for OnAbandon<T, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnAbandon").field("op", &self.op).finish()
    }
}

// SAFETY: forwards to the wrapped op, whose SQEs point only into itself, which stays inside
// this wrapper (so inside the op cell) until the runtime is done with it.
unsafe impl<T: Operation, A: Abandoned<T::Output>> Operation for OnAbandon<T, A> {
    type Output = Claimed<T::Output, A>;
    const TIMED_OUT_RESULT: i32 = T::TIMED_OUT_RESULT;
    const ZERO_COPY_SEND: bool = T::ZERO_COPY_SEND;
    const REPORTS_REQUEST_ENDS: bool = T::REPORTS_REQUEST_ENDS;

    fn prepare(&mut self) -> Sqes {
        self.op.prepare()
    }

    fn send_result_posted(&mut self) {
        self.op.send_result_posted();
    }

    fn request_ended(&mut self, index: usize, res: i32) {
        self.op.request_ended(index, res);
    }

    fn holds_paused_clock(&self) -> bool {
        self.op.holds_paused_clock()
    }

    fn complete(self, results: &[(i32, u32)]) -> Self::Output {
        Claimed {
            out: Some((self.op.complete(results), self.sink)),
        }
    }

    fn fail(self, err: io::Error) -> Self::Output {
        Claimed {
            out: Some((self.op.fail(err), self.sink)),
        }
    }
}

/// An [`OnAbandon`] op's output: take it with [`into_inner`](Self::into_inner); dropped
/// untaken (its future was gone), it goes to the sink. See [`Abandoned`] for an example of
/// taking it and [`OnAbandon`] for one of the sink getting it.
///
/// ```
/// use ringsteal_rt::op::{Abandoned, OnAbandon, Op, RecvOp, SharedFd};
///
/// struct Ignore;
/// impl<O> Abandoned<O> for Ignore {
///     fn abandoned(self, _: O) {}
/// }
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     std::io::Write::write_all(&mut &b, b"!").unwrap();
///     let a = SharedFd::new(a.into());
///     let claimed = Op::new(OnAbandon::new(RecvOp::new(&a, vec![0u8; 1], 0), Ignore)).await;
///     let (res, buf) = claimed.into_inner();
///     assert_eq!((res.unwrap(), buf), (1, b"!".to_vec()));
/// });
/// ```
pub struct Claimed<O, A: Abandoned<O>> {
    out: Option<(O, A)>,
}

impl<O, A: Abandoned<O>> Claimed<O, A> {
    /// The wrapped op's output (the sink is dropped unused).
    pub fn into_inner(mut self) -> O {
        self.out.take().expect("taken once").0
    }
}

impl<O, A: Abandoned<O>> Drop for Claimed<O, A> {
    fn drop(&mut self) {
        if let Some((out, sink)) = self.out.take() {
            sink.abandoned(out);
        }
    }
}

impl<O: fmt::Debug, A: Abandoned<O>> fmt::Debug for Claimed<O, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Claimed")
            .field("out", &self.out.as_ref().map(|(out, _)| out))
            .finish()
    }
}
