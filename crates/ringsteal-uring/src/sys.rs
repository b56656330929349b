//! The three io_uring system calls, as thin `unsafe` wrappers that return `io::Result`.
//!
//! Owns: the `syscall(2)` invocations and errno translation. May not: interpret results;
//! callers decide what `EINTR`, `EBUSY` or `ETIME` mean for them.

use std::io;
use std::os::fd::RawFd;

use crate::abi::io_uring_params;

/// `io_uring_setup(entries, params)`: returns the new ring's fd.
///
/// # Safety
/// `params` must point at a valid, writable `io_uring_params`.
pub(crate) unsafe fn io_uring_setup(
    entries: u32,
    params: *mut io_uring_params,
) -> io::Result<RawFd> {
    // SAFETY: the caller guarantees `params` is valid and writable; the syscall takes no
    // other pointers.
    let ret = unsafe { libc::syscall(libc::SYS_io_uring_setup, entries as libc::c_long, params) };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret as RawFd)
    }
}

/// `io_uring_enter(fd, to_submit, min_complete, flags, arg, argsz)`: returns the number of
/// SQEs consumed (or, when none were, the wait's result).
///
/// # Safety
/// `arg` must be null, a valid signal set, or (with `IORING_ENTER_EXT_ARG`) a valid
/// `io_uring_getevents_arg` whose pointers are valid, as `flags` says; every SQE about to be
/// submitted must satisfy the contract of [`crate::Ring::push`].
pub(crate) unsafe fn io_uring_enter(
    fd: RawFd,
    to_submit: u32,
    min_complete: u32,
    flags: u32,
    arg: *const libc::c_void,
    argsz: usize,
) -> io::Result<u32> {
    // SAFETY: forwarded from the caller's contract.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_io_uring_enter,
            fd as libc::c_long,
            to_submit as libc::c_long,
            min_complete as libc::c_long,
            flags as libc::c_long,
            arg,
            argsz as libc::c_long,
        )
    };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret as u32)
    }
}

/// `io_uring_register(fd, opcode, arg, nr_args)`: returns the syscall's non-negative result.
///
/// # Safety
/// `arg` must be valid for `opcode` and `nr_args` as `io_uring_register(2)` describes, and
/// any memory it registers must stay valid for as long as the registration says.
pub(crate) unsafe fn io_uring_register(
    fd: RawFd,
    opcode: u32,
    arg: *const libc::c_void,
    nr_args: u32,
) -> io::Result<u32> {
    // SAFETY: forwarded from the caller's contract.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            fd as libc::c_long,
            opcode as libc::c_long,
            arg,
            nr_args as libc::c_long,
        )
    };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret as u32)
    }
}
