//! `poll_accept`: tokio's poll form of `accept`, for code that implements `Stream` or an
//! accept trait by hand. An io_uring accept is a request in flight, not a readiness check,
//! so between two calls the listener keeps the request a `poll_accept` made
//! ([`PolledAccept`]) and the next call polls it again.
//!
//! Nothing it accepts is stranded there: an `accept()` takes the kept request over (and
//! wakes the `poll_accept` caller, which makes a new one), and the request, dropped with
//! the listener, gives what it accepted to the kept queue (`kept_accept.rs`), for an
//! `Incoming` that outlives the listener. It takes connections kept by dropped accepts
//! first, as `accept()` does.
//!
//! Why so, and not readiness as tokio's: ADR-0043.
//!
//! Owns: the request between calls (a field of the listener, not of the handle an
//! `Incoming` shares, so that it goes with the listener). May not: hold a connection once
//! its result was returned.

use std::future::Future;
use std::io;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use ringsteal_rt::op::SockAddr;

use crate::kept_accept;
use crate::listener_fd::ListenerFd;

/// An accept request in flight, owned (it keeps its own descriptor and kept queue).
type AcceptRequest = Pin<Box<dyn Future<Output = io::Result<(OwnedFd, SockAddr)>> + Send>>;

/// The request a `poll_accept` left in flight, with the waker of its last call.
#[derive(Default)]
pub(crate) struct PolledAccept {
    slot: Mutex<Option<(AcceptRequest, Waker)>>,
    /// The slot may hold a request: `accept()` takes no lock while nobody uses the poll form.
    used: AtomicBool,
}

impl std::fmt::Debug for PolledAccept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolledAccept")
            .field("in_flight", &self.lock().is_some())
            .finish()
    }
}

impl PolledAccept {
    /// The slot. Poisoned, a request's poll panicked: that request is dropped (what it
    /// accepted goes to the kept queue), never polled again.
    fn lock(&self) -> MutexGuard<'_, Option<(AcceptRequest, Waker)>> {
        self.slot.lock().unwrap_or_else(|poisoned| {
            let mut slot = poisoned.into_inner();
            *slot = None;
            self.slot.clear_poison();
            slot
        })
    }

    /// `listener`'s `accept()`: the request a `poll_accept` left in flight if there is one
    /// (its caller is woken, so that it asks again with a request of its own), else the
    /// listener's own.
    pub(crate) async fn accept(&self, listener: &ListenerFd) -> io::Result<(OwnedFd, SockAddr)> {
        let left = if self.used.load(Ordering::Acquire) {
            self.lock().take()
        } else {
            None
        };
        match left {
            Some((request, waker)) => {
                waker.wake();
                request.await
            }
            None => listener.accept().await,
        }
    }

    /// `listener`'s `poll_accept`: polls the kept request, first making one (cancel-safe,
    /// as `accept()`) if there is none; only `cx`'s waker is woken when it completes
    /// (tokio's rule: the last caller's).
    pub(crate) fn poll(
        &self,
        listener: &ListenerFd,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<(OwnedFd, SockAddr)>> {
        let mut slot = self.lock();
        self.used.store(true, Ordering::Release);
        let (request, waker) = slot.get_or_insert_with(|| {
            let (fd, kept) = (listener.shared().clone(), listener.kept().clone());
            let request: AcceptRequest =
                Box::pin(async move { kept_accept::accept(&fd, &kept).await });
            (request, cx.waker().clone())
        });
        waker.clone_from(cx.waker());
        let accepted = request.as_mut().poll(cx);
        if accepted.is_ready() {
            *slot = None;
        }
        accepted
    }
}
