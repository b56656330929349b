//! The raw io_uring ABI, declared from the kernel's `include/uapi/linux/io_uring.h`.
//!
//! Owns: struct layouts (`#[repr(C)]`, field for field), opcode numbers and flag constants.
//! May not: perform syscalls or hold state. Everything here is plain data; the `tests/abi.rs`
//! test compiles a C program against the installed `linux/io_uring.h` and checks every size,
//! field offset and constant value that header defines against these declarations.
//!
//! Names follow the kernel header exactly (`io_uring_sqe`, `IORING_OP_READ`, ...) so that
//! the kernel documentation and `man io_uring_enter` can be read side by side with this code.

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
