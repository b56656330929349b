//! `io_uring_setup(2)`: `struct io_uring_params`, the ring offsets, setup flags and features.

/// `IORING_SETUP_IOPOLL`: busy-poll for completions (O_DIRECT on pollable block devices only).
pub const IORING_SETUP_IOPOLL: u32 = 1 << 0;
/// `IORING_SETUP_SQPOLL`: a kernel thread polls the SQ; submission needs no syscall.
pub const IORING_SETUP_SQPOLL: u32 = 1 << 1;
/// `IORING_SETUP_SQ_AFF`: pin the SQPOLL thread to `sq_thread_cpu`.
pub const IORING_SETUP_SQ_AFF: u32 = 1 << 2;
/// `IORING_SETUP_CQSIZE`: use `cq_entries` from the params instead of twice the SQ size.
pub const IORING_SETUP_CQSIZE: u32 = 1 << 3;
/// `IORING_SETUP_CLAMP`: clamp oversized entry counts to the maximum instead of failing.
pub const IORING_SETUP_CLAMP: u32 = 1 << 4;
/// `IORING_SETUP_ATTACH_WQ`: share the io-wq of the ring `wq_fd`.
pub const IORING_SETUP_ATTACH_WQ: u32 = 1 << 5;
/// `IORING_SETUP_R_DISABLED`: start disabled; `IORING_REGISTER_ENABLE_RINGS` enables it
/// (and, with `SINGLE_ISSUER`, makes the enabling thread the only submitter).
pub const IORING_SETUP_R_DISABLED: u32 = 1 << 6;
/// `IORING_SETUP_SUBMIT_ALL`: keep submitting the batch after a request fails at submission.
pub const IORING_SETUP_SUBMIT_ALL: u32 = 1 << 7;
/// `IORING_SETUP_COOP_TASKRUN`: do not interrupt the task with an IPI to post completions;
/// they are posted at the next kernel entry (5.19).
pub const IORING_SETUP_COOP_TASKRUN: u32 = 1 << 8;
/// `IORING_SETUP_TASKRUN_FLAG`: set `IORING_SQ_TASKRUN` in the SQ flags when completions
/// wait for a kernel entry (with `COOP_TASKRUN` or `DEFER_TASKRUN`).
pub const IORING_SETUP_TASKRUN_FLAG: u32 = 1 << 9;
/// `IORING_SETUP_SQE128`: 128-byte SQEs (for `URING_CMD`).
pub const IORING_SETUP_SQE128: u32 = 1 << 10;
/// `IORING_SETUP_CQE32`: 32-byte CQEs.
pub const IORING_SETUP_CQE32: u32 = 1 << 11;
/// `IORING_SETUP_SINGLE_ISSUER`: only one task (the creator, or the enabler with
/// `R_DISABLED`) submits; others get `-EEXIST` (6.0).
pub const IORING_SETUP_SINGLE_ISSUER: u32 = 1 << 12;
/// `IORING_SETUP_DEFER_TASKRUN`: post completions only when the issuer enters with
/// `IORING_ENTER_GETEVENTS`; needs `SINGLE_ISSUER` (6.1).
pub const IORING_SETUP_DEFER_TASKRUN: u32 = 1 << 13;
/// `IORING_SETUP_NO_MMAP`: the application provides the ring memory (6.5).
pub const IORING_SETUP_NO_MMAP: u32 = 1 << 14;
/// `IORING_SETUP_REGISTERED_FD_ONLY`: return a registered ring index, not an fd (6.5).
pub const IORING_SETUP_REGISTERED_FD_ONLY: u32 = 1 << 15;
/// `IORING_SETUP_NO_SQARRAY`: no SQ index array; SQEs are consumed in ring order (6.6).
pub const IORING_SETUP_NO_SQARRAY: u32 = 1 << 16;
/// `IORING_SETUP_HYBRID_IOPOLL`: sleep before polling in IOPOLL mode (6.13).
pub const IORING_SETUP_HYBRID_IOPOLL: u32 = 1 << 17;

/// Every setup flag this binding knows, with its name.
pub const SETUP_FLAG_NAMES: &[(u32, &str)] = &[
    (IORING_SETUP_IOPOLL, "IOPOLL"),
    (IORING_SETUP_SQPOLL, "SQPOLL"),
    (IORING_SETUP_SQ_AFF, "SQ_AFF"),
    (IORING_SETUP_CQSIZE, "CQSIZE"),
    (IORING_SETUP_CLAMP, "CLAMP"),
    (IORING_SETUP_ATTACH_WQ, "ATTACH_WQ"),
    (IORING_SETUP_R_DISABLED, "R_DISABLED"),
    (IORING_SETUP_SUBMIT_ALL, "SUBMIT_ALL"),
    (IORING_SETUP_COOP_TASKRUN, "COOP_TASKRUN"),
    (IORING_SETUP_TASKRUN_FLAG, "TASKRUN_FLAG"),
    (IORING_SETUP_SQE128, "SQE128"),
    (IORING_SETUP_CQE32, "CQE32"),
    (IORING_SETUP_SINGLE_ISSUER, "SINGLE_ISSUER"),
    (IORING_SETUP_DEFER_TASKRUN, "DEFER_TASKRUN"),
    (IORING_SETUP_NO_MMAP, "NO_MMAP"),
    (IORING_SETUP_REGISTERED_FD_ONLY, "REGISTERED_FD_ONLY"),
    (IORING_SETUP_NO_SQARRAY, "NO_SQARRAY"),
    (IORING_SETUP_HYBRID_IOPOLL, "HYBRID_IOPOLL"),
];

/// `IORING_FEAT_SINGLE_MMAP`: SQ and CQ rings share one mapping (5.4).
pub const IORING_FEAT_SINGLE_MMAP: u32 = 1 << 0;
/// `IORING_FEAT_NODROP`: CQEs are never dropped; overflow is held in the kernel (5.5).
pub const IORING_FEAT_NODROP: u32 = 1 << 1;
/// `IORING_FEAT_SUBMIT_STABLE`: SQE data is copied at submission; it may be reused at once.
pub const IORING_FEAT_SUBMIT_STABLE: u32 = 1 << 2;
/// `IORING_FEAT_RW_CUR_POS`: `off = -1` means the current file position.
pub const IORING_FEAT_RW_CUR_POS: u32 = 1 << 3;
/// `IORING_FEAT_CUR_PERSONALITY`: requests run with the submitter's credentials.
pub const IORING_FEAT_CUR_PERSONALITY: u32 = 1 << 4;
/// `IORING_FEAT_FAST_POLL`: pollable files are polled instead of punted to a worker.
pub const IORING_FEAT_FAST_POLL: u32 = 1 << 5;
/// `IORING_FEAT_POLL_32BITS`: `poll32_events` is honoured.
pub const IORING_FEAT_POLL_32BITS: u32 = 1 << 6;
/// `IORING_FEAT_SQPOLL_NONFIXED`: SQPOLL works without registered files.
pub const IORING_FEAT_SQPOLL_NONFIXED: u32 = 1 << 7;
/// `IORING_FEAT_EXT_ARG`: `io_uring_enter` takes `struct io_uring_getevents_arg` (5.11).
pub const IORING_FEAT_EXT_ARG: u32 = 1 << 8;
/// `IORING_FEAT_NATIVE_WORKERS`: io-wq workers are threads of the submitting process.
pub const IORING_FEAT_NATIVE_WORKERS: u32 = 1 << 9;
/// `IORING_FEAT_RSRC_TAGS`: registered resources can carry tags.
pub const IORING_FEAT_RSRC_TAGS: u32 = 1 << 10;
/// `IORING_FEAT_CQE_SKIP`: `IOSQE_CQE_SKIP_SUCCESS` is supported (5.17).
pub const IORING_FEAT_CQE_SKIP: u32 = 1 << 11;
/// `IORING_FEAT_LINKED_FILE`: files of linked requests are resolved when the request runs.
pub const IORING_FEAT_LINKED_FILE: u32 = 1 << 12;
/// `IORING_FEAT_REG_REG_RING`: `IORING_REGISTER_USE_REGISTERED_RING` works.
pub const IORING_FEAT_REG_REG_RING: u32 = 1 << 13;
/// `IORING_FEAT_RECVSEND_BUNDLE`: bundled send/recv with provided buffers (6.10).
pub const IORING_FEAT_RECVSEND_BUNDLE: u32 = 1 << 14;
/// `IORING_FEAT_MIN_TIMEOUT`: `min_wait_usec` in the getevents argument (6.12).
pub const IORING_FEAT_MIN_TIMEOUT: u32 = 1 << 15;
/// `IORING_FEAT_RW_ATTR`: read/write attributes (6.14).
pub const IORING_FEAT_RW_ATTR: u32 = 1 << 16;
/// `IORING_FEAT_NO_IOWAIT`: `IORING_ENTER_NO_IOWAIT` is honoured (6.15).
pub const IORING_FEAT_NO_IOWAIT: u32 = 1 << 17;

/// Every feature bit this binding knows, with its name.
pub const FEATURE_NAMES: &[(u32, &str)] = &[
    (IORING_FEAT_SINGLE_MMAP, "SINGLE_MMAP"),
    (IORING_FEAT_NODROP, "NODROP"),
    (IORING_FEAT_SUBMIT_STABLE, "SUBMIT_STABLE"),
    (IORING_FEAT_RW_CUR_POS, "RW_CUR_POS"),
    (IORING_FEAT_CUR_PERSONALITY, "CUR_PERSONALITY"),
    (IORING_FEAT_FAST_POLL, "FAST_POLL"),
    (IORING_FEAT_POLL_32BITS, "POLL_32BITS"),
    (IORING_FEAT_SQPOLL_NONFIXED, "SQPOLL_NONFIXED"),
    (IORING_FEAT_EXT_ARG, "EXT_ARG"),
    (IORING_FEAT_NATIVE_WORKERS, "NATIVE_WORKERS"),
    (IORING_FEAT_RSRC_TAGS, "RSRC_TAGS"),
    (IORING_FEAT_CQE_SKIP, "CQE_SKIP"),
    (IORING_FEAT_LINKED_FILE, "LINKED_FILE"),
    (IORING_FEAT_REG_REG_RING, "REG_REG_RING"),
    (IORING_FEAT_RECVSEND_BUNDLE, "RECVSEND_BUNDLE"),
    (IORING_FEAT_MIN_TIMEOUT, "MIN_TIMEOUT"),
    (IORING_FEAT_RW_ATTR, "RW_ATTR"),
    (IORING_FEAT_NO_IOWAIT, "NO_IOWAIT"),
];

/// `mmap` offset of the SQ ring (and, with `FEAT_SINGLE_MMAP`, the CQ ring too).
pub const IORING_OFF_SQ_RING: i64 = 0;
/// `mmap` offset of the CQ ring.
pub const IORING_OFF_CQ_RING: i64 = 0x8000000;
/// `mmap` offset of the SQE array.
pub const IORING_OFF_SQES: i64 = 0x10000000;
/// `mmap` offset of a kernel-allocated provided-buffer ring (`IOU_PBUF_RING_MMAP`).
pub const IORING_OFF_PBUF_RING: i64 = 0x80000000;
/// Shift of the buffer group id in the `IORING_OFF_PBUF_RING` offset.
pub const IORING_OFF_PBUF_SHIFT: u32 = 16;
/// Mask of the mmap offset kinds.
pub const IORING_OFF_MMAP_MASK: i64 = 0xf8000000;

/// `struct io_sqring_offsets`: where the SQ ring's fields sit inside its mapping.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct io_sqring_offsets {
    /// Offset of the head index (written by the kernel as it consumes SQEs).
    pub head: u32,
    /// Offset of the tail index (written by the application to publish SQEs).
    pub tail: u32,
    /// Offset of `entries - 1`.
    pub ring_mask: u32,
    /// Offset of the entry count.
    pub ring_entries: u32,
    /// Offset of the SQ flags word (`IORING_SQ_*`).
    pub flags: u32,
    /// Offset of the count of invalid SQEs the kernel dropped.
    pub dropped: u32,
    /// Offset of the SQ index array (absent with `NO_SQARRAY`).
    pub array: u32,
    /// Reserved.
    pub resv1: u32,
    /// With `NO_MMAP`: the user address of the SQ ring (6.5).
    pub user_addr: u64,
}

/// `struct io_cqring_offsets`: where the CQ ring's fields sit inside its mapping.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct io_cqring_offsets {
    /// Offset of the head index (written by the application as it consumes CQEs).
    pub head: u32,
    /// Offset of the tail index (written by the kernel to publish CQEs).
    pub tail: u32,
    /// Offset of `entries - 1`.
    pub ring_mask: u32,
    /// Offset of the entry count.
    pub ring_entries: u32,
    /// Offset of the count of CQEs lost to overflow (only without `FEAT_NODROP`).
    pub overflow: u32,
    /// Offset of the CQE array.
    pub cqes: u32,
    /// Offset of the CQ flags word (`IORING_CQ_EVENTFD_DISABLED`).
    pub flags: u32,
    /// Reserved.
    pub resv1: u32,
    /// With `NO_MMAP`: the user address of the CQ ring (6.5).
    pub user_addr: u64,
}

/// `struct io_uring_params`: in/out argument of `io_uring_setup`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct io_uring_params {
    /// Out: SQ entries (the requested count rounded up to a power of two).
    pub sq_entries: u32,
    /// In with `SETUP_CQSIZE`, out always: CQ entries.
    pub cq_entries: u32,
    /// In: `IORING_SETUP_*` flags.
    pub flags: u32,
    /// In with `SETUP_SQ_AFF`: the CPU of the SQPOLL thread.
    pub sq_thread_cpu: u32,
    /// In with `SETUP_SQPOLL`: milliseconds of idle before the SQPOLL thread sleeps.
    pub sq_thread_idle: u32,
    /// Out: `IORING_FEAT_*` bits.
    pub features: u32,
    /// In with `SETUP_ATTACH_WQ`: the ring whose io-wq to share.
    pub wq_fd: u32,
    /// Reserved, must be zero.
    pub resv: [u32; 3],
    /// Out: SQ ring layout.
    pub sq_off: io_sqring_offsets,
    /// Out: CQ ring layout.
    pub cq_off: io_cqring_offsets,
}

const _: () = assert!(std::mem::size_of::<io_uring_params>() == 120);
