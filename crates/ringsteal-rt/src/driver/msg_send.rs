//! MSG_RING from this shard's ring into another shard's: doorbells and raw messages (ADR-0006).
//!
//! A MSG_RING names the target ring by descriptor number, which is only known to be that ring
//! while the caller holds the target's fd guard (`RemoteShard::with_open_fds`). So a send is
//! handed to the kernel at once or not at all: one the kernel did not take (`EBUSY`, or a
//! submission that stopped at an earlier SQE) is withdrawn from the SQ before the guard ends,
//! and the caller falls back to the eventfd; it is never submitted later, when the number may
//! name another file.
//!
//! Never from an SQPOLL ring: its kernel thread reads the SQ on its own time, so a MSG_RING
//! could be read after the guard ended and could not be withdrawn (the poller may be reading
//! it at that moment). SQPOLL runtimes send doorbells and messages without a ring (ADR-0018),
//! so the sends here refuse such a ring outright rather than rely on that plan alone.
//!
//! A refusal *after* submission (`-EOVERFLOW`, `-ENOMEM`, `-EBADFD`, `-EOWNERDEAD`, ...) comes
//! back as a CQE on this ring. A doorbell's names the target (its success CQE is skipped); a
//! message's names its slot in [`MessagesInFlight`], which holds the payload and sequence
//! number until that CQE (posted on success too) says whether it arrived, so a refused one
//! can be re-queued for its target in order ([`Reaped::failed_messages`]).
//!
//! Owns: the MSG_RING SQEs, their `user_data`, and the messages in flight. May not: fall back
//! itself (the shard rings eventfds and re-queues messages), or touch the target's state.

use std::io;
use std::os::fd::RawFd;

use ringsteal_uring::abi::IOSQE_CQE_SKIP_SUCCESS;
use ringsteal_uring::{io_uring_sqe, opcode};

use super::user_data::{
    doorbell_send, encode_message, message_send, send_completion, SendCompletion, TAG_DOORBELL,
    TAG_IGNORE,
};
use super::{Driver, Reaped, RingMode};
use crate::stats::ShardCounters;

/// A raw message sent by MSG_RING whose sender CQE has not come yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SentMessage {
    /// The target shard.
    pub(crate) target: usize,
    /// Its full sequence number for that target.
    pub(crate) seq: u64,
    pub(crate) payload: u64,
}

/// The messages this ring sent by MSG_RING and has no completion for yet, by slot.
#[derive(Default)]
pub(super) struct MessagesInFlight {
    slots: Vec<Option<SentMessage>>,
    free: Vec<usize>,
}

impl MessagesInFlight {
    fn insert(&mut self, message: SentMessage) -> usize {
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = Some(message);
                slot
            }
            None => {
                self.slots.push(Some(message));
                self.slots.len() - 1
            }
        }
    }

    fn take(&mut self, slot: usize) -> Option<SentMessage> {
        let message = self.slots.get_mut(slot)?.take()?;
        self.free.push(slot);
        Some(message)
    }
}

impl Driver {
    /// Rings shard `target`'s doorbell (its ring is `target_fd`): handed to the kernel now,
    /// or an error and nothing queued. A refusal after submission comes back as a CQE naming
    /// `target` ([`Reaped::failed_doorbells`]).
    pub(crate) fn send_doorbell(
        &mut self,
        target_fd: RawFd,
        target: usize,
        counters: &ShardCounters,
    ) -> io::Result<()> {
        let sqe = opcode::msg_ring(target_fd, 0, TAG_DOORBELL, 0, 0)
            .with_flags(IOSQE_CQE_SKIP_SUCCESS)
            .with_user_data(doorbell_send(target));
        self.msg_ring_now(sqe, counters)
    }

    /// Sends `message` into its target's ring (`target_fd`) as a completion: handed to the
    /// kernel now, or an error and nothing queued (the caller queues it instead). A refusal
    /// after submission comes back in [`Reaped::failed_messages`].
    pub(crate) fn send_message(
        &mut self,
        target_fd: RawFd,
        message: SentMessage,
        counters: &ShardCounters,
    ) -> io::Result<()> {
        let (res, user_data) = encode_message(message.payload, message.seq);
        let slot = self.messages_in_flight.insert(message);
        // No CQE_SKIP_SUCCESS: the success CQE frees the slot.
        let sqe =
            opcode::msg_ring(target_fd, res, user_data, 0, 0).with_user_data(message_send(slot));
        let sent = self.msg_ring_now(sqe, counters);
        if sent.is_err() {
            self.messages_in_flight.take(slot);
        }
        sent
    }

    /// Pushes `sqe` (a MSG_RING) and submits it; if the kernel did not consume it, withdraws
    /// it from the SQ and fails.
    fn msg_ring_now(&mut self, sqe: io_uring_sqe, counters: &ShardCounters) -> io::Result<()> {
        if self.mode == RingMode::SqPoll {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "no MSG_RING from an SQPOLL ring: its poller could read it after the target's \
                 descriptor guard ended",
            ));
        }
        #[cfg(test)]
        let sqe = match self.refuse_msg_rings.pop() {
            Some(errno) => super::tests::failing_nop(errno, sqe),
            None => sqe,
        };
        // Never deferred to the backlog: `WouldBlock` instead.
        // SAFETY: MSG_RING with MSG_DATA references no memory.
        unsafe { self.push_or_defer(std::slice::from_ref(&sqe), counters, false)? };
        let submitted = self.submit(counters);
        // The backlog was empty (the push went to the SQ), so `sqe` is the last SQE there,
        // and it is still there exactly when anything is.
        if self.ring.sq_pending() == 0 {
            // Consumed: a failure the kernel found at submission comes as its CQE.
            return Ok(());
        }
        let withdrawn = opcode::nop()
            .with_flags(IOSQE_CQE_SKIP_SUCCESS)
            .with_user_data(TAG_IGNORE);
        // SAFETY: a NOP references no memory; only this shard's thread enters this ring, and
        // it is here. The ring has no SQPOLL thread (refused above), so the kernel reads the
        // SQ only inside our own enters and the replacement cannot fail.
        let replaced = unsafe { self.ring.replace_last_pending(&withdrawn) };
        debug_assert!(
            replaced,
            "a pending SQE is replaceable on a ring without SQPOLL"
        );
        Err(submitted.err().unwrap_or_else(|| {
            io::Error::new(
                io::ErrorKind::WouldBlock,
                "the kernel did not take the MSG_RING",
            )
        }))
    }

    /// A completion tagged [`TAG_IGNORE`](super::user_data::TAG_IGNORE) with `rest`: a
    /// doorbell send that failed, or a message send that arrived (`res >= 0`) or failed.
    pub(super) fn send_completed(&mut self, rest: u64, res: i32, out: &mut Reaped) {
        match send_completion(rest) {
            SendCompletion::Nothing => {}
            SendCompletion::Doorbell(target) => out.failed_doorbells.push(target),
            SendCompletion::Message(slot) => {
                if let Some(message) = self.messages_in_flight.take(slot) {
                    if res < 0 {
                        out.failed_messages.push(message);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(payload: u64) -> SentMessage {
        SentMessage {
            target: 1,
            seq: payload + 100,
            payload,
        }
    }

    #[test]
    fn a_message_in_flight_is_given_back_once_by_its_slot() {
        let mut table = MessagesInFlight::default();
        let a = table.insert(message(1));
        let b = table.insert(message(2));
        assert_ne!(a, b);
        assert_eq!(table.take(b), Some(message(2)));
        assert_eq!(table.take(b), None, "a second CQE for a slot finds nothing");
        assert_eq!(table.take(a), Some(message(1)));
    }

    #[test]
    fn a_freed_slot_is_reused_and_slots_never_in_use_name_nothing() {
        let mut table = MessagesInFlight::default();
        let a = table.insert(message(1));
        let b = table.insert(message(2));
        table.take(a);
        assert_eq!(
            table.insert(message(3)),
            a,
            "the table does not grow while a slot is free"
        );
        assert_eq!(table.slots.len(), 2);
        assert_eq!(table.take(a), Some(message(3)));
        assert_eq!(table.take(b), Some(message(2)));
        assert_eq!(table.take(7), None, "a slot past the table");
    }
}
