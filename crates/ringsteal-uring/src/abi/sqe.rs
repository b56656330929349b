//! `struct io_uring_sqe`: one submission queue entry, 64 bytes.
//!
//! The kernel reads an SQE once, when it consumes it from the submission queue; after that the
//! slot can be reused. But the memory an SQE *points at* (buffers, paths, iovecs, sockaddrs,
//! timespecs) is read or written by the kernel until the request's final CQE, unless an opcode
//! says it copies the data at submission time.
//!
//! Unions are declared as Rust unions with one member per kernel alias, so every name the
//! header uses exists here. Writing a union member is safe; reading one is `unsafe` only in the
//! Rust sense (all members are plain integers, so any bit pattern is valid).

/// `IOSQE_FIXED_FILE`: `fd` is an index into the registered file table, not a descriptor.
pub const IOSQE_FIXED_FILE: u8 = 1 << 0;
/// `IOSQE_IO_DRAIN`: start this request only after every earlier request has completed.
pub const IOSQE_IO_DRAIN: u8 = 1 << 1;
/// `IOSQE_IO_LINK`: the next SQE starts only when this one succeeds; a failure (or a short
/// read/write) cancels the rest of the chain with `-ECANCELED`.
pub const IOSQE_IO_LINK: u8 = 1 << 2;
/// `IOSQE_IO_HARDLINK`: like `IO_LINK`, but the chain continues even if this request fails.
pub const IOSQE_IO_HARDLINK: u8 = 1 << 3;
/// `IOSQE_ASYNC`: skip the non-blocking attempt and go straight to the io-wq worker pool.
pub const IOSQE_ASYNC: u8 = 1 << 4;
/// `IOSQE_BUFFER_SELECT`: pick a buffer from the provided-buffer group `buf_group`; the CQE
/// carries `IORING_CQE_F_BUFFER` and the buffer id in the upper 16 bits of `flags`.
pub const IOSQE_BUFFER_SELECT: u8 = 1 << 5;
/// `IOSQE_CQE_SKIP_SUCCESS`: post no CQE if the request succeeds (5.17; feature `CQE_SKIP`).
pub const IOSQE_CQE_SKIP_SUCCESS: u8 = 1 << 6;

/// Bytes 8..16: the file offset, or a second address.
#[repr(C)]
#[derive(Clone, Copy)]
pub union io_uring_sqe_off {
    /// File offset for read/write/fsync-range/fallocate/splice-out; `-1` (all ones) means
    /// "the current file position" for READ/WRITE. MSG_RING: the target CQE's `user_data`.
    /// TIMEOUT: the completion count. CONNECT: the `socklen_t` of `addr`. SOCKET: the type.
    pub off: u64,
    /// Second pointer: ACCEPT's `*socklen_t`, STATX's `*statx`, RENAMEAT/LINKAT/SYMLINKAT's
    /// second path, OPENAT2's `*open_how`, SEND's destination sockaddr, WAITID's `*siginfo`.
    pub addr2: u64,
    /// URING_CMD: the command number and padding.
    pub cmd: io_uring_sqe_cmd_op,
}

/// URING_CMD's view of bytes 8..16.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct io_uring_sqe_cmd_op {
    /// The driver-specific command number.
    pub cmd_op: u32,
    /// Reserved, must be zero.
    pub __pad1: u32,
}

/// Bytes 16..24: the main pointer.
#[repr(C)]
#[derive(Clone, Copy)]
pub union io_uring_sqe_addr {
    /// Buffer (READ/WRITE/SEND/RECV), `*iovec` (READV/WRITEV), `*msghdr` (SENDMSG/RECVMSG),
    /// path (OPENAT/STATX/UNLINKAT/MKDIRAT...), `*__kernel_timespec` (TIMEOUT/LINK_TIMEOUT),
    /// `*sockaddr` (ACCEPT/CONNECT/BIND), the `user_data` to cancel (ASYNC_CANCEL/POLL_REMOVE),
    /// the message kind (MSG_RING), the length (FALLOCATE).
    pub addr: u64,
    /// SPLICE: the offset in `splice_fd_in`, or `-1` for none.
    pub splice_off_in: u64,
    /// URING_CMD socket options: level and option name.
    pub sockopt: io_uring_sqe_sockopt,
}

/// Socket option commands' view of bytes 16..24.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct io_uring_sqe_sockopt {
    /// The option level (`SOL_SOCKET`, ...).
    pub level: u32,
    /// The option name.
    pub optname: u32,
}

/// Bytes 28..32: the per-opcode flags word. Which member the kernel reads depends on `opcode`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union io_uring_sqe_op_flags {
    /// READ/WRITE/READV/WRITEV: `RWF_*` flags (`RWF_NOWAIT`, `RWF_HIPRI`, ...).
    pub rw_flags: i32,
    /// FSYNC: `IORING_FSYNC_DATASYNC`.
    pub fsync_flags: u32,
    /// POLL_ADD (pre-5.9 layout): 16-bit poll mask.
    pub poll_events: u16,
    /// POLL_ADD: 32-bit `POLL*` mask (feature `POLL_32BITS`).
    pub poll32_events: u32,
    /// SYNC_FILE_RANGE: `SYNC_FILE_RANGE_*` flags.
    pub sync_range_flags: u32,
    /// SENDMSG/RECVMSG/SEND/RECV: `MSG_*` flags.
    pub msg_flags: u32,
    /// TIMEOUT/TIMEOUT_REMOVE/LINK_TIMEOUT: `IORING_TIMEOUT_*` flags.
    pub timeout_flags: u32,
    /// ACCEPT: `accept4` flags (`SOCK_CLOEXEC`, `SOCK_NONBLOCK`).
    pub accept_flags: u32,
    /// ASYNC_CANCEL: `IORING_ASYNC_CANCEL_*` flags.
    pub cancel_flags: u32,
    /// OPENAT: `O_*` open flags.
    pub open_flags: u32,
    /// STATX: `AT_*` flags.
    pub statx_flags: u32,
    /// FADVISE/MADVISE: the advice.
    pub fadvise_advice: u32,
    /// SPLICE/TEE: `SPLICE_F_*` flags, plus `SPLICE_F_FD_IN_FIXED`.
    pub splice_flags: u32,
    /// RENAMEAT: `RENAME_*` flags.
    pub rename_flags: u32,
    /// UNLINKAT: `AT_REMOVEDIR`.
    pub unlink_flags: u32,
    /// LINKAT: `AT_*` flags.
    pub hardlink_flags: u32,
    /// SETXATTR/FSETXATTR: `XATTR_*` flags.
    pub xattr_flags: u32,
    /// MSG_RING: `IORING_MSG_RING_*` flags.
    pub msg_ring_flags: u32,
    /// URING_CMD: `IORING_URING_CMD_*` flags.
    pub uring_cmd_flags: u32,
    /// WAITID: reserved flags (options go in `file_index`).
    pub waitid_flags: u32,
    /// FUTEX_*: futex flags.
    pub futex_flags: u32,
    /// FIXED_FD_INSTALL: `IORING_FIXED_FD_NO_CLOEXEC`.
    pub install_fd_flags: u32,
    /// NOP: `IORING_NOP_*` flags (6.x test hooks).
    pub nop_flags: u32,
    /// EPOLL_WAIT: `IORING_EPOLL_WAIT_*` flags (6.15).
    pub epoll_flags: u32,
    /// PIPE: `pipe2` flags (`O_CLOEXEC`, `O_NONBLOCK`, ...) (6.16).
    pub pipe_flags: u32,
}

/// Bytes 40..42: which registered buffer or buffer group.
#[repr(C, packed)]
#[derive(Clone, Copy)]
pub union io_uring_sqe_buf {
    /// READ_FIXED/WRITE_FIXED (and `IORING_RECVSEND_FIXED_BUF`): index of a registered buffer.
    pub buf_index: u16,
    /// With `IOSQE_BUFFER_SELECT`: the provided-buffer group to pick from.
    pub buf_group: u16,
}

/// Bytes 44..48.
#[repr(C)]
#[derive(Clone, Copy)]
pub union io_uring_sqe_file_index {
    /// SPLICE/TEE: the input descriptor.
    pub splice_fd_in: i32,
    /// OPENAT/ACCEPT/SOCKET: install the new file into this fixed slot (1-based; 0 = normal
    /// fd; `IORING_FILE_INDEX_ALLOC` = pick a free slot). CLOSE: the fixed slot to close.
    /// MSG_RING with `IORING_MSG_RING_FLAGS_PASS`: the `flags` of the target CQE.
    /// WAITID: the `options`.
    pub file_index: u32,
    /// URING_CMD socket options: the option length.
    pub optlen: u32,
    /// SEND with a destination: the sockaddr length.
    pub addr_len: io_uring_sqe_addr_len,
}

/// SEND's view of bytes 44..48.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct io_uring_sqe_addr_len {
    /// Length of the sockaddr at `addr2`.
    pub addr_len: u16,
    /// Reserved.
    pub __pad3: [u16; 1],
}

/// Bytes 48..64.
#[repr(C)]
#[derive(Clone, Copy)]
pub union io_uring_sqe_addr3 {
    /// Third pointer and padding.
    pub addr3: io_uring_sqe_addr3_pad,
    /// READ/WRITE with read/write attributes (6.14): where they are and which kinds.
    pub attr: io_uring_sqe_attr,
    /// URING_CMD socket options: pointer to the option value.
    pub optval: u64,
    /// URING_CMD: the first 16 bytes of the inline command (80 with `SETUP_SQE128`).
    pub cmd: [u8; 0],
}

/// The `addr3` member of bytes 48..64.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct io_uring_sqe_addr3_pad {
    /// SETXATTR/GETXATTR: the path. SEND/RECV with `IORING_RECVSEND_FIXED_BUF` and some
    /// commands: an extra address.
    pub addr3: u64,
    /// Reserved.
    pub __pad2: [u64; 1],
}

/// The read/write-attribute member of bytes 48..64 (`IORING_FEAT_RW_ATTR`, 6.14).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct io_uring_sqe_attr {
    /// Pointer to the attribute data (for `IORING_RW_ATTR_FLAG_PI`: a `struct
    /// io_uring_attr_pi` describing protection-information metadata).
    pub attr_ptr: u64,
    /// Bit mask of the attribute kinds present at `attr_ptr` (`IORING_RW_ATTR_FLAG_*`).
    pub attr_type_mask: u64,
}

/// One submission queue entry (`struct io_uring_sqe`), exactly as the kernel reads it.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct io_uring_sqe {
    /// The operation (`IORING_OP_*`).
    pub opcode: u8,
    /// `IOSQE_*` flags: fixed file, drain, link, hardlink, async, buffer select, skip success.
    pub flags: u8,
    /// I/O priority for read/write (`ioprio_set` values); for SEND/RECV the
    /// `IORING_RECVSEND_*` flags; for ACCEPT the `IORING_ACCEPT_*` flags.
    pub ioprio: u16,
    /// The file descriptor (or fixed-file index with `IOSQE_FIXED_FILE`). MSG_RING: the
    /// target ring's fd. SOCKET: the domain. Unused opcodes want `-1` or `0` per the man page.
    pub fd: i32,
    /// Bytes 8..16: offset or second address.
    pub off: io_uring_sqe_off,
    /// Bytes 16..24: main address.
    pub addr: io_uring_sqe_addr,
    /// Buffer length, iovec count, mode (OPENAT/MKDIRAT), poll multishot flags (POLL_ADD),
    /// timeout count, MSG_RING's target `res`, LISTEN's backlog, SHUTDOWN's `how`.
    pub len: u32,
    /// Bytes 28..32: the opcode's flags word.
    pub op_flags: io_uring_sqe_op_flags,
    /// Opaque value copied into this request's CQE(s); how the submitter finds its request.
    pub user_data: u64,
    /// Bytes 40..42: registered buffer index or buffer group.
    pub buf: io_uring_sqe_buf,
    /// Credentials registered with `IORING_REGISTER_PERSONALITY` to run this request as.
    pub personality: u16,
    /// Bytes 44..48: splice input, fixed-file slot, option length or address length.
    pub file_index: io_uring_sqe_file_index,
    /// Bytes 48..64: third address or inline command.
    pub addr3: io_uring_sqe_addr3,
}

impl io_uring_sqe {
    /// An all-zero SQE: opcode NOP, no flags, `user_data` 0.
    pub const fn zeroed() -> Self {
        // SAFETY: io_uring_sqe is a plain-old-data C struct made of integers and unions of
        // integers; the all-zero bit pattern is a valid value of every field.
        unsafe { std::mem::zeroed() }
    }
}

impl Default for io_uring_sqe {
    fn default() -> Self {
        Self::zeroed()
    }
}

impl std::fmt::Debug for io_uring_sqe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // SAFETY: every union member is an integer (or integer array); any bit pattern is a
        // valid value, so reading the widest member of each union is sound.
        let (off, addr, op_flags, buf, file_index, addr3) = unsafe {
            (
                self.off.off,
                self.addr.addr,
                self.op_flags.rw_flags,
                self.buf.buf_index,
                self.file_index.file_index,
                self.addr3.addr3.addr3,
            )
        };
        f.debug_struct("io_uring_sqe")
            .field("opcode", &self.opcode)
            .field("flags", &self.flags)
            .field("ioprio", &self.ioprio)
            .field("fd", &self.fd)
            .field("off", &off)
            .field("addr", &addr)
            .field("len", &self.len)
            .field("op_flags", &op_flags)
            .field("user_data", &self.user_data)
            .field("buf_index", &buf)
            .field("personality", &self.personality)
            .field("file_index", &file_index)
            .field("addr3", &addr3)
            .finish()
    }
}

const _: () = assert!(std::mem::size_of::<io_uring_sqe>() == 64);
