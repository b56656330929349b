//! Raw cross-shard messages: a 64-bit payload delivered inside a completion of the target
//! shard's ring (`IORING_OP_MSG_RING`: `res` carries the low 32 bits, `user_data` the high).
//!
//! The lowest-latency signal between shards: no allocation, no queue shared between threads,
//! and it wakes a sleeping target by itself. Without MSG_RING (old kernel, or
//! `WakeMechanism::EventFd`), or when sent from a thread with no ring and no ring-less
//! MSG_RING, payloads go through a queue and the target's doorbell instead. Messages from one
//! sender arrive in the order sent while the path does not change.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::driver::user_data::encode_message;
use crate::error::SpawnError;
use crate::runtime::context;
use crate::runtime::shared::Shared;
use crate::shard::remote::Doorbell;

pub(crate) fn send(shared: &Arc<Shared>, shard: usize, payload: u64) -> Result<(), SpawnError> {
    let n = shared.shards.len();
    if shard >= n {
        return Err(SpawnError::NoSuchShard { shard, shards: n });
    }
    if shared.is_shutdown() {
        return Err(SpawnError::ShuttingDown);
    }
    let remote = &shared.shards[shard];
    if !remote.claim_doorbell() {
        // Awake: it checks its message queue every tick; no system call needed. (If it falls
        // asleep meanwhile, `notify` rings it like any other wake.)
        remote.messages.push(payload);
        shared.notify(shard);
        return Ok(());
    }
    // Asleep, and the doorbell is ours: the message itself wakes it, inside a completion.
    let via_ring = context::with_shard_of(Arc::as_ptr(shared), |cur| match cur {
        Some(s) if shared.wake.shard_to_shard == Doorbell::MsgRing => {
            Some(s.msg_ring_message(shard, payload))
        }
        _ => None,
    });
    let sent = match via_ring {
        Some(sent) => sent,
        None if shared.wake.foreign == Doorbell::SendMsgRing => {
            let (res, ud) = encode_message(payload);
            let mut ok = false;
            remote.with_open_fds(|ring_fd, _| {
                ok = ringsteal_uring::send_msg_ring(ring_fd, res, ud).is_ok();
            });
            ok
        }
        None => false,
    };
    if !sent {
        remote.messages.push(payload);
        shared.ring_doorbell(shard);
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
    RecvMsg { _private: () }
}

/// A message already received by the current shard, if any (never waits).
pub fn try_recv_msg() -> Option<u64> {
    context::with_shard(|cur| cur.and_then(|s| s.messages.borrow_mut().queue.pop_front()))
}

/// The future returned by [`recv_msg`]. It receives the messages of whichever shard polls it.
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct RecvMsg {
    _private: (),
}

impl Future for RecvMsg {
    type Output = u64;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u64> {
        context::with_shard(|cur| {
            let shard = cur.expect(
                "ringsteal::recv_msg() must be awaited in a task running on a ringsteal shard",
            );
            let mut inbox = shard.messages.borrow_mut();
            if let Some(m) = inbox.queue.pop_front() {
                return Poll::Ready(m);
            }
            if !inbox.waiters.iter().any(|w| w.will_wake(cx.waker())) {
                inbox.waiters.push(cx.waker().clone());
            }
            Poll::Pending
        })
    }
}
