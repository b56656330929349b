//! POLL_ADD and POLL_REMOVE.

use std::os::fd::RawFd;

use super::base;
use crate::abi::*;

/// `IORING_OP_POLL_ADD`: completes once `fd` has any of `events` (`POLLIN`...). With
/// `multishot`, posts a CQE per event (with `F_MORE`) until removed (5.13).
pub fn poll_add(fd: RawFd, events: u32, multishot: bool) -> io_uring_sqe {
    let len = if multishot { IORING_POLL_ADD_MULTI } else { 0 };
    let mut sqe = base(IORING_OP_POLL_ADD, fd, 0, len, 0);
    sqe.op_flags.poll32_events = events;
    sqe
}

/// `IORING_OP_POLL_REMOVE` of the poll whose `user_data` is `target`.
pub fn poll_remove(target: u64) -> io_uring_sqe {
    base(IORING_OP_POLL_REMOVE, -1, target, 0, 0)
}
