//! The raw io_uring ABI, declared from the kernel's `include/uapi/linux/io_uring.h`.
//!
//! Owns: struct layouts (`#[repr(C)]`, field for field), opcode numbers and flag constants.
//! May not: perform syscalls or hold state. Everything here is plain data; the `tests/abi.rs`
//! test compiles a C program against the installed `linux/io_uring.h` and checks every size,
//! field offset and constant value that header defines against these declarations.
//!
//! Names follow the kernel header exactly (`io_uring_sqe`, `IORING_OP_READ`, ...) so that
//! the kernel documentation and `man io_uring_enter` can be read side by side with this code.
//!
//! The [`opcode`](crate::opcode) functions fill an [`io_uring_sqe`]; a [`Ring`](crate::Ring)
//! hands back each [`io_uring_cqe`] as the kernel wrote it:
//!
//! ```
//! use ringsteal_uring::abi::{io_uring_cqe, io_uring_sqe, IORING_OP_NOP, IOSQE_IO_LINK};
//! use ringsteal_uring::{opcode, Ring};
//!
//! assert_eq!((std::mem::size_of::<io_uring_sqe>(), std::mem::size_of::<io_uring_cqe>()), (64, 16));
//! let sqe: io_uring_sqe = opcode::nop().with_user_data(42).with_flags(IOSQE_IO_LINK);
//! assert_eq!((sqe.opcode, sqe.flags, sqe.user_data), (IORING_OP_NOP, IOSQE_IO_LINK, 42));
//!
//! let mut ring = Ring::new(4)?;
//! // SAFETY: a NOP references no memory.
//! unsafe { ring.push(&opcode::nop().with_user_data(42)) }.unwrap();
//! ring.submit_and_wait(1)?;
//! let cqe: io_uring_cqe = ring.pop_cqe().unwrap();
//! assert_eq!((cqe.user_data, cqe.res), (42, 0));
//! # Ok::<(), std::io::Error>(())
//! ```

#![allow(non_camel_case_types)]

mod cqe;
mod enter;
mod op_flags;
mod opcode;
mod register;
mod setup;
mod sqe;

pub use cqe::*;
pub use enter::*;
pub use op_flags::*;
pub use opcode::*;
pub use register::*;
pub use setup::*;
pub use sqe::*;
