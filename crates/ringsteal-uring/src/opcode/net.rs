//! SOCKET, CONNECT, ACCEPT, SEND, RECV, SENDMSG, RECVMSG, SEND_ZC, SHUTDOWN, BIND and LISTEN.

use std::os::fd::RawFd;

use super::base;
use crate::abi::*;

/// `IORING_OP_SOCKET`: `socket(domain, type, protocol)` (5.19).
pub fn socket(domain: i32, ty: i32, protocol: i32) -> io_uring_sqe {
    base(IORING_OP_SOCKET, domain, 0, protocol as u32, ty as u64)
}

/// `IORING_OP_CONNECT`: `connect(fd, addr, addrlen)`; `*addr` must stay valid until the CQE.
pub fn connect(fd: RawFd, addr: *const libc::sockaddr, addrlen: libc::socklen_t) -> io_uring_sqe {
    base(IORING_OP_CONNECT, fd, addr as u64, 0, u64::from(addrlen))
}

/// `IORING_OP_ACCEPT`: `accept4(fd, addr, addrlen, flags)`; `addr`/`addrlen` may be null.
pub fn accept(
    fd: RawFd,
    addr: *mut libc::sockaddr,
    addrlen: *mut libc::socklen_t,
    flags: i32,
) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_ACCEPT, fd, addr as u64, 0, 0);
    sqe.off.addr2 = addrlen as u64;
    sqe.op_flags.accept_flags = flags as u32;
    sqe
}

/// Multishot `IORING_OP_ACCEPT`: one CQE per connection, with `F_MORE` while it stays armed.
pub fn accept_multishot(fd: RawFd, flags: i32) -> io_uring_sqe {
    accept(fd, std::ptr::null_mut(), std::ptr::null_mut(), flags)
        .with_ioprio(IORING_ACCEPT_MULTISHOT)
}

/// `IORING_OP_SEND`: `send(fd, buf, len, flags)`.
pub fn send(fd: RawFd, buf: *const u8, len: u32, flags: i32) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_SEND, fd, buf as u64, len, 0);
    sqe.op_flags.msg_flags = flags as u32;
    sqe
}

/// `IORING_OP_SEND_ZC`: zero-copy send; `buf` must stay untouched until the notification CQE
/// (`IORING_CQE_F_NOTIF`), not just the first one.
pub fn send_zc(fd: RawFd, buf: *const u8, len: u32, flags: i32) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_SEND_ZC, fd, buf as u64, len, 0);
    sqe.op_flags.msg_flags = flags as u32;
    sqe
}

/// `IORING_OP_RECV`: `recv(fd, buf, len, flags)`.
pub fn recv(fd: RawFd, buf: *mut u8, len: u32, flags: i32) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_RECV, fd, buf as u64, len, 0);
    sqe.op_flags.msg_flags = flags as u32;
    sqe
}

/// Multishot `IORING_OP_RECV` into provided buffers of `group` (6.0): one CQE per receive,
/// with `F_MORE` while it stays armed; `-ENOBUFS` when the group ran dry.
pub fn recv_multishot(fd: RawFd, group: u16, flags: i32) -> io_uring_sqe {
    recv(fd, std::ptr::null_mut(), 0, flags)
        .with_ioprio(IORING_RECV_MULTISHOT)
        .with_buf_group(group)
}

/// `IORING_OP_SENDMSG`: `sendmsg(fd, msg, flags)`; the msghdr and everything it points at
/// must stay valid until the CQE.
pub fn sendmsg(fd: RawFd, msg: *const libc::msghdr, flags: i32) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_SENDMSG, fd, msg as u64, 1, 0);
    sqe.op_flags.msg_flags = flags as u32;
    sqe
}

/// `IORING_OP_RECVMSG`: `recvmsg(fd, msg, flags)`.
pub fn recvmsg(fd: RawFd, msg: *mut libc::msghdr, flags: i32) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_RECVMSG, fd, msg as u64, 1, 0);
    sqe.op_flags.msg_flags = flags as u32;
    sqe
}

/// `IORING_OP_SHUTDOWN`: `shutdown(fd, how)`.
pub fn shutdown(fd: RawFd, how: i32) -> io_uring_sqe {
    base(IORING_OP_SHUTDOWN, fd, 0, how as u32, 0)
}

/// `IORING_OP_BIND`: `bind(fd, addr, addrlen)` (6.11).
pub fn bind(fd: RawFd, addr: *const libc::sockaddr, addrlen: libc::socklen_t) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_BIND, fd, addr as u64, 0, 0);
    sqe.off.addr2 = u64::from(addrlen);
    sqe
}

/// `IORING_OP_LISTEN`: `listen(fd, backlog)` (6.11).
pub fn listen(fd: RawFd, backlog: i32) -> io_uring_sqe {
    base(IORING_OP_LISTEN, fd, 0, backlog as u32, 0)
}
