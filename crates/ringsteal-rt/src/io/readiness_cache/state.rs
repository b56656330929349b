//! The readiness a [`ReadinessCache`](super::ReadinessCache) has seen and not yet cleared,
//! and a tick that counts what was recorded, in one atomic word: tokio's edge-triggered
//! model over one-shot polls. A wait records what its poll reported; a caller clears what it
//! was given once the system call said `EAGAIN`, unless something newer was recorded
//! meanwhile (that readiness may be of after the `EAGAIN`, so it stays).
//!
//! May not: wait, or touch the descriptor.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::io::{Interest, Ready};

/// Ready states in the low byte, the tick above.
const READY_BITS: u32 = 8;

/// What a wait returned: the ready states that answer its interest, and the tick they were
/// seen at (what a clear compares). Hand it back to
/// [`ReadinessCache::clear`](super::ReadinessCache::clear) when the system call it allowed
/// said `WouldBlock`.
///
/// ```
/// use ringsteal_rt::io::{Interest, ReadinessCache, Ready};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let cache = ReadinessCache::new();
///     let event = cache.ready(&a, Interest::WRITABLE).await.unwrap();
///     assert_eq!(event.ready(), Ready::WRITABLE);
/// });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadyEvent {
    pub(crate) tick: u64,
    pub(crate) ready: Ready,
}

impl ReadyEvent {
    /// The ready states it reported.
    pub fn ready(&self) -> Ready {
        self.ready
    }
}

/// See the module docs.
#[derive(Debug, Default)]
pub(super) struct ReadyState(AtomicU64);

impl ReadyState {
    /// What answers `interest` now, if anything does.
    pub(super) fn get(&self, interest: Interest) -> Option<ReadyEvent> {
        let word = self.0.load(Ordering::Acquire);
        let ready = unpack_ready(word).intersection(Ready::answering(interest));
        (!ready.is_empty()).then_some(ReadyEvent {
            tick: word >> READY_BITS,
            ready,
        })
    }

    /// Adds what a poll reported, as a new tick.
    pub(super) fn record(&self, ready: Ready) {
        let _ = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                let tick = (word >> READY_BITS).wrapping_add(1);
                let ready = unpack_ready(word) | ready;
                Some(tick << READY_BITS | u64::from(ready.bits()))
            });
    }

    /// Clears what `event` reported (but the closed states, which are final), unless
    /// something was recorded since.
    pub(super) fn clear(&self, event: ReadyEvent) {
        let _ = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                if word >> READY_BITS != event.tick {
                    return None;
                }
                let ready = unpack_ready(word).clearing(event.ready);
                Some(word & !u64::from(u8::MAX) | u64::from(ready.bits()))
            });
    }
}

fn unpack_ready(word: u64) -> Ready {
    Ready::from_bits(word as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_keeps_what_was_recorded_after_the_event_and_the_closed_states() {
        let state = ReadyState::default();
        assert_eq!(state.get(Interest::READABLE), None, "nothing seen yet");
        state.record(Ready::WRITABLE);
        assert_eq!(
            state.get(Interest::READABLE),
            None,
            "writable answers no read"
        );
        state.record(Ready::READABLE);
        let read = state.get(Interest::READABLE).unwrap();
        assert_eq!(read.ready, Ready::READABLE);
        let write = state.get(Interest::WRITABLE).unwrap();
        assert_eq!(write.ready, Ready::WRITABLE);
        // A read said EAGAIN: readable goes, writable stays.
        state.clear(read);
        assert_eq!(state.get(Interest::READABLE), None);
        assert!(state.get(Interest::WRITABLE).is_some());
        // A write's EAGAIN from before a newer record clears nothing.
        state.record(Ready::READABLE | Ready::READ_CLOSED);
        state.clear(write);
        assert!(state.get(Interest::WRITABLE).is_some());
        let both = state.get(Interest::READABLE | Interest::WRITABLE).unwrap();
        assert_eq!(
            both.ready,
            Ready::READABLE | Ready::READ_CLOSED | Ready::WRITABLE
        );
        // Cleared with everything: the end of the stream stays, as it is final.
        state.clear(both);
        let left = state.get(Interest::READABLE).unwrap();
        assert_eq!(left.ready, Ready::READ_CLOSED);
        assert_eq!(state.get(Interest::WRITABLE), None);
    }

    #[test]
    fn an_error_answers_every_interest_until_cleared() {
        let state = ReadyState::default();
        state.record(Ready::ERROR);
        let read = state.get(Interest::READABLE).unwrap();
        assert!(read.ready.is_error());
        assert!(state.get(Interest::WRITABLE).is_some());
        state.clear(read);
        assert_eq!(state.get(Interest::WRITABLE), None);
    }
}
