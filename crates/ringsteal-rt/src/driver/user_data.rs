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
/// A completion nobody waits for (the shutdown cancel-all, a failed message send), or, with
/// a shard in the rest (see [`doorbell_send`]), a doorbell send to that shard that failed.
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

/// The sender's `user_data` of a doorbell MSG_RING to shard `target`. Success posts no CQE
/// here; a failure (say `-EOVERFLOW`, the target's CQ full) does, and names the target so the
/// doorbell can fall back to its eventfd.
#[inline]
pub(crate) fn doorbell_send(target: usize) -> u64 {
    ((target as u64 + 1) << 3) | TAG_IGNORE
}

/// The target of a failed doorbell send, from the rest of a [`TAG_IGNORE`] `user_data`.
#[inline]
pub(crate) fn doorbell_target(rest: u64) -> Option<usize> {
    ((rest >> 3) as usize).checked_sub(1)
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
    fn doorbell_sends_name_their_target_and_plain_ignores_do_not() {
        for t in [0, 1, 7, 4095] {
            let (tag, rest) = split(doorbell_send(t));
            assert_eq!((tag, doorbell_target(rest)), (TAG_IGNORE, Some(t)));
        }
        assert_eq!(doorbell_target(split(TAG_IGNORE).1), None);
    }

    #[test]
    fn pointers_keep_their_tag() {
        let x = 0u64;
        let p = &x as *const u64 as *const ();
        let ud = pointer(p, TAG_CANCEL);
        assert_eq!(split(ud), (TAG_CANCEL, p as u64));
    }
}
