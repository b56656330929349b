//! [`Inbox`]: the raw messages a shard received, put back in send order.

use std::collections::{BTreeMap, VecDeque};
use std::task::Waker;

/// Raw messages received by a shard, and the tasks waiting for them.
///
/// Messages reach a shard by two paths (a MSG_RING completion, or the message queue with a
/// doorbell) and a race between a sender's choice of path and the shard's last check before
/// sleeping can let a later message overtake an earlier one. So each message carries a
/// sequence number per target shard, and the inbox delivers strictly in that order, holding
/// back a message that arrives ahead of a gap (the gap is a send in progress).
///
/// Waiters are keyed by the id their `RecvMsg` holds, so a receiver dropped before a message
/// came takes its waker out again instead of leaving it for the next message to wake.
#[derive(Default)]
pub(crate) struct Inbox {
    /// Delivered, in order.
    pub(crate) queue: VecDeque<u64>,
    /// Receivers waiting for a message: (receiver id, waker).
    waiters: Vec<(u64, Waker)>,
    next_seq: u64,
    early: BTreeMap<u64, u64>,
}

impl Inbox {
    /// Registers receiver `id` to be woken by the next message (or updates its waker).
    pub(crate) fn wait(&mut self, id: u64, waker: &Waker) {
        match self.waiters.iter_mut().find(|(w, _)| *w == id) {
            Some((_, old)) if old.will_wake(waker) => {}
            Some((_, old)) => *old = waker.clone(),
            None => self.waiters.push((id, waker.clone())),
        }
    }

    /// Takes receiver `id` off the waiters (it was dropped, or got its message). Returns its
    /// waker, for the caller to drop once the inbox is no longer borrowed.
    #[must_use = "drop the waker after releasing the inbox"]
    pub(crate) fn forget(&mut self, id: u64) -> Option<Waker> {
        let i = self.waiters.iter().position(|(w, _)| *w == id)?;
        Some(self.waiters.swap_remove(i).1)
    }

    /// True if a receiver waits.
    pub(crate) fn has_waiters(&self) -> bool {
        !self.waiters.is_empty()
    }

    /// Takes every waiter's waker (to wake them, or at shutdown to drop them).
    pub(crate) fn take_waiters(&mut self) -> Vec<Waker> {
        std::mem::take(&mut self.waiters)
            .into_iter()
            .map(|(_, w)| w)
            .collect()
    }

    /// Takes a message with full sequence number `seq`; delivers what is now in order.
    pub(crate) fn accept(&mut self, seq: u64, payload: u64) {
        if seq != self.next_seq {
            self.early.insert(seq, payload);
            return;
        }
        self.queue.push_back(payload);
        self.next_seq += 1;
        while let Some(p) = self.early.remove(&self.next_seq) {
            self.queue.push_back(p);
            self.next_seq += 1;
        }
    }

    /// As [`accept`](Self::accept), for a sequence number truncated to its low
    /// `MESSAGE_SEQ_BITS` bits (a MSG_RING completion): it is the first one at or after the
    /// next expected number with those bits.
    pub(crate) fn accept_truncated(&mut self, seq: u64, payload: u64) {
        let mask = (1u64 << crate::driver::user_data::MESSAGE_SEQ_BITS) - 1;
        let full = self.next_seq + (seq.wrapping_sub(self.next_seq & mask) & mask);
        self.accept(full, payload);
    }
}

#[cfg(test)]
mod tests {
    use super::Inbox;
    use crate::driver::user_data::MESSAGE_SEQ_BITS;

    #[test]
    fn messages_are_delivered_in_sequence_order_whatever_order_they_arrive_in() {
        let mut inbox = Inbox::default();
        inbox.accept(1, 11);
        inbox.accept(3, 33);
        assert!(
            inbox.queue.is_empty(),
            "nothing before the gap at 0 is filled"
        );
        inbox.accept(0, 0);
        assert_eq!(inbox.queue.drain(..).collect::<Vec<_>>(), [0, 11]);
        inbox.accept(2, 22);
        assert_eq!(inbox.queue.drain(..).collect::<Vec<_>>(), [22, 33]);
    }

    #[test]
    fn a_forgotten_waiter_is_not_woken_and_a_repeated_wait_registers_once() {
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        use std::sync::Arc;
        use std::task::{Wake, Waker};

        #[derive(Default)]
        struct Count(AtomicUsize);
        impl Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, SeqCst);
            }
        }
        let (kept, gone) = (Arc::new(Count::default()), Arc::new(Count::default()));
        let mut inbox = Inbox::default();
        inbox.wait(1, &Waker::from(kept.clone()));
        inbox.wait(1, &Waker::from(kept.clone()));
        inbox.wait(2, &Waker::from(gone.clone()));
        drop(inbox.forget(2));
        assert_eq!(
            Arc::strong_count(&gone),
            1,
            "the forgotten waker is dropped"
        );
        assert!(inbox.forget(2).is_none());
        let woken = inbox.take_waiters();
        assert_eq!(woken.len(), 1);
        woken.into_iter().for_each(Waker::wake);
        assert_eq!((kept.0.load(SeqCst), gone.0.load(SeqCst)), (1, 0));
        assert!(!inbox.has_waiters());
    }

    #[test]
    fn truncated_sequence_numbers_are_placed_after_the_next_expected_one_across_the_wrap() {
        let period = 1u64 << MESSAGE_SEQ_BITS;
        let mut inbox = Inbox::default();
        // Advance to just below a multiple of the truncation period.
        for seq in 0..5 {
            inbox.accept(seq, seq);
        }
        inbox.next_seq = 3 * period - 1;
        inbox.queue.clear();
        // 3p - 1 truncates to p - 1, 3p and 3p + 1 to 0 and 1: they follow in order.
        inbox.accept_truncated(1, 301);
        inbox.accept_truncated(period - 1, 299);
        inbox.accept_truncated(0, 300);
        assert_eq!(inbox.queue.drain(..).collect::<Vec<_>>(), [299, 300, 301]);
        assert_eq!(inbox.next_seq, 3 * period + 2);
    }
}
