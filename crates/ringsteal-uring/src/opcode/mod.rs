//! SQE preparation: one function per operation, grouped by family, each returning a filled
//! [`io_uring_sqe`]. Preparing is safe (it only fills a struct); handing the SQE to the kernel
//! with [`crate::Ring::push`] is where the memory contract lives.
//!
//! ```
//! use ringsteal_uring::{abi::IOSQE_IO_LINK, opcode};
//!
//! let sqe = opcode::nop().with_user_data(42).with_flags(IOSQE_IO_LINK);
//! assert_eq!(sqe.user_data, 42);
//! ```

mod fs;
mod misc;
mod net;
mod poll;
mod process;
mod rw;

pub use fs::*;
pub use misc::*;
pub use net::*;
pub use poll::*;
pub use process::*;
pub use rw::*;

use crate::abi::io_uring_sqe;

/// Builder-style setters shared by every opcode.
impl io_uring_sqe {
    /// Sets the value echoed in this request's CQE(s).
    #[must_use]
    pub fn with_user_data(mut self, user_data: u64) -> Self {
        self.user_data = user_data;
        self
    }

    /// Adds `IOSQE_*` flags.
    #[must_use]
    pub fn with_flags(mut self, flags: u8) -> Self {
        self.flags |= flags;
        self
    }

    /// Sets `ioprio` (I/O priority, or the per-opcode `ioprio` flags of SEND/RECV/ACCEPT).
    #[must_use]
    pub fn with_ioprio(mut self, ioprio: u16) -> Self {
        self.ioprio = ioprio;
        self
    }

    /// Sets the buffer group to select from, and `IOSQE_BUFFER_SELECT`.
    #[must_use]
    pub fn with_buf_group(mut self, group: u16) -> Self {
        self.buf.buf_group = group;
        self.flags |= crate::abi::IOSQE_BUFFER_SELECT;
        self
    }

    /// Sets the credentials to run as (`IORING_REGISTER_PERSONALITY`).
    #[must_use]
    pub fn with_personality(mut self, personality: u16) -> Self {
        self.personality = personality;
        self
    }
}

/// An SQE with `opcode`, `fd`, `addr`, `len`, `off` set and everything else zero.
pub(crate) fn base(opcode: u8, fd: i32, addr: u64, len: u32, off: u64) -> io_uring_sqe {
    let mut sqe = io_uring_sqe::zeroed();
    sqe.opcode = opcode;
    sqe.fd = fd;
    sqe.addr.addr = addr;
    sqe.len = len;
    sqe.off.off = off;
    sqe
}
