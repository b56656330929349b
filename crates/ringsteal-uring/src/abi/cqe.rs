//! `struct io_uring_cqe`: one completion queue entry, 16 bytes (32 with `SETUP_CQE32`).

/// `IORING_CQE_F_BUFFER`: a provided buffer was used; its id is `flags >> IORING_CQE_BUFFER_SHIFT`.
pub const IORING_CQE_F_BUFFER: u32 = 1 << 0;
/// `IORING_CQE_F_MORE`: the request is still active and will post more CQEs (multishot,
/// zero-copy send). A CQE without it is the request's last.
pub const IORING_CQE_F_MORE: u32 = 1 << 1;
/// `IORING_CQE_F_SOCK_NONEMPTY`: after this recv, the socket still had data queued.
pub const IORING_CQE_F_SOCK_NONEMPTY: u32 = 1 << 2;
/// `IORING_CQE_F_NOTIF`: this is a zero-copy send's notification: the buffer may now be reused.
pub const IORING_CQE_F_NOTIF: u32 = 1 << 3;
/// `IORING_CQE_F_BUF_MORE`: the (incrementally consumed) provided buffer is not used up yet.
pub const IORING_CQE_F_BUF_MORE: u32 = 1 << 4;
/// `IORING_CQE_F_SKIP`: a padding CQE to be skipped (mixed CQE sizes).
pub const IORING_CQE_F_SKIP: u32 = 1 << 5;
/// `IORING_CQE_F_32`: this CQE is 32 bytes (mixed CQE sizes).
pub const IORING_CQE_F_32: u32 = 1 << 15;
/// Shift of the buffer id in `flags` when `IORING_CQE_F_BUFFER` is set.
pub const IORING_CQE_BUFFER_SHIFT: u32 = 16;

/// One completion queue entry (`struct io_uring_cqe`), exactly as the kernel writes it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct io_uring_cqe {
    /// The `user_data` of the SQE this completes (for MSG_RING targets: the sender's `off`).
    pub user_data: u64,
    /// The result: what the syscall would return, or `-errno` on failure.
    pub res: i32,
    /// `IORING_CQE_F_*` flags, and the buffer id in the upper 16 bits with `F_BUFFER`.
    pub flags: u32,
}

const _: () = assert!(std::mem::size_of::<io_uring_cqe>() == 16);

/// `struct io_uring_recvmsg_out`: the header a multishot `IORING_OP_RECVMSG` writes at the
/// start of each provided buffer it fills. After it come `msg_namelen` bytes of room for the
/// source address (as the SQE's msghdr asked), then `msg_controllen` bytes of room for
/// control messages, then the payload.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct io_uring_recvmsg_out {
    /// Length of the source address (it was truncated if larger than the room given).
    pub namelen: u32,
    /// Length of the control data.
    pub controllen: u32,
    /// Length of the payload (before any truncation to the buffer's room).
    pub payloadlen: u32,
    /// `recvmsg` flags (`MSG_TRUNC`, `MSG_CTRUNC`, ...).
    pub flags: u32,
}
