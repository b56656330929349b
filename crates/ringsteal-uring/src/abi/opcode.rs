//! Opcode numbers (`enum io_uring_op`). The kernel appends new opcodes at the end; an opcode
//! this kernel does not know fails its request with `-EINVAL` (probe first: [`crate::Probe`]).

/// Does nothing; completes with `res = 0`. Used to test a ring and to wake a waiter.
pub const IORING_OP_NOP: u8 = 0;
/// `preadv2(fd, addr as *iovec, len iovecs, off, rw_flags)`.
pub const IORING_OP_READV: u8 = 1;
/// `pwritev2(fd, addr as *iovec, len iovecs, off, rw_flags)`.
pub const IORING_OP_WRITEV: u8 = 2;
/// `fsync(fd)`, or `fdatasync` with `IORING_FSYNC_DATASYNC` in `fsync_flags`.
pub const IORING_OP_FSYNC: u8 = 3;
/// Read into a registered buffer (`buf_index`), `addr`/`len` inside it, at `off`.
pub const IORING_OP_READ_FIXED: u8 = 4;
/// Write from a registered buffer (`buf_index`), `addr`/`len` inside it, at `off`.
pub const IORING_OP_WRITE_FIXED: u8 = 5;
/// Poll `fd` for `poll32_events`; multishot with `IORING_POLL_ADD_MULTI` in `len`.
pub const IORING_OP_POLL_ADD: u8 = 6;
/// Remove a poll request whose `user_data` is given in `addr`.
pub const IORING_OP_POLL_REMOVE: u8 = 7;
/// `sync_file_range(fd, off, len, sync_range_flags)`.
pub const IORING_OP_SYNC_FILE_RANGE: u8 = 8;
/// `sendmsg(fd, addr as *msghdr, msg_flags)`.
pub const IORING_OP_SENDMSG: u8 = 9;
/// `recvmsg(fd, addr as *msghdr, msg_flags)`.
pub const IORING_OP_RECVMSG: u8 = 10;
/// A timeout: `addr` points at a `__kernel_timespec`, `off` is a completion count.
pub const IORING_OP_TIMEOUT: u8 = 11;
/// Remove (or, with `IORING_TIMEOUT_UPDATE`, update) the timeout whose `user_data` is `addr`.
pub const IORING_OP_TIMEOUT_REMOVE: u8 = 12;
/// `accept4(fd, addr as *sockaddr, addr2 as *socklen_t, accept_flags)`.
pub const IORING_OP_ACCEPT: u8 = 13;
/// Cancel the request whose `user_data` is `addr` (or by fd/opcode/any, per `cancel_flags`).
pub const IORING_OP_ASYNC_CANCEL: u8 = 14;
/// A timeout for the previous SQE in a link chain: `addr` points at a `__kernel_timespec`.
pub const IORING_OP_LINK_TIMEOUT: u8 = 15;
/// `connect(fd, addr as *sockaddr, off as socklen_t)`.
pub const IORING_OP_CONNECT: u8 = 16;
/// `fallocate(fd, len as mode, off, addr as length)`.
pub const IORING_OP_FALLOCATE: u8 = 17;
/// `openat(fd as dirfd, addr as *path, open_flags, len as mode)`.
pub const IORING_OP_OPENAT: u8 = 18;
/// `close(fd)`, or remove the fixed file `file_index - 1`.
pub const IORING_OP_CLOSE: u8 = 19;
/// Update registered files: `addr` points at fds, `len` of them, starting at `off`.
pub const IORING_OP_FILES_UPDATE: u8 = 20;
/// `statx(fd as dirfd, addr as *path, statx_flags, len as mask, addr2 as *statx)`.
pub const IORING_OP_STATX: u8 = 21;
/// `pread(fd, addr, len, off)`; `off = -1` uses and advances the file position.
pub const IORING_OP_READ: u8 = 22;
/// `pwrite(fd, addr, len, off)`; `off = -1` uses and advances the file position.
pub const IORING_OP_WRITE: u8 = 23;
/// `posix_fadvise(fd, off, len, fadvise_advice)`.
pub const IORING_OP_FADVISE: u8 = 24;
/// `madvise(addr, len, fadvise_advice)`.
pub const IORING_OP_MADVISE: u8 = 25;
/// `send(fd, addr, len, msg_flags)`; `addr2`/`addr_len` give a destination (6.0).
pub const IORING_OP_SEND: u8 = 26;
/// `recv(fd, addr, len, msg_flags)`; multishot with `IORING_RECV_MULTISHOT` in `ioprio`.
pub const IORING_OP_RECV: u8 = 27;
/// `openat2(fd as dirfd, addr as *path, addr2 as *open_how, len as sizeof(open_how))`.
pub const IORING_OP_OPENAT2: u8 = 28;
/// `epoll_ctl(fd as epfd, len as op, off as fd, addr as *epoll_event)`.
pub const IORING_OP_EPOLL_CTL: u8 = 29;
/// `splice(splice_fd_in, splice_off_in, fd, off, len, splice_flags)`.
pub const IORING_OP_SPLICE: u8 = 30;
/// Provide `fd` (count) buffers of `len` bytes at `addr` to group `buf_group`, ids from `off`.
pub const IORING_OP_PROVIDE_BUFFERS: u8 = 31;
/// Remove `fd` (count) buffers from group `buf_group`.
pub const IORING_OP_REMOVE_BUFFERS: u8 = 32;
/// `tee(splice_fd_in, fd, len, splice_flags)`.
pub const IORING_OP_TEE: u8 = 33;
/// `shutdown(fd, len as how)`.
pub const IORING_OP_SHUTDOWN: u8 = 34;
/// `renameat2(fd, addr as *old, len as newdirfd, addr2 as *new, rename_flags)`.
pub const IORING_OP_RENAMEAT: u8 = 35;
/// `unlinkat(fd, addr as *path, unlink_flags)`.
pub const IORING_OP_UNLINKAT: u8 = 36;
/// `mkdirat(fd, addr as *path, len as mode)`.
pub const IORING_OP_MKDIRAT: u8 = 37;
/// `symlinkat(addr as *target, fd as newdirfd, addr2 as *linkpath)`.
pub const IORING_OP_SYMLINKAT: u8 = 38;
/// `linkat(fd, addr as *old, len as newdirfd, addr2 as *new, hardlink_flags)`.
pub const IORING_OP_LINKAT: u8 = 39;
/// Post a CQE into another ring (`fd` is its ring fd): `len` becomes its `res`, `off` its
/// `user_data` (5.18). With `addr = IORING_MSG_SEND_FD`, pass a fixed file instead.
pub const IORING_OP_MSG_RING: u8 = 40;
/// `fsetxattr(fd, addr as *name, addr2 as *value, len, xattr_flags)`.
pub const IORING_OP_FSETXATTR: u8 = 41;
/// `setxattr(addr3 as *path, addr as *name, addr2 as *value, len, xattr_flags)`.
pub const IORING_OP_SETXATTR: u8 = 42;
/// `fgetxattr(fd, addr as *name, addr2 as *value, len)`.
pub const IORING_OP_FGETXATTR: u8 = 43;
/// `getxattr(addr3 as *path, addr as *name, addr2 as *value, len)`.
pub const IORING_OP_GETXATTR: u8 = 44;
/// `socket(fd as domain, off as type, len as protocol)`; direct with `file_index` (5.19).
pub const IORING_OP_SOCKET: u8 = 45;
/// A driver-specific command (`cmd_op`, `cmd`) passed to the file's `uring_cmd` handler.
pub const IORING_OP_URING_CMD: u8 = 46;
/// Zero-copy send (6.0): a first CQE with `F_MORE`, then a notification CQE with `F_NOTIF`.
pub const IORING_OP_SEND_ZC: u8 = 47;
/// Zero-copy `sendmsg` (6.1), same two-CQE protocol as `SEND_ZC`.
pub const IORING_OP_SENDMSG_ZC: u8 = 48;
/// Multishot read into provided buffers (6.7).
pub const IORING_OP_READ_MULTISHOT: u8 = 49;
/// `waitid(len as idtype, fd as id, addr2 as *siginfo, file_index as options)` (6.7).
pub const IORING_OP_WAITID: u8 = 50;
/// Futex wait (6.7).
pub const IORING_OP_FUTEX_WAIT: u8 = 51;
/// Futex wake (6.7).
pub const IORING_OP_FUTEX_WAKE: u8 = 52;
/// Vectored futex wait (6.7).
pub const IORING_OP_FUTEX_WAITV: u8 = 53;
/// Install a fixed file as a normal fd (6.8).
pub const IORING_OP_FIXED_FD_INSTALL: u8 = 54;
/// `ftruncate(fd, off)` (6.9).
pub const IORING_OP_FTRUNCATE: u8 = 55;
/// `bind(fd, addr as *sockaddr, addr2 as socklen_t)` (6.11).
pub const IORING_OP_BIND: u8 = 56;
/// `listen(fd, len as backlog)` (6.11).
pub const IORING_OP_LISTEN: u8 = 57;
/// Zero-copy receive into a registered interface queue (6.15).
pub const IORING_OP_RECV_ZC: u8 = 58;
/// `epoll_wait(fd, addr as *events, len as maxevents)` (6.15).
pub const IORING_OP_EPOLL_WAIT: u8 = 59;
/// Vectored read with registered buffers (6.15).
pub const IORING_OP_READV_FIXED: u8 = 60;
/// Vectored write with registered buffers (6.15).
pub const IORING_OP_WRITEV_FIXED: u8 = 61;
/// `pipe2(addr as *[i32; 2], pipe_flags)` (6.16).
pub const IORING_OP_PIPE: u8 = 62;

/// Every opcode this binding knows, with its name, for probes and tables.
pub const OPCODE_NAMES: &[(u8, &str)] = &[
    (IORING_OP_NOP, "NOP"),
    (IORING_OP_READV, "READV"),
    (IORING_OP_WRITEV, "WRITEV"),
    (IORING_OP_FSYNC, "FSYNC"),
    (IORING_OP_READ_FIXED, "READ_FIXED"),
    (IORING_OP_WRITE_FIXED, "WRITE_FIXED"),
    (IORING_OP_POLL_ADD, "POLL_ADD"),
    (IORING_OP_POLL_REMOVE, "POLL_REMOVE"),
    (IORING_OP_SYNC_FILE_RANGE, "SYNC_FILE_RANGE"),
    (IORING_OP_SENDMSG, "SENDMSG"),
    (IORING_OP_RECVMSG, "RECVMSG"),
    (IORING_OP_TIMEOUT, "TIMEOUT"),
    (IORING_OP_TIMEOUT_REMOVE, "TIMEOUT_REMOVE"),
    (IORING_OP_ACCEPT, "ACCEPT"),
    (IORING_OP_ASYNC_CANCEL, "ASYNC_CANCEL"),
    (IORING_OP_LINK_TIMEOUT, "LINK_TIMEOUT"),
    (IORING_OP_CONNECT, "CONNECT"),
    (IORING_OP_FALLOCATE, "FALLOCATE"),
    (IORING_OP_OPENAT, "OPENAT"),
    (IORING_OP_CLOSE, "CLOSE"),
    (IORING_OP_FILES_UPDATE, "FILES_UPDATE"),
    (IORING_OP_STATX, "STATX"),
    (IORING_OP_READ, "READ"),
    (IORING_OP_WRITE, "WRITE"),
    (IORING_OP_FADVISE, "FADVISE"),
    (IORING_OP_MADVISE, "MADVISE"),
    (IORING_OP_SEND, "SEND"),
    (IORING_OP_RECV, "RECV"),
    (IORING_OP_OPENAT2, "OPENAT2"),
    (IORING_OP_EPOLL_CTL, "EPOLL_CTL"),
    (IORING_OP_SPLICE, "SPLICE"),
    (IORING_OP_PROVIDE_BUFFERS, "PROVIDE_BUFFERS"),
    (IORING_OP_REMOVE_BUFFERS, "REMOVE_BUFFERS"),
    (IORING_OP_TEE, "TEE"),
    (IORING_OP_SHUTDOWN, "SHUTDOWN"),
    (IORING_OP_RENAMEAT, "RENAMEAT"),
    (IORING_OP_UNLINKAT, "UNLINKAT"),
    (IORING_OP_MKDIRAT, "MKDIRAT"),
    (IORING_OP_SYMLINKAT, "SYMLINKAT"),
    (IORING_OP_LINKAT, "LINKAT"),
    (IORING_OP_MSG_RING, "MSG_RING"),
    (IORING_OP_FSETXATTR, "FSETXATTR"),
    (IORING_OP_SETXATTR, "SETXATTR"),
    (IORING_OP_FGETXATTR, "FGETXATTR"),
    (IORING_OP_GETXATTR, "GETXATTR"),
    (IORING_OP_SOCKET, "SOCKET"),
    (IORING_OP_URING_CMD, "URING_CMD"),
    (IORING_OP_SEND_ZC, "SEND_ZC"),
    (IORING_OP_SENDMSG_ZC, "SENDMSG_ZC"),
    (IORING_OP_READ_MULTISHOT, "READ_MULTISHOT"),
    (IORING_OP_WAITID, "WAITID"),
    (IORING_OP_FUTEX_WAIT, "FUTEX_WAIT"),
    (IORING_OP_FUTEX_WAKE, "FUTEX_WAKE"),
    (IORING_OP_FUTEX_WAITV, "FUTEX_WAITV"),
    (IORING_OP_FIXED_FD_INSTALL, "FIXED_FD_INSTALL"),
    (IORING_OP_FTRUNCATE, "FTRUNCATE"),
    (IORING_OP_BIND, "BIND"),
    (IORING_OP_LISTEN, "LISTEN"),
    (IORING_OP_RECV_ZC, "RECV_ZC"),
    (IORING_OP_EPOLL_WAIT, "EPOLL_WAIT"),
    (IORING_OP_READV_FIXED, "READV_FIXED"),
    (IORING_OP_WRITEV_FIXED, "WRITEV_FIXED"),
    (IORING_OP_PIPE, "PIPE"),
];

/// The name of an opcode (`"READ"`), or `None` for a number this binding does not know.
pub fn opcode_name(op: u8) -> Option<&'static str> {
    OPCODE_NAMES
        .get(op as usize)
        .filter(|(n, _)| *n == op)
        .map(|(_, name)| *name)
}
