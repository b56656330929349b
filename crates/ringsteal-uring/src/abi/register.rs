//! `io_uring_register(2)`: opcodes and the structures they take.

/// Register fixed buffers: `arg` is `*iovec`, `nr_args` of them.
pub const IORING_REGISTER_BUFFERS: u32 = 0;
/// Unregister all fixed buffers.
pub const IORING_UNREGISTER_BUFFERS: u32 = 1;
/// Register fixed files: `arg` is `*i32`, `nr_args` of them (`-1` = empty slot).
pub const IORING_REGISTER_FILES: u32 = 2;
/// Unregister all fixed files.
pub const IORING_UNREGISTER_FILES: u32 = 3;
/// Register an eventfd to be signalled on every CQE.
pub const IORING_REGISTER_EVENTFD: u32 = 4;
/// Unregister the eventfd.
pub const IORING_UNREGISTER_EVENTFD: u32 = 5;
/// Update fixed files: `arg` is `*io_uring_files_update`.
pub const IORING_REGISTER_FILES_UPDATE: u32 = 6;
/// Register an eventfd signalled only for asynchronously completed requests.
pub const IORING_REGISTER_EVENTFD_ASYNC: u32 = 7;
/// Fill `*io_uring_probe` with the supported opcodes (`nr_args` = capacity of `ops`).
pub const IORING_REGISTER_PROBE: u32 = 8;
/// Register the current credentials; returns a personality id.
pub const IORING_REGISTER_PERSONALITY: u32 = 9;
/// Unregister a personality.
pub const IORING_UNREGISTER_PERSONALITY: u32 = 10;
/// Restrict the opcodes and flags of a disabled ring.
pub const IORING_REGISTER_RESTRICTIONS: u32 = 11;
/// Enable a ring created with `SETUP_R_DISABLED`.
pub const IORING_REGISTER_ENABLE_RINGS: u32 = 12;
/// Register files with `*io_uring_rsrc_register` (sparse tables, tags; 5.13).
pub const IORING_REGISTER_FILES2: u32 = 13;
/// Update files with `*io_uring_rsrc_update2`.
pub const IORING_REGISTER_FILES_UPDATE2: u32 = 14;
/// Register buffers with `*io_uring_rsrc_register`.
pub const IORING_REGISTER_BUFFERS2: u32 = 15;
/// Update buffers with `*io_uring_rsrc_update2`.
pub const IORING_REGISTER_BUFFERS_UPDATE: u32 = 16;
/// Set the CPU affinity of io-wq workers.
pub const IORING_REGISTER_IOWQ_AFF: u32 = 17;
/// Clear the CPU affinity of io-wq workers.
pub const IORING_UNREGISTER_IOWQ_AFF: u32 = 18;
/// Set the maximum number of bounded/unbounded io-wq workers.
pub const IORING_REGISTER_IOWQ_MAX_WORKERS: u32 = 19;
/// Register ring fds for `ENTER_REGISTERED_RING`.
pub const IORING_REGISTER_RING_FDS: u32 = 20;
/// Unregister ring fds.
pub const IORING_UNREGISTER_RING_FDS: u32 = 21;
/// Register a provided-buffer ring: `arg` is `*io_uring_buf_reg`, `nr_args` 1 (5.19).
pub const IORING_REGISTER_PBUF_RING: u32 = 22;
/// Unregister a provided-buffer ring.
pub const IORING_UNREGISTER_PBUF_RING: u32 = 23;
/// Cancel synchronously.
pub const IORING_REGISTER_SYNC_CANCEL: u32 = 24;
/// Set the range for fixed-file slot allocation.
pub const IORING_REGISTER_FILE_ALLOC_RANGE: u32 = 25;
/// Read the head of a provided-buffer ring.
pub const IORING_REGISTER_PBUF_STATUS: u32 = 26;
/// Register NAPI busy polling.
pub const IORING_REGISTER_NAPI: u32 = 27;
/// Unregister NAPI busy polling.
pub const IORING_UNREGISTER_NAPI: u32 = 28;
/// Choose the clock used for waits.
pub const IORING_REGISTER_CLOCK: u32 = 29;
/// Clone the registered buffers of another ring.
pub const IORING_REGISTER_CLONE_BUFFERS: u32 = 30;
/// Send a MSG_RING without a ring of one's own: `fd` = -1, `arg` = `*io_uring_sqe`,
/// `nr_args` = 1 (6.13).
pub const IORING_REGISTER_SEND_MSG_RING: u32 = 31;
/// Register a zero-copy receive interface queue.
pub const IORING_REGISTER_ZCRX_IFQ: u32 = 32;
/// Resize the rings.
pub const IORING_REGISTER_RESIZE_RINGS: u32 = 33;
/// Register a memory region.
pub const IORING_REGISTER_MEM_REGION: u32 = 34;
/// Flag for the register opcode: `fd` is a registered ring index.
pub const IORING_REGISTER_USE_REGISTERED_RING: u32 = 1 << 31;

/// `io_uring_probe_op.flags`: the opcode is supported.
pub const IO_URING_OP_SUPPORTED: u16 = 1 << 0;

/// `struct io_uring_probe_op`: one opcode's entry in a probe.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct io_uring_probe_op {
    /// The opcode.
    pub op: u8,
    /// Reserved.
    pub resv: u8,
    /// `IO_URING_OP_SUPPORTED` if the kernel implements it.
    pub flags: u16,
    /// Reserved.
    pub resv2: u32,
}

/// `struct io_uring_probe`: header of the probe result, followed by `ops_len` entries.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct io_uring_probe {
    /// The last opcode this kernel knows.
    pub last_op: u8,
    /// How many `ops` entries the kernel filled.
    pub ops_len: u8,
    /// Reserved.
    pub resv: u16,
    /// Reserved.
    pub resv2: [u32; 3],
    /// The entries (a flexible array member in C).
    pub ops: [io_uring_probe_op; 0],
}

/// `IORING_RSRC_REGISTER_SPARSE`: register an empty table of `nr` slots.
pub const IORING_RSRC_REGISTER_SPARSE: u32 = 1 << 0;

/// `struct io_uring_rsrc_register`: argument of `REGISTER_FILES2` / `REGISTER_BUFFERS2`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct io_uring_rsrc_register {
    /// Number of slots.
    pub nr: u32,
    /// `IORING_RSRC_REGISTER_SPARSE`.
    pub flags: u32,
    /// Reserved.
    pub resv2: u64,
    /// Pointer to the fds or iovecs (0 when sparse).
    pub data: u64,
    /// Pointer to `nr` u64 tags, or 0.
    pub tags: u64,
}

/// `struct io_uring_rsrc_update`: argument of `REGISTER_FILES_UPDATE` (also
/// `io_uring_files_update` in older headers).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct io_uring_rsrc_update {
    /// First slot to update.
    pub offset: u32,
    /// Reserved.
    pub resv: u32,
    /// Pointer to the new fds.
    pub data: u64,
}

/// `struct io_uring_rsrc_update2`: argument of `REGISTER_FILES_UPDATE2` / `BUFFERS_UPDATE`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct io_uring_rsrc_update2 {
    /// First slot to update.
    pub offset: u32,
    /// Reserved.
    pub resv: u32,
    /// Pointer to the new fds or iovecs.
    pub data: u64,
    /// Pointer to tags, or 0.
    pub tags: u64,
    /// Number of slots to update.
    pub nr: u32,
    /// Reserved.
    pub resv2: u32,
}

/// `struct io_uring_buf`: one entry of a provided-buffer ring.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct io_uring_buf {
    /// Address of the buffer.
    pub addr: u64,
    /// Its length in bytes.
    pub len: u32,
    /// The buffer id reported back in the CQE flags.
    pub bid: u16,
    /// Reserved; in entry 0 this is the ring's `tail` (see [`io_uring_buf_ring`]).
    pub resv: u16,
}

/// `struct io_uring_buf_ring`: a provided-buffer ring. In C, a union of an array of
/// [`io_uring_buf`] and a header whose last 16 bits (offset 14, overlapping `bufs[0].resv`)
/// are the `tail` the application advances to publish buffers.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct io_uring_buf_ring {
    /// Overlaps `bufs[0].addr`.
    pub resv1: u64,
    /// Overlaps `bufs[0].len`.
    pub resv2: u32,
    /// Overlaps `bufs[0].bid`.
    pub resv3: u16,
    /// The tail index, written by the application with release ordering.
    pub tail: u16,
}

/// `IOU_PBUF_RING_MMAP`: the kernel allocates the ring; map it at `IORING_OFF_PBUF_RING`.
pub const IOU_PBUF_RING_MMAP: u16 = 1;
/// `IOU_PBUF_RING_INC`: buffers are consumed incrementally (6.12).
pub const IOU_PBUF_RING_INC: u16 = 2;

/// `struct io_uring_buf_reg`: argument of `REGISTER_PBUF_RING`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct io_uring_buf_reg {
    /// Page-aligned address of the ring (0 with `IOU_PBUF_RING_MMAP`).
    pub ring_addr: u64,
    /// Number of entries, a power of two up to 32768.
    pub ring_entries: u32,
    /// The buffer group id SQEs name in `buf_group`.
    pub bgid: u16,
    /// `IOU_PBUF_RING_*` flags.
    pub flags: u16,
    /// Reserved.
    pub resv: [u64; 3],
}

/// `struct io_uring_file_index_range`: argument of `REGISTER_FILE_ALLOC_RANGE`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct io_uring_file_index_range {
    /// First slot of the range.
    pub off: u32,
    /// Number of slots.
    pub len: u32,
    /// Reserved.
    pub resv: u64,
}
