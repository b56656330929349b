//! Receives with `MSG_TRUNC`, a flag the caller of `recv`/`recvv` may pass. On a datagram
//! socket the kernel then reports the datagram's whole length, which may be more than the
//! buffers hold; on a stream socket it discards the bytes without writing them anywhere and
//! reports how many. Either way the count is not "bytes written at the start of the
//! buffers", which is what marking them initialised needs. So a truncating receive zeroes
//! the buffers' bytes past their initialised ones before it is submitted, and its count is
//! clamped to what the buffers hold before they are marked.
//!
//! May not: change the count the caller gets back (it is the kernel's).

use crate::buf::{IoBufMut, IoVecBufMut};

/// True if `flags` ask for a truncating receive.
pub(super) fn is_truncating(flags: i32) -> bool {
    flags & libc::MSG_TRUNC != 0
}

/// Zeroes `buf` from its initialised bytes to its capacity.
pub(super) fn zero_spare<B: IoBufMut>(buf: &mut B) {
    let (init, total) = (buf.bytes_init(), buf.bytes_total());
    if total > init {
        // SAFETY: `IoBufMut`'s contract: `stable_mut_ptr` is valid for writes of
        // `bytes_total()` bytes; the range is inside that and not empty.
        unsafe { std::ptr::write_bytes(buf.stable_mut_ptr().add(init), 0, total - init) };
    }
}

/// [`zero_spare`] for every buffer of `bufs`; returns the bytes they hold in all (the most
/// a receive into them can have written).
pub(super) fn zero_spare_vectored<B: IoVecBufMut>(bufs: &mut B) -> usize {
    let init = bufs.iovecs();
    let mut total = 0;
    for (i, whole) in bufs.iovecs_mut().iter().enumerate() {
        // One iovec per buffer in both lists, in the same order (`IoVecBuf`'s contract).
        let have = init.get(i).map_or(0, |v| v.iov_len).min(whole.iov_len);
        if whole.iov_len > have {
            // SAFETY: `iovecs_mut` describes each buffer's whole capacity, valid for writes
            // while `bufs` is borrowed; the range is inside it and not empty.
            unsafe {
                std::ptr::write_bytes(
                    whole.iov_base.cast::<u8>().add(have),
                    0,
                    whole.iov_len - have,
                )
            };
        }
        total += whole.iov_len;
    }
    total
}
