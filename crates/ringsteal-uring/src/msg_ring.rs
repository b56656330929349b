//! Posting a CQE into a ring from a thread that has no ring: `IORING_REGISTER_SEND_MSG_RING`
//! (Linux 6.13).
//!
//! Owns: the ring-less MSG_RING call. May not: fall back; callers probe with
//! [`crate::Features::send_msg_ring`] and use an eventfd where it is missing.

use std::io;
use std::os::fd::RawFd;

use crate::abi::IORING_REGISTER_SEND_MSG_RING;
use crate::opcode;
use crate::sys;

/// Posts a CQE with `res` and `user_data` into the ring `target_fd`, without a ring of our own.
///
/// Fails on kernels before 6.13 (probe first): with `EINVAL`, or `EBADF` on kernels that
/// check the descriptor before the opcode (6.2 and older); and with `EBADFD`/`EBADF` if the
/// target is not a live ring.
///
/// ```
/// use ringsteal_uring::{send_msg_ring, Features, Ring};
///
/// let mut ring = Ring::new(4)?;
/// if Features::get()?.send_msg_ring() {
///     send_msg_ring(ring.fd(), 5, 99)?;
///     let cqe = ring.pop_cqe().unwrap();
///     assert_eq!((cqe.user_data, cqe.res), (99, 5));
/// }
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn send_msg_ring(target_fd: RawFd, res: u32, user_data: u64) -> io::Result<()> {
    let sqe = opcode::msg_ring(target_fd, res, user_data, 0, 0);
    // SAFETY: SEND_MSG_RING reads exactly one SQE from `arg`; `sqe` lives on this frame and
    // references no memory (MSG_DATA carries values only).
    unsafe {
        sys::io_uring_register(
            -1,
            IORING_REGISTER_SEND_MSG_RING,
            (&sqe as *const crate::abi::io_uring_sqe).cast(),
            1,
        )
    }
    .map(drop)
}
