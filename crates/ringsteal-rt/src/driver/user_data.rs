//! The meaning of `user_data`: which CQE belongs to what.
//!
//! The low 3 bits are a tag; the rest is a pointer (ops, 8-byte aligned) or a payload.
//! An op's allocation is freed only after every CQE that names it has been reaped, so a late
//! CQE never finds a reused address (no generation counter is needed).

/// The CQE of an op's SQE number `tag` (0, 1 or 2: an op submits up to three linked SQEs);
/// the rest is a pointer to its `OpHeader`.
pub(crate) const TAG_OP: u64 = 0;
/// Last op SQE tag (`TAG_OP + MAX_SQES - 1`).
pub(crate) const TAG_OP_LAST: u64 = 2;
/// The completion of an `ASYNC_CANCEL` aimed at an op; the rest is the op pointer.
pub(crate) const TAG_CANCEL: u64 = 3;
/// A doorbell: a `MSG_RING` (or ring-less MSG_RING) whose only job was to wake this shard.
pub(crate) const TAG_DOORBELL: u64 = 4;
/// A raw cross-shard message: bits 3..35 carry the payload's high 32 bits, `res` the low.
pub(crate) const TAG_MESSAGE: u64 = 5;
/// The completion of the armed eventfd read.
pub(crate) const TAG_EVENTFD: u64 = 6;
/// The sender's side of a MSG_RING ([`doorbell_send`], [`message_send`]: the rest says
/// which), or, with nothing in the rest, a completion nobody waits for (the shutdown
/// cancel-all, a withdrawn SQE).
pub(crate) const TAG_IGNORE: u64 = 7;

const TAG_MASK: u64 = 0b111;

/// Splits `user_data` into its tag and the rest.
#[inline]
pub(crate) fn split(user_data: u64) -> (u64, u64) {
    (user_data & TAG_MASK, user_data & !TAG_MASK)
}

/// `user_data` for a pointer with a tag.
#[inline]
pub(crate) fn pointer(ptr: *const (), tag: u64) -> u64 {
    debug_assert_eq!(ptr as u64 & TAG_MASK, 0, "op headers are 8-byte aligned");
    ptr as u64 | tag
}

/// In the rest of a [`TAG_IGNORE`] `user_data`: bit 3 says a message send (set) or a doorbell
/// send (clear), bits 4.. hold one more than the target shard or the message's slot.
const SEND_IS_MESSAGE: u64 = 1 << 3;

/// The sender's `user_data` of a doorbell MSG_RING to shard `target`. Success posts no CQE
/// here; a failure (say `-EOVERFLOW`, the target's CQ full) does, and names the target so the
/// doorbell can fall back to its eventfd.
#[inline]
pub(crate) fn doorbell_send(target: usize) -> u64 {
    ((target as u64 + 1) << 4) | TAG_IGNORE
}

/// The sender's `user_data` of a raw message's MSG_RING, kept in slot `slot` of the sender's
/// table of messages in flight until this CQE (posted on success and failure alike) comes.
#[inline]
pub(crate) fn message_send(slot: usize) -> u64 {
    ((slot as u64 + 1) << 4) | SEND_IS_MESSAGE | TAG_IGNORE
}

/// What a [`TAG_IGNORE`] completion is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SendCompletion {
    /// Nothing to do.
    Nothing,
    /// A doorbell to this shard failed.
    Doorbell(usize),
    /// The message in this slot of the sender's table arrived or failed (`res` says which).
    Message(usize),
}

/// Decodes the rest of a [`TAG_IGNORE`] `user_data`.
#[inline]
pub(crate) fn send_completion(rest: u64) -> SendCompletion {
    match ((rest >> 4) as usize).checked_sub(1) {
        None => SendCompletion::Nothing,
        Some(i) if rest & SEND_IS_MESSAGE != 0 => SendCompletion::Message(i),
        Some(i) => SendCompletion::Doorbell(i),
    }
}

/// Bits of a message's sequence number that fit in `user_data` above the payload's high half.
pub(crate) const MESSAGE_SEQ_BITS: u32 = 29;

/// Encodes a 64-bit message payload and its sequence number as (`res`, `user_data`) of a
/// MSG_RING: `res` holds the payload's low 32 bits; `user_data` the tag, the high 32 bits
/// (bits 3..35) and the low [`MESSAGE_SEQ_BITS`] bits of the sequence number (bits 35..64).
#[inline]
pub(crate) fn encode_message(payload: u64, seq: u64) -> (u32, u64) {
    let seq = seq & ((1 << MESSAGE_SEQ_BITS) - 1);
    (
        payload as u32,
        (seq << 35) | ((payload >> 32) << 3) | TAG_MESSAGE,
    )
}

/// Decodes a message CQE into (truncated sequence number, payload).
#[inline]
pub(crate) fn decode_message(res: i32, user_data: u64) -> (u64, u64) {
    let high = (user_data >> 3) & 0xffff_ffff;
    (user_data >> 35, (high << 32) | u64::from(res as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_payloads_round_trip_through_res_and_user_data() {
        for payload in [
            0,
            1,
            u64::MAX,
            0x8000_0000,
            0xdead_beef_0000_0001,
            u64::from(u32::MAX),
        ] {
            for seq in [
                0,
                1,
                (1 << MESSAGE_SEQ_BITS) - 1,
                1 << MESSAGE_SEQ_BITS,
                u64::MAX,
            ] {
                let (res, ud) = encode_message(payload, seq);
                assert_eq!(split(ud).0, TAG_MESSAGE);
                let truncated = seq & ((1 << MESSAGE_SEQ_BITS) - 1);
                assert_eq!(decode_message(res as i32, ud), (truncated, payload));
            }
        }
    }

    #[test]
    fn sends_name_their_doorbell_target_or_message_slot_and_plain_ignores_name_nothing() {
        for i in [0, 1, 7, 4095, 1 << 40] {
            let (tag, rest) = split(doorbell_send(i));
            assert_eq!(
                (tag, send_completion(rest)),
                (TAG_IGNORE, SendCompletion::Doorbell(i))
            );
            let (tag, rest) = split(message_send(i));
            assert_eq!(
                (tag, send_completion(rest)),
                (TAG_IGNORE, SendCompletion::Message(i))
            );
        }
        assert_eq!(
            send_completion(split(TAG_IGNORE).1),
            SendCompletion::Nothing
        );
    }

    #[test]
    fn pointers_keep_their_tag() {
        let x = 0u64;
        let p = &x as *const u64 as *const ();
        let ud = pointer(p, TAG_CANCEL);
        assert_eq!(split(ud), (TAG_CANCEL, p as u64));
    }
}
