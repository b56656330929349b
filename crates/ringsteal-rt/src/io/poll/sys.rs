//! The non-blocking socket calls of poll-based I/O: `recv`, `send`, `sendmsg` (and, for
//! datagrams, `recvfrom`, `sendto`) with
//! `MSG_DONTWAIT` (so the descriptor itself stays blocking, as the io_uring path wants it),
//! and `shutdown`. Shared by every readiness backend (ADR-0014).
//!
//! May not: wait (an `EAGAIN` goes back to the caller as `WouldBlock`).

use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::RawFd;

use crate::op::SockAddr;

/// `recv(fd, dst, MSG_DONTWAIT | flags)`: the bytes received (0: end of stream) or
/// `WouldBlock`. `flags` is 0, or `MSG_PEEK` to leave them queued.
pub(super) fn recv(fd: RawFd, dst: &mut [MaybeUninit<u8>], flags: i32) -> io::Result<usize> {
    // SAFETY: `dst` is valid for writes of its length for the duration of the call, which
    // does not keep the pointer; the kernel writes at most `len` bytes.
    let n = unsafe {
        libc::recv(
            fd,
            dst.as_mut_ptr().cast(),
            dst.len(),
            libc::MSG_DONTWAIT | flags,
        )
    };
    result(n)
}

/// `send(fd, src, MSG_DONTWAIT | MSG_NOSIGNAL)`: the bytes the kernel took, or `WouldBlock`.
pub(super) fn send(fd: RawFd, src: &[u8]) -> io::Result<usize> {
    // SAFETY: `src` is valid for reads of its length during the call, which keeps no pointer.
    let n = unsafe {
        libc::send(
            fd,
            src.as_ptr().cast(),
            src.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        )
    };
    result(n)
}

/// `recvfrom(fd, dst, MSG_DONTWAIT)` (with `MSG_PEEK` if `peek`: the datagram stays queued)
/// filling `from` with the sender's address: the bytes received (a datagram longer than
/// `dst` is cut to it) or `WouldBlock`.
pub(super) fn recv_from(
    fd: RawFd,
    dst: &mut [MaybeUninit<u8>],
    from: &mut SockAddr,
    peek: bool,
) -> io::Result<usize> {
    let flags = libc::MSG_DONTWAIT | if peek { libc::MSG_PEEK } else { 0 };
    let (addr, len) = from.as_mut_parts();
    // SAFETY: `dst` is valid for writes of its length, and `from`'s storage (`addr`) for
    // writes of the length `len` points at (the whole storage, from `SockAddr::empty`), for
    // the duration of the call, which keeps neither pointer and updates `*len`; the two
    // pointers come from disjoint fields of `from`, which this call borrows exclusively.
    let n = unsafe { libc::recvfrom(fd, dst.as_mut_ptr().cast(), dst.len(), flags, addr, len) };
    result(n)
}

/// `sendto(fd, src, MSG_DONTWAIT | MSG_NOSIGNAL)` to `to` (the connected address if `None`):
/// the bytes the kernel took, or `WouldBlock`.
pub(super) fn send_to(fd: RawFd, src: &[u8], to: Option<&SockAddr>) -> io::Result<usize> {
    let (addr, len) = to.map_or((std::ptr::null(), 0), |a| (a.as_ptr(), a.len()));
    // SAFETY: `src` is valid for reads of its length and `addr` (null, or a live address of
    // `len` bytes) for the call, which keeps no pointer.
    let n = unsafe {
        libc::sendto(
            fd,
            src.as_ptr().cast(),
            src.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            addr,
            len,
        )
    };
    result(n)
}

/// The most slices one `sendmsg` takes (`IOV_MAX`).
pub(super) const IOV_MAX: usize = libc::UIO_MAXIOV as usize;

/// `sendmsg` of `bufs` in order (at most [`IOV_MAX`] of them), non-blocking.
pub(super) fn send_vectored(fd: RawFd, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    let count = bufs.len().min(IOV_MAX);
    // SAFETY: all-zero is a valid msghdr (no name, no control data).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    // `IoSlice` is ABI-compatible with `iovec` on Unix (std documents it); sendmsg only
    // reads through the pointer.
    msg.msg_iov = bufs.as_ptr().cast_mut().cast();
    msg.msg_iovlen = count as _;
    // SAFETY: `msg` points at `count` valid iovecs that live for the call; nothing is kept.
    let n = unsafe { libc::sendmsg(fd, &msg, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) };
    result(n)
}

/// `recvmsg` into `bufs` in order (at most [`IOV_MAX`] of them), non-blocking.
pub(super) fn recv_vectored(fd: RawFd, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
    let count = bufs.len().min(IOV_MAX);
    // SAFETY: all-zero is a valid msghdr (no name, no control data).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    // `IoSliceMut` is ABI-compatible with `iovec` on Unix (std documents it); recvmsg writes
    // bytes through the slices' pointers, each within its length.
    msg.msg_iov = bufs.as_mut_ptr().cast();
    msg.msg_iovlen = count as _;
    // SAFETY: `msg` points at `count` valid iovecs over buffers borrowed mutably for the
    // call; the kernel writes at most their lengths and keeps nothing.
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
    result(n)
}

/// `shutdown(fd, SHUT_WR)`: queues the FIN after every byte already sent. Never blocks.
///
/// `ENOTCONN` (the connection is already closed, e.g. the peer reset it) is success: the
/// write side is shut either way, and an HTTP/2 server shutting down a connection its client
/// already dropped must not fail because of it.
pub(super) fn shutdown_write(fd: RawFd) -> io::Result<()> {
    // SAFETY: plain system call on a descriptor the caller holds open.
    if unsafe { libc::shutdown(fd, libc::SHUT_WR) } < 0 {
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::ENOTCONN) {
            return Err(err);
        }
    }
    Ok(())
}

fn result(n: isize) -> io::Result<usize> {
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
