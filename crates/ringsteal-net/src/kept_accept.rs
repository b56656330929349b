//! Cancel-safe `accept()`: a connection the kernel accepted for an accept whose future was
//! dropped (the `select!` branch not taken, the `timeout` that fired first), or for a dropped
//! [`Incoming`](crate::Incoming) that nobody took, is kept for the listener's next accept,
//! or its next `Incoming`, instead of being closed: tokio's `accept` loses no connection
//! that way either.
//!
//! The request's output is built at its last completion even when its future is gone (the
//! runtime calls `Operation::complete` for that too, and drops the output): dropped without
//! having been taken, the output puts its connection into [`Kept`].
//!
//! Owns: the kept connections and the accept request that fills them.
//! May not: hold the listener's handle: a dropped listener must stop listening at once
//! (ADR-0010), not when an abandoned accept completes.

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ringsteal_rt::op::{Accept, Op, Operation, SharedFd, SockAddr, Sqes};

/// Connections accepted for abandoned accepts of one listener, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    /// How many are queued: the common case, none, costs a load and no lock.
    count: AtomicUsize,
    conns: Mutex<VecDeque<(OwnedFd, SockAddr)>>,
}

impl Kept {
    /// The queue; no code panics while holding it, so a poisoned lock is still sound.
    fn conns(&self) -> MutexGuard<'_, VecDeque<(OwnedFd, SockAddr)>> {
        self.conns.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The oldest kept connection, if any.
    pub(crate) fn take(&self) -> Option<(OwnedFd, SockAddr)> {
        if self.count.load(Ordering::Acquire) == 0 {
            return None;
        }
        let conn = self.conns().pop_front();
        if conn.is_some() {
            self.count.fetch_sub(1, Ordering::Release);
        }
        conn
    }

    fn keep(&self, conn: (OwnedFd, SockAddr)) {
        self.conns().push_back(conn);
        self.count.fetch_add(1, Ordering::Release);
    }

    /// Keeps a connection a dropped `Incoming` accepted (no address came with it: the peer's
    /// is asked for now; a peer already gone leaves it empty, and the `accept()` that takes
    /// it asks again, as it does for any address it cannot read).
    pub(crate) fn keep_accepted(&self, conn: OwnedFd) {
        let peer = SockAddr::peer_of(conn.as_fd()).unwrap_or_else(|_| SockAddr::empty());
        self.keep((conn, peer));
    }
}

/// One connection from the listener `fd`: a kept one first, else a new accept request whose
/// connection, if its future is dropped after the kernel accepted, goes to `kept`.
pub(crate) async fn accept(fd: &SharedFd, kept: &Arc<Kept>) -> io::Result<(OwnedFd, SockAddr)> {
    if let Some(conn) = kept.take() {
        return Ok(conn);
    }
    let op = Op::new(KeepingAccept {
        accept: Accept::new(fd),
        kept: kept.clone(),
    });
    op.await.take()
}

/// An accept whose output keeps its connection if nobody takes it.
#[derive(Debug)]
struct KeepingAccept {
    accept: Accept,
    kept: Arc<Kept>,
}

// SAFETY: forwards to `Accept`, whose SQE points into the `Accept` held here (the op's data
// stays at its address while the request is in flight, as for any op).
unsafe impl Operation for KeepingAccept {
    type Output = Accepted;

    fn prepare(&mut self) -> Sqes {
        self.accept.prepare()
    }

    fn complete(self, results: &[(i32, u32)]) -> Accepted {
        Accepted {
            conn: Some(self.accept.complete(results)),
            kept: self.kept,
        }
    }

    fn fail(self, err: io::Error) -> Accepted {
        Accepted {
            conn: Some(Err(err)),
            kept: self.kept,
        }
    }
}

/// An accept's result; dropped without [`take`](Self::take) (its future was dropped), a
/// connection in it is kept for the listener's next accept.
#[derive(Debug)]
struct Accepted {
    conn: Option<io::Result<(OwnedFd, SockAddr)>>,
    kept: Arc<Kept>,
}

impl Accepted {
    fn take(mut self) -> io::Result<(OwnedFd, SockAddr)> {
        self.conn.take().expect("taken once")
    }
}

impl Drop for Accepted {
    fn drop(&mut self) {
        if let Some(Ok(conn)) = self.conn.take() {
            self.kept.keep(conn);
        }
    }
}
