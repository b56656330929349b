//! Raw cross-shard messages: a 64-bit payload for a shard, the cheapest signal between shards.
//!
//! Towards a *sleeping* shard the message travels inside a completion posted into its ring
//! (`IORING_OP_MSG_RING`: `res` carries the low 32 bits, `user_data` the high 32 and a
//! sequence number): it is its own doorbell, one system call in all. Towards an *awake* shard
//! (running or spinning) it goes into the shard's message queue with no system call at all;
//! the shard takes it in at its next tick. Without MSG_RING (old kernel, or
//! `WakeMechanism::EventFd`), or from a thread with no ring where the kernel lacks ring-less
//! MSG_RING, the queue and the doorbell are used throughout.
//!
//! Every message is numbered per target shard, and the target delivers strictly in that order
//! (see `shard::Inbox`): messages from one sender arrive in the order sent, whichever path each
//! took. A MSG_RING the kernel refuses (at submission or after) is queued for the target with
//! its number and rings the target's eventfd, so it still arrives, in its place (ADR-0006).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::driver::user_data::encode_message;
use crate::error::SpawnError;
use crate::shard::context;
use crate::shared::remote::Doorbell;
use crate::shared::Shared;

pub(crate) fn send(shared: &Arc<Shared>, shard: usize, payload: u64) -> Result<(), SpawnError> {
    let n = shared.shards.len();
    if shard >= n {
        return Err(SpawnError::NoSuchShard { shard, shards: n });
    }
    if shared.is_shutdown() {
        return Err(SpawnError::ShuttingDown);
    }
    let remote = &shared.shards[shard];
    // Numbered per target, so the target delivers in send order whichever path each takes.
    let seq = remote.msg_seq.fetch_add(1, Relaxed);
    if !remote.claim_doorbell() {
        // Awake: it checks its message queue every tick; no system call needed. (If it falls
        // asleep meanwhile, `notify` rings it like any other wake.)
        remote.messages.push((seq, payload));
        shared.notify(shard);
        return Ok(());
    }
    // Asleep, and the doorbell is ours: the message itself wakes it, inside a completion.
    let via_ring = context::with_shard_of(Arc::as_ptr(shared), |cur| match cur {
        Some(s) if shared.wake.shard_to_shard == Doorbell::MsgRing => {
            Some(s.msg_ring_message(shard, payload, seq))
        }
        _ => None,
    });
    let sent = match via_ring {
        Some(sent) => sent,
        None if shared.wake.foreign == Doorbell::SendMsgRing => {
            let (res, ud) = encode_message(payload, seq);
            let mut ok = false;
            remote.with_open_fds(|ring_fd, _| {
                ok = ringsteal_uring::send_msg_ring(ring_fd, res, ud).is_ok();
            });
            ok
        }
        None => false,
    };
    if !sent {
        // The doorbell is ours (claimed above) and the MSG_RING paths failed or are not
        // available from here: the eventfd, which every thread can write, rings it.
        remote.messages.push((seq, payload));
        remote.ring_eventfd();
    }
    Ok(())
}

/// Receives the next raw message sent to the current shard with
/// [`RuntimeHandle::send_msg`](crate::RuntimeHandle::send_msg). Call it in a loop for a
/// stream of messages. Several tasks may wait on one shard; each message goes to one of them.
///
/// ```
/// use ringsteal_rt::{Placement, Runtime, RuntimeHandle};
///
/// let rt = Runtime::builder().shards(2).build().unwrap();
/// let got = rt.block_on(async {
///     let receiver = ringsteal_rt::spawn_with(Placement::Pinned(1), async {
///         let a = ringsteal_rt::recv_msg().await;
///         let b = ringsteal_rt::recv_msg().await;
///         (a, b)
///     });
///     let handle = RuntimeHandle::current();
///     handle.send_msg(1, 7).unwrap();
///     handle.send_msg(1, u64::MAX).unwrap();
///     receiver.await.unwrap()
/// });
/// assert_eq!(got, (7, u64::MAX));
/// ```
///
/// # Panics
/// The returned future panics if polled outside a ringsteal shard.
pub fn recv_msg() -> RecvMsg {
    RecvMsg { waiting: None }
}

/// A message already received by the current shard, if any (never waits).
pub fn try_recv_msg() -> Option<u64> {
    context::with_shard(|cur| cur.and_then(|s| s.messages.borrow_mut().queue.pop_front()))
}

/// The future returned by [`recv_msg`]. It receives the messages of whichever shard polls it.
/// Dropped before a message came (say, by a `timeout` or a `select`), it takes its waker back
/// off the shard's list of waiting receivers.
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct RecvMsg {
    waiting: Option<Waiting>,
}

/// Where a pending [`RecvMsg`] is registered.
#[derive(Debug)]
struct Waiting {
    /// The runtime's `Shared`, by address (only compared, never followed).
    runtime: usize,
    shard: usize,
    /// Unique in the process, so an id met in another runtime's inbox (at a reused address)
    /// matches nothing.
    id: u64,
}

impl Waiting {
    fn is_on(&self, shard: &crate::shard::Shard) -> bool {
        self.shard == shard.index && self.runtime == Arc::as_ptr(&shard.shared) as usize
    }
}

impl Future for RecvMsg {
    type Output = u64;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u64> {
        context::with_shard(|cur| {
            let shard = cur.expect(
                "ringsteal::recv_msg() must be awaited in a task running on a ringsteal shard",
            );
            let mut inbox = shard.messages.borrow_mut();
            let here = self
                .waiting
                .as_ref()
                .filter(|w| w.is_on(shard))
                .map(|w| w.id);
            if let Some(m) = inbox.queue.pop_front() {
                self.waiting = None;
                let waker = here.and_then(|id| inbox.forget(id));
                drop(inbox);
                drop(waker);
                return Poll::Ready(m);
            }
            let id = here.unwrap_or_else(|| {
                static NEXT_ID: AtomicU64 = AtomicU64::new(0);
                NEXT_ID.fetch_add(1, Relaxed)
            });
            inbox.wait(id, cx.waker());
            drop(inbox);
            // A registration left on another shard (this future moved) is woken, and so
            // dropped, by that shard's next message.
            self.waiting = Some(Waiting {
                runtime: Arc::as_ptr(&shard.shared) as usize,
                shard: shard.index,
                id,
            });
            Poll::Pending
        })
    }
}

impl Drop for RecvMsg {
    fn drop(&mut self) {
        let Some(waiting) = self.waiting.take() else {
            return;
        };
        // Only on its own shard (where it always is, unless the future moved to another
        // thread: then the shard's next message wakes the stale waker and drops it).
        let waker = context::with_shard(|cur| {
            let shard = cur.filter(|s| waiting.is_on(s))?;
            let mut inbox = shard.messages.try_borrow_mut().ok()?;
            inbox.forget(waiting.id)
        });
        drop(waker);
    }
}
