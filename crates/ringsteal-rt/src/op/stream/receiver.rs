//! [`Receiver`]: the policy the receive streams share (`recv.rs`, `recvmsg.rs`): one request
//! in flight at a time; a request the kernel ended with data is re-armed at the next poll;
//! end of file and errors end the stream.
//!
//! A request that ran out of provided buffers (`ENOBUFS`) leaves the stream *short of
//! buffers*: it re-arms its multishot request once half of the group is free again (at once,
//! if it is next polled on another shard, which selects from its own group). Until then, a
//! poll waits for two things at once, whichever comes first: half the group free (a waiter on
//! the group), or the socket readable (a one-shot poll request, no buffer). If data comes
//! first, the stream takes it with one single-shot receive into a heap buffer and yields it,
//! so a consumer that holds the group's buffers until it gets more data still gets it (it
//! would otherwise wait for itself), and one stream whose consumer holds buffers cannot stall
//! every other stream of the shard. A stream that is only waiting pins no memory: the heap
//! buffer exists only while data is there to be received.
//!
//! No data is lost or reordered across a re-arm: the kernel ends a multishot receive
//! between two receives (what was not received stays in the socket), the results of one
//! request are delivered in CQE order, and the next request is submitted only after the
//! previous one's last CQE was taken.
//!
//! May not: know a family's SQE or item layout (its [`ReceiveSource`] does).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::cell::Source;
use super::queue::Sink;
use super::{not_on_shard, recv_group, Multishot, Polled};
use crate::buf::provided::{BufGroup, WaiterKey};
use crate::op::{poll_readable, Op, PollReadable, SharedFd};
use crate::shard::{context, Shard};

/// What a receive completion means for its stream.
pub(crate) enum Event<T> {
    Data(T),
    Eof,
    /// The shard's provided buffers ran out (the request ended).
    NoBuffers,
    Failed(io::Error),
}

/// A receive family's request data.
pub(crate) trait ReceiveSource: Source {
    /// What the stream yields.
    type Out;
    /// The request for the next arming on `shard`.
    fn for_shard(fd: SharedFd, shard: &Shard) -> Self;
    /// A single-shot request into a heap buffer, for a stream short of provided buffers
    /// whose socket has data: the fallback's form, with the room a provided buffer of the
    /// shard's group gives (for datagrams, less than the fallback's).
    fn heap(fd: SharedFd, shard: &Shard) -> Self;
    /// What a completion means.
    fn event(item: Self::Item) -> Event<Self::Out>;
    /// The buffer group the request selected from, if any.
    fn group(self) -> Option<Arc<BufGroup>>;
}

/// A receive stream's state.
pub(crate) struct Receiver<S: ReceiveSource> {
    fd: SharedFd,
    request: Multishot<S>,
    /// The group whose buffers ran out, until half of them are free again.
    stalled: Option<Arc<BufGroup>>,
    waiter: Option<WaiterKey>,
    /// While stalled and waiting: the socket's readiness (a one-shot poll; dropping it
    /// cancels it).
    readable: Option<Op<PollReadable>>,
    ended: bool,
}

impl<S: ReceiveSource> Receiver<S> {
    pub(crate) fn new(fd: &SharedFd) -> Self {
        Self {
            fd: fd.clone(),
            request: Multishot::new(),
            stalled: None,
            waiter: None,
            readable: None,
            ended: false,
        }
    }

    pub(crate) fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<S::Out>>> {
        loop {
            if self.request.is_armed() {
                let shard = self.request.armed_shard();
                let event = match self.request.poll_next(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Polled::Item(item)) => S::event(item),
                    Poll::Ready(Polled::Ended(item, source)) => {
                        let event = S::event(item);
                        if let Event::NoBuffers = event {
                            self.stalled = source.group();
                            if let (Some(rt), Some(i)) = (self.request.runtime(), shard) {
                                rt.shared().shards[i].counters.enobufs_stalls.incr();
                            }
                        }
                        event
                    }
                };
                match event {
                    Event::Data(out) => return Poll::Ready(Some(Ok(out))),
                    Event::Eof => self.ended = true,
                    // Waits below for buffers, then re-arms.
                    Event::NoBuffers => {}
                    Event::Failed(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Event::Failed(e) => {
                        self.ended = true;
                        return Poll::Ready(Some(Err(e)));
                    }
                }
            }
            if self.ended {
                return Poll::Ready(None);
            }
            let mut heap = false;
            if let Some(group) = self.stalled.clone() {
                // Polled on another shard than the one whose buffers ran out (the stream
                // moved to a task there): waiting for that shard's buffers would stall on
                // a group this shard does not select from. Re-arm here instead: nothing is
                // armed, so nothing can be reordered.
                if !is_current_shards_group(&group) {
                    group.forget_waiter(&mut self.waiter);
                } else if !group.ready_or_wait(&mut self.waiter, cx.waker()) {
                    // Still short of buffers: data that arrives meanwhile goes into the heap.
                    let readable = self.readable.get_or_insert_with(|| poll_readable(&self.fd));
                    if Pin::new(readable).poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    // Readable (or failed: the receive reports why), still stalled.
                    group.forget_waiter(&mut self.waiter);
                    heap = true;
                }
                self.readable = None;
                if !heap {
                    self.stalled = None;
                }
            }
            if let Err(e) = self.arm(cx, heap) {
                self.ended = true;
                return Poll::Ready(Some(Err(e)));
            }
        }
    }

    /// Lets go of the armed request, giving what it delivered and nobody took to `sink`
    /// (see `Multishot::abandon`); the stream yields nothing more.
    pub(crate) fn abandon(&mut self, sink: Sink<S::Item>) {
        self.request.abandon(Some(sink));
        self.ended = true;
    }

    /// Requests submitted so far.
    pub(crate) fn requests_submitted(&self) -> u64 {
        self.request.armings()
    }

    /// Submits the next request on this shard: into the heap if `heap`, else as
    /// `for_shard` says.
    fn arm(&mut self, cx: &mut Context<'_>, heap: bool) -> io::Result<()> {
        context::with_shard(|shard| {
            let Some(shard) = shard else {
                return Err(not_on_shard());
            };
            let source = if heap {
                S::heap(self.fd.clone(), shard)
            } else {
                S::for_shard(self.fd.clone(), shard)
            };
            self.request
                .arm(shard, source, cx.waker())
                .map_err(|(_, e)| e)?;
            if heap {
                shard.counters().enobufs_heap_receives.incr();
            }
            Ok(())
        })
    }
}

/// True if `group` is the provided-buffer group of the shard this thread runs.
fn is_current_shards_group(group: &Arc<BufGroup>) -> bool {
    context::with_shard(|shard| {
        shard
            .and_then(recv_group)
            .is_some_and(|own| Arc::ptr_eq(&own, group))
    })
}

impl<S: ReceiveSource> Drop for Receiver<S> {
    fn drop(&mut self) {
        if let Some(group) = &self.stalled {
            group.forget_waiter(&mut self.waiter);
        }
    }
}

impl<S: ReceiveSource> std::fmt::Debug for Receiver<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field("armed", &self.request.is_armed())
            .field("stalled", &self.stalled.is_some())
            .field("waiting_for_data", &self.readable.is_some())
            .field("requests_submitted", &self.request.armings())
            .field("ended", &self.ended)
            .finish()
    }
}
