//! Per-opcode flag values: what goes into `op_flags`, `ioprio`, `len` or `addr` for an opcode.

/// FSYNC: `fdatasync` instead of `fsync`.
pub const IORING_FSYNC_DATASYNC: u32 = 1 << 0;

/// TIMEOUT: the timespec is absolute, not relative.
pub const IORING_TIMEOUT_ABS: u32 = 1 << 0;
/// TIMEOUT_REMOVE: update the timeout instead of removing it.
pub const IORING_TIMEOUT_UPDATE: u32 = 1 << 1;
/// TIMEOUT: measure against `CLOCK_BOOTTIME`.
pub const IORING_TIMEOUT_BOOTTIME: u32 = 1 << 2;
/// TIMEOUT: measure against `CLOCK_REALTIME`.
pub const IORING_TIMEOUT_REALTIME: u32 = 1 << 3;
/// TIMEOUT_REMOVE: update a linked timeout.
pub const IORING_LINK_TIMEOUT_UPDATE: u32 = 1 << 4;
/// TIMEOUT: complete with `res = 0` instead of `-ETIME` when it expires.
pub const IORING_TIMEOUT_ETIME_SUCCESS: u32 = 1 << 5;
/// TIMEOUT: fire repeatedly (6.4).
pub const IORING_TIMEOUT_MULTISHOT: u32 = 1 << 6;
/// Mask of the clock-selection timeout flags.
pub const IORING_TIMEOUT_CLOCK_MASK: u32 = IORING_TIMEOUT_BOOTTIME | IORING_TIMEOUT_REALTIME;
/// Mask of the update timeout flags.
pub const IORING_TIMEOUT_UPDATE_MASK: u32 = IORING_TIMEOUT_UPDATE | IORING_LINK_TIMEOUT_UPDATE;

/// SPLICE/TEE: `splice_fd_in` is a fixed-file index.
pub const SPLICE_F_FD_IN_FIXED: u32 = 1 << 31;

/// POLL_ADD (in `len`): multishot poll, one CQE per event (5.13).
pub const IORING_POLL_ADD_MULTI: u32 = 1 << 0;
/// POLL_REMOVE (in `len`): update the events of an existing poll.
pub const IORING_POLL_UPDATE_EVENTS: u32 = 1 << 1;
/// POLL_REMOVE (in `len`): update the `user_data` of an existing poll.
pub const IORING_POLL_UPDATE_USER_DATA: u32 = 1 << 2;
/// POLL_ADD (in `len`): level-triggered poll.
pub const IORING_POLL_ADD_LEVEL: u32 = 1 << 3;

/// ASYNC_CANCEL: cancel every matching request, not just the first.
pub const IORING_ASYNC_CANCEL_ALL: u32 = 1 << 0;
/// ASYNC_CANCEL: match on `fd` instead of `user_data`.
pub const IORING_ASYNC_CANCEL_FD: u32 = 1 << 1;
/// ASYNC_CANCEL: match any request.
pub const IORING_ASYNC_CANCEL_ANY: u32 = 1 << 2;
/// ASYNC_CANCEL: `fd` is a fixed-file index.
pub const IORING_ASYNC_CANCEL_FD_FIXED: u32 = 1 << 3;
/// ASYNC_CANCEL: match on `user_data` (explicit, combinable with other keys; 6.6).
pub const IORING_ASYNC_CANCEL_USERDATA: u32 = 1 << 4;
/// ASYNC_CANCEL: match on opcode (6.6).
pub const IORING_ASYNC_CANCEL_OP: u32 = 1 << 5;

/// SEND/RECV (in `ioprio`): poll the socket before trying the operation.
pub const IORING_RECVSEND_POLL_FIRST: u16 = 1 << 0;
/// RECV/RECVMSG (in `ioprio`): multishot receive with provided buffers (6.0).
pub const IORING_RECV_MULTISHOT: u16 = 1 << 1;
/// SEND_ZC (in `ioprio`): the buffer is a registered buffer (`buf_index`).
pub const IORING_RECVSEND_FIXED_BUF: u16 = 1 << 2;
/// SEND_ZC (in `ioprio`): report in the notification whether the data was copied.
pub const IORING_SEND_ZC_REPORT_USAGE: u16 = 1 << 3;
/// SEND/RECV (in `ioprio`): bundle several provided buffers into one operation (6.10).
pub const IORING_RECVSEND_BUNDLE: u16 = 1 << 4;
/// Notification `res` bit with `SEND_ZC_REPORT_USAGE`: the data was copied after all.
pub const IORING_NOTIF_USAGE_ZC_COPIED: u32 = 1 << 31;

/// ACCEPT (in `ioprio`): multishot accept, one CQE per connection (5.19).
pub const IORING_ACCEPT_MULTISHOT: u16 = 1 << 0;
/// ACCEPT (in `ioprio`): do not wait if no connection is pending (6.10).
pub const IORING_ACCEPT_DONTWAIT: u16 = 1 << 1;
/// ACCEPT (in `ioprio`): poll before accepting (6.10).
pub const IORING_ACCEPT_POLL_FIRST: u16 = 1 << 2;

/// MSG_RING (in `addr`): post a CQE with `len` as `res` and `off` as `user_data`.
pub const IORING_MSG_DATA: u64 = 0;
/// MSG_RING (in `addr`): pass the fixed file `addr3` to slot `file_index` of the target.
pub const IORING_MSG_SEND_FD: u64 = 1;
/// MSG_RING (in `msg_ring_flags`): post no CQE in the *target* ring (only for SEND_FD).
pub const IORING_MSG_RING_CQE_SKIP: u32 = 1 << 0;
/// MSG_RING (in `msg_ring_flags`): use `file_index` as the target CQE's `flags` (6.3).
pub const IORING_MSG_RING_FLAGS_PASS: u32 = 1 << 1;

/// FIXED_FD_INSTALL (in `install_fd_flags`): do not set `O_CLOEXEC` on the new fd.
pub const IORING_FIXED_FD_NO_CLOEXEC: u32 = 1 << 0;

/// OPENAT/ACCEPT/SOCKET (in `file_index`): allocate a free fixed-file slot.
pub const IORING_FILE_INDEX_ALLOC: u32 = !0;
