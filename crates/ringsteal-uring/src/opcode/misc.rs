//! NOP, MSG_RING, ASYNC_CANCEL, TIMEOUT, TIMEOUT_REMOVE and LINK_TIMEOUT.

use std::os::fd::RawFd;

use super::base;
use crate::abi::*;

/// `IORING_OP_NOP`.
pub fn nop() -> io_uring_sqe {
    base(IORING_OP_NOP, -1, 0, 0, 0)
}

/// `IORING_OP_MSG_RING` with `IORING_MSG_DATA`: posts a CQE with `res` and `user_data` into
/// the ring `target_fd`. `flags` is `IORING_MSG_RING_*`; with `IORING_MSG_RING_FLAGS_PASS`,
/// `cqe_flags` becomes the target CQE's `flags`.
pub fn msg_ring(
    target_fd: RawFd,
    res: u32,
    user_data: u64,
    flags: u32,
    cqe_flags: u32,
) -> io_uring_sqe {
    let mut sqe = base(
        IORING_OP_MSG_RING,
        target_fd,
        IORING_MSG_DATA,
        res,
        user_data,
    );
    sqe.op_flags.msg_ring_flags = flags;
    sqe.file_index.file_index = cqe_flags;
    sqe
}

/// `IORING_OP_ASYNC_CANCEL` of the request whose `user_data` is `target`.
pub fn cancel(target: u64, flags: u32) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_ASYNC_CANCEL, -1, target, 0, 0);
    sqe.op_flags.cancel_flags = flags;
    sqe
}

/// `IORING_OP_ASYNC_CANCEL` of every request on `fd` (`IORING_ASYNC_CANCEL_FD | ALL`, 5.19).
pub fn cancel_fd(fd: RawFd) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_ASYNC_CANCEL, fd, 0, 0, 0);
    sqe.op_flags.cancel_flags = IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_ALL;
    sqe
}

/// `IORING_OP_ASYNC_CANCEL` of every request in the ring (`IORING_ASYNC_CANCEL_ANY | ALL`).
pub fn cancel_all() -> io_uring_sqe {
    let mut sqe = base(IORING_OP_ASYNC_CANCEL, -1, 0, 0, 0);
    sqe.op_flags.cancel_flags = IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL;
    sqe
}

/// `IORING_OP_TIMEOUT`: completes with `-ETIME` after `*ts` (or after `count` other CQEs if
/// `count > 0`). The kernel copies `*ts` when the SQE is submitted.
pub fn timeout(ts: *const __kernel_timespec, count: u32, flags: u32) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_TIMEOUT, -1, ts as u64, 1, u64::from(count));
    sqe.op_flags.timeout_flags = flags;
    sqe
}

/// `IORING_OP_TIMEOUT_REMOVE` of the timeout whose `user_data` is `target`.
pub fn timeout_remove(target: u64) -> io_uring_sqe {
    base(IORING_OP_TIMEOUT_REMOVE, -1, target, 0, 0)
}

/// `IORING_OP_LINK_TIMEOUT`: bounds the previous SQE of a link chain (which must carry
/// `IOSQE_IO_LINK`) by `*ts`; on expiry that request is cancelled and fails `-ECANCELED`,
/// and this one completes `-ETIME`; otherwise this one completes `-ECANCELED`. The kernel
/// copies `*ts` at submission.
pub fn link_timeout(ts: *const __kernel_timespec, flags: u32) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_LINK_TIMEOUT, -1, ts as u64, 1, 0);
    sqe.op_flags.timeout_flags = flags;
    sqe
}
