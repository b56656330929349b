//! What `ringsteal_uring::abi` declares, as tables keyed by the kernel header's own names:
//! every constant (with its value), every struct (size, alignment) and every struct field
//! (offset, size, signedness), each with the Linux version whose header first has it.
//!
//! Owns: the mapping between header names and Rust items, including the places where they
//! differ on purpose (named Rust unions for C's anonymous ones, renamed reserved fields) and
//! the header items the binding does not declare, each with the reason. May not: run the
//! compiler or compare anything.

use std::mem::{align_of, size_of, MaybeUninit};

use ringsteal_uring::abi::*;

/// A Linux version, `(major, minor)`.
pub(crate) type Version = (u32, u32);

/// Items without an explicit version are in the 6.1 header: the oldest one the check is
/// written against. An older header simply lacks some of them; a newer one must have them.
pub(crate) const BASELINE: Version = (6, 1);

/// How a Rust field is laid out.
pub(crate) trait Layout {
    const SIZE: usize;
    /// `Some(signed)` for integers, `None` for aggregates and arrays.
    const SIGNED: Option<bool>;
    /// For arrays: the element's size and signedness.
    const ELEM: Option<(usize, Option<bool>)> = None;
}

macro_rules! scalar {
    ($($t:ty => $signed:expr),* $(,)?) => {$(
        impl Layout for $t {
            const SIZE: usize = size_of::<$t>();
            const SIGNED: Option<bool> = Some($signed);
        }
    )*};
}
scalar!(u8 => false, u16 => false, u32 => false, u64 => false, i32 => true, i64 => true);

macro_rules! aggregate {
    ($($t:ty),* $(,)?) => {$(
        impl Layout for $t {
            const SIZE: usize = size_of::<$t>();
            const SIGNED: Option<bool> = None;
        }
    )*};
}
aggregate!(
    io_uring_probe_op,
    io_uring_buf,
    io_sqring_offsets,
    io_cqring_offsets,
    __kernel_timespec,
);

impl<T: Layout, const N: usize> Layout for [T; N] {
    const SIZE: usize = T::SIZE * N;
    const SIGNED: Option<bool> = None;
    const ELEM: Option<(usize, Option<bool>)> = Some((T::SIZE, T::SIGNED));
}

/// A Rust field's place and shape.
#[derive(Debug, Clone)]
pub(crate) struct RustField {
    pub(crate) path: String,
    pub(crate) offset: usize,
    pub(crate) size: usize,
    pub(crate) signed: Option<bool>,
    pub(crate) elem: Option<(usize, Option<bool>)>,
}

pub(crate) fn shape<T: Layout>(path: String, offset: usize, _: *const T) -> RustField {
    RustField {
        path,
        offset,
        size: T::SIZE,
        signed: T::SIGNED,
        elem: T::ELEM,
    }
}

/// The offset and shape of `Type.a.b.c`, through unions and packed unions alike.
macro_rules! field {
    ($ty:ident, $($path:ident).+) => {{
        let value = MaybeUninit::<$ty>::uninit();
        let base = value.as_ptr();
        // SAFETY: `addr_of!` computes the address of a place inside `value` without reading
        // it or creating a reference, so the uninitialised memory and packed or union fields
        // are never touched.
        let place = unsafe { std::ptr::addr_of!((*base).$($path).+) };
        shape(
            concat!(stringify!($ty), ".", stringify!($($path).+)).replace(' ', ""),
            place as usize - base as usize,
            place,
        )
    }};
}

/// One header field and the Rust field that mirrors it.
pub(crate) struct FieldEntry {
    pub(crate) c_struct: &'static str,
    pub(crate) c_field: &'static str,
    pub(crate) rust: RustField,
    /// The first header version that has this name.
    pub(crate) since: Version,
    /// The first header version that no longer has this name (it was renamed).
    pub(crate) until: Option<Version>,
}

fn f(c_struct: &'static str, c_field: &'static str, rust: RustField) -> FieldEntry {
    FieldEntry {
        c_struct,
        c_field,
        rust,
        since: BASELINE,
        until: None,
    }
}

impl FieldEntry {
    fn since(mut self, major: u32, minor: u32) -> Self {
        self.since = (major, minor);
        self
    }

    fn until(mut self, major: u32, minor: u32) -> Self {
        self.until = Some((major, minor));
        self
    }
}

/// Every header struct field and where the Rust declaration keeps it.
pub(crate) fn fields() -> Vec<FieldEntry> {
    let sqe = "io_uring_sqe";
    let mut v = vec![
        f(sqe, "opcode", field!(io_uring_sqe, opcode)),
        f(sqe, "flags", field!(io_uring_sqe, flags)),
        f(sqe, "ioprio", field!(io_uring_sqe, ioprio)),
        f(sqe, "fd", field!(io_uring_sqe, fd)),
        f(sqe, "off", field!(io_uring_sqe, off.off)),
        f(sqe, "addr2", field!(io_uring_sqe, off.addr2)),
        f(sqe, "cmd_op", field!(io_uring_sqe, off.cmd.cmd_op)),
        f(sqe, "__pad1", field!(io_uring_sqe, off.cmd.__pad1)),
        f(sqe, "addr", field!(io_uring_sqe, addr.addr)),
        f(
            sqe,
            "splice_off_in",
            field!(io_uring_sqe, addr.splice_off_in),
        ),
        f(sqe, "level", field!(io_uring_sqe, addr.sockopt.level)).since(6, 7),
        f(sqe, "optname", field!(io_uring_sqe, addr.sockopt.optname)).since(6, 7),
        f(sqe, "len", field!(io_uring_sqe, len)),
        f(sqe, "rw_flags", field!(io_uring_sqe, op_flags.rw_flags)),
        f(
            sqe,
            "fsync_flags",
            field!(io_uring_sqe, op_flags.fsync_flags),
        ),
        f(
            sqe,
            "poll_events",
            field!(io_uring_sqe, op_flags.poll_events),
        ),
        f(
            sqe,
            "poll32_events",
            field!(io_uring_sqe, op_flags.poll32_events),
        ),
        f(
            sqe,
            "sync_range_flags",
            field!(io_uring_sqe, op_flags.sync_range_flags),
        ),
        f(sqe, "msg_flags", field!(io_uring_sqe, op_flags.msg_flags)),
        f(
            sqe,
            "timeout_flags",
            field!(io_uring_sqe, op_flags.timeout_flags),
        ),
        f(
            sqe,
            "accept_flags",
            field!(io_uring_sqe, op_flags.accept_flags),
        ),
        f(
            sqe,
            "cancel_flags",
            field!(io_uring_sqe, op_flags.cancel_flags),
        ),
        f(sqe, "open_flags", field!(io_uring_sqe, op_flags.open_flags)),
        f(
            sqe,
            "statx_flags",
            field!(io_uring_sqe, op_flags.statx_flags),
        ),
        f(
            sqe,
            "fadvise_advice",
            field!(io_uring_sqe, op_flags.fadvise_advice),
        ),
        f(
            sqe,
            "splice_flags",
            field!(io_uring_sqe, op_flags.splice_flags),
        ),
        f(
            sqe,
            "rename_flags",
            field!(io_uring_sqe, op_flags.rename_flags),
        ),
        f(
            sqe,
            "unlink_flags",
            field!(io_uring_sqe, op_flags.unlink_flags),
        ),
        f(
            sqe,
            "hardlink_flags",
            field!(io_uring_sqe, op_flags.hardlink_flags),
        ),
        f(
            sqe,
            "xattr_flags",
            field!(io_uring_sqe, op_flags.xattr_flags),
        ),
        f(
            sqe,
            "msg_ring_flags",
            field!(io_uring_sqe, op_flags.msg_ring_flags),
        ),
        f(
            sqe,
            "uring_cmd_flags",
            field!(io_uring_sqe, op_flags.uring_cmd_flags),
        ),
        f(
            sqe,
            "waitid_flags",
            field!(io_uring_sqe, op_flags.waitid_flags),
        )
        .since(6, 7),
        f(
            sqe,
            "futex_flags",
            field!(io_uring_sqe, op_flags.futex_flags),
        )
        .since(6, 7),
        f(
            sqe,
            "install_fd_flags",
            field!(io_uring_sqe, op_flags.install_fd_flags),
        )
        .since(6, 8),
        f(sqe, "nop_flags", field!(io_uring_sqe, op_flags.nop_flags)).since(6, 10),
        f(
            sqe,
            "epoll_flags",
            field!(io_uring_sqe, op_flags.epoll_flags),
        )
        .since(6, 15),
        f(sqe, "pipe_flags", field!(io_uring_sqe, op_flags.pipe_flags)).since(6, 16),
        f(sqe, "user_data", field!(io_uring_sqe, user_data)),
        f(sqe, "buf_index", field!(io_uring_sqe, buf.buf_index)),
        f(sqe, "buf_group", field!(io_uring_sqe, buf.buf_group)),
        f(sqe, "personality", field!(io_uring_sqe, personality)),
        f(
            sqe,
            "splice_fd_in",
            field!(io_uring_sqe, file_index.splice_fd_in),
        ),
        f(
            sqe,
            "file_index",
            field!(io_uring_sqe, file_index.file_index),
        ),
        f(sqe, "optlen", field!(io_uring_sqe, file_index.optlen)).since(6, 7),
        f(
            sqe,
            "addr_len",
            field!(io_uring_sqe, file_index.addr_len.addr_len),
        ),
        f(
            sqe,
            "__pad3",
            field!(io_uring_sqe, file_index.addr_len.__pad3),
        ),
        f(sqe, "addr3", field!(io_uring_sqe, addr3.addr3.addr3)),
        f(sqe, "__pad2", field!(io_uring_sqe, addr3.addr3.__pad2)),
        f(sqe, "attr_ptr", field!(io_uring_sqe, addr3.attr.attr_ptr)).since(6, 14),
        f(
            sqe,
            "attr_type_mask",
            field!(io_uring_sqe, addr3.attr.attr_type_mask),
        )
        .since(6, 14),
        f(sqe, "optval", field!(io_uring_sqe, addr3.optval)).since(6, 7),
        f(sqe, "cmd", field!(io_uring_sqe, addr3.cmd)),
        // struct io_uring_cqe
        f("io_uring_cqe", "user_data", field!(io_uring_cqe, user_data)),
        f("io_uring_cqe", "res", field!(io_uring_cqe, res)),
        f("io_uring_cqe", "flags", field!(io_uring_cqe, flags)),
        // `__u64 big_cqe[]`: the second half of a 32-byte CQE (SETUP_CQE32). The Rust struct
        // is the 16-byte CQE; the check is that the extra half starts right after it.
        f(
            "io_uring_cqe",
            "big_cqe",
            RustField {
                path: "(the 16 bytes after io_uring_cqe, CQE32 only)".into(),
                offset: size_of::<io_uring_cqe>(),
                size: 0,
                signed: None,
                elem: Some((size_of::<u64>(), Some(false))),
            },
        ),
    ];
    for (c, rust) in [
        ("io_sqring_offsets", sq_offsets()),
        ("io_cqring_offsets", cq_offsets()),
    ] {
        v.extend(rust.into_iter().map(|(name, field)| {
            let entry = f(c, name, field);
            match name {
                "user_addr" => entry.since(6, 5),
                // `__u64 resv2` became `user_addr` in 6.5 (IORING_SETUP_NO_MMAP).
                "resv2" => entry.until(6, 5),
                _ => entry,
            }
        }));
    }
    let p = "io_uring_params";
    v.extend([
        f(p, "sq_entries", field!(io_uring_params, sq_entries)),
        f(p, "cq_entries", field!(io_uring_params, cq_entries)),
        f(p, "flags", field!(io_uring_params, flags)),
        f(p, "sq_thread_cpu", field!(io_uring_params, sq_thread_cpu)),
        f(p, "sq_thread_idle", field!(io_uring_params, sq_thread_idle)),
        f(p, "features", field!(io_uring_params, features)),
        f(p, "wq_fd", field!(io_uring_params, wq_fd)),
        f(p, "resv", field!(io_uring_params, resv)),
        f(p, "sq_off", field!(io_uring_params, sq_off)),
        f(p, "cq_off", field!(io_uring_params, cq_off)),
    ]);
    let g = "io_uring_getevents_arg";
    v.extend([
        f(g, "sigmask", field!(io_uring_getevents_arg, sigmask)),
        f(g, "sigmask_sz", field!(io_uring_getevents_arg, sigmask_sz)),
        f(
            g,
            "min_wait_usec",
            field!(io_uring_getevents_arg, min_wait_usec),
        )
        .since(6, 12),
        // `__u32 pad` became `min_wait_usec` in 6.12 (IORING_FEAT_MIN_TIMEOUT).
        f(g, "pad", field!(io_uring_getevents_arg, min_wait_usec)).until(6, 12),
        f(g, "ts", field!(io_uring_getevents_arg, ts)),
    ]);
    let (po, pr) = ("io_uring_probe_op", "io_uring_probe");
    v.extend([
        f(po, "op", field!(io_uring_probe_op, op)),
        f(po, "resv", field!(io_uring_probe_op, resv)),
        f(po, "flags", field!(io_uring_probe_op, flags)),
        f(po, "resv2", field!(io_uring_probe_op, resv2)),
        f(pr, "last_op", field!(io_uring_probe, last_op)),
        f(pr, "ops_len", field!(io_uring_probe, ops_len)),
        f(pr, "resv", field!(io_uring_probe, resv)),
        f(pr, "resv2", field!(io_uring_probe, resv2)),
        f(pr, "ops", field!(io_uring_probe, ops)),
    ]);
    let (rr, ru, ru2, fu) = (
        "io_uring_rsrc_register",
        "io_uring_rsrc_update",
        "io_uring_rsrc_update2",
        "io_uring_files_update",
    );
    v.extend([
        f(rr, "nr", field!(io_uring_rsrc_register, nr)),
        f(rr, "flags", field!(io_uring_rsrc_register, flags)),
        f(rr, "resv2", field!(io_uring_rsrc_register, resv2)),
        f(rr, "data", field!(io_uring_rsrc_register, data)),
        f(rr, "tags", field!(io_uring_rsrc_register, tags)),
        f(ru, "offset", field!(io_uring_rsrc_update, offset)),
        f(ru, "resv", field!(io_uring_rsrc_update, resv)),
        f(ru, "data", field!(io_uring_rsrc_update, data)),
        // The deprecated `io_uring_files_update` is the same layout, with `fds` for `data`.
        f(fu, "offset", field!(io_uring_rsrc_update, offset)),
        f(fu, "resv", field!(io_uring_rsrc_update, resv)),
        f(fu, "fds", field!(io_uring_rsrc_update, data)),
        f(ru2, "offset", field!(io_uring_rsrc_update2, offset)),
        f(ru2, "resv", field!(io_uring_rsrc_update2, resv)),
        f(ru2, "data", field!(io_uring_rsrc_update2, data)),
        f(ru2, "tags", field!(io_uring_rsrc_update2, tags)),
        f(ru2, "nr", field!(io_uring_rsrc_update2, nr)),
        f(ru2, "resv2", field!(io_uring_rsrc_update2, resv2)),
    ]);
    let (b, br, bg) = ("io_uring_buf", "io_uring_buf_ring", "io_uring_buf_reg");
    v.extend([
        f(b, "addr", field!(io_uring_buf, addr)),
        f(b, "len", field!(io_uring_buf, len)),
        f(b, "bid", field!(io_uring_buf, bid)),
        f(b, "resv", field!(io_uring_buf, resv)),
        f(br, "resv1", field!(io_uring_buf_ring, resv1)),
        f(br, "resv2", field!(io_uring_buf_ring, resv2)),
        f(br, "resv3", field!(io_uring_buf_ring, resv3)),
        f(br, "tail", field!(io_uring_buf_ring, tail)),
        // `bufs[]` overlays the header: BufRing writes entry i at i * sizeof(io_uring_buf).
        f(
            br,
            "bufs",
            RustField {
                path: "(BufRing entries: [io_uring_buf] from offset 0)".into(),
                offset: 0,
                size: 0,
                signed: None,
                elem: Some((size_of::<io_uring_buf>(), None)),
            },
        ),
        f(bg, "ring_addr", field!(io_uring_buf_reg, ring_addr)),
        f(bg, "ring_entries", field!(io_uring_buf_reg, ring_entries)),
        f(bg, "bgid", field!(io_uring_buf_reg, bgid)),
        f(bg, "flags", field!(io_uring_buf_reg, flags)).since(6, 4),
        // `__u16 pad` became `flags` in 6.4 (IOU_PBUF_RING_MMAP).
        f(bg, "pad", field!(io_uring_buf_reg, flags)).until(6, 4),
        f(bg, "resv", field!(io_uring_buf_reg, resv)),
    ]);
    let rm = "io_uring_recvmsg_out";
    v.extend([
        f(rm, "namelen", field!(io_uring_recvmsg_out, namelen)),
        f(rm, "controllen", field!(io_uring_recvmsg_out, controllen)),
        f(rm, "payloadlen", field!(io_uring_recvmsg_out, payloadlen)),
        f(rm, "flags", field!(io_uring_recvmsg_out, flags)),
    ]);
    let fr = "io_uring_file_index_range";
    v.extend([
        f(fr, "off", field!(io_uring_file_index_range, off)),
        f(fr, "len", field!(io_uring_file_index_range, len)),
        f(fr, "resv", field!(io_uring_file_index_range, resv)),
    ]);
    v
}

fn sq_offsets() -> Vec<(&'static str, RustField)> {
    vec![
        ("head", field!(io_sqring_offsets, head)),
        ("tail", field!(io_sqring_offsets, tail)),
        ("ring_mask", field!(io_sqring_offsets, ring_mask)),
        ("ring_entries", field!(io_sqring_offsets, ring_entries)),
        ("flags", field!(io_sqring_offsets, flags)),
        ("dropped", field!(io_sqring_offsets, dropped)),
        ("array", field!(io_sqring_offsets, array)),
        ("resv1", field!(io_sqring_offsets, resv1)),
        ("user_addr", field!(io_sqring_offsets, user_addr)),
        ("resv2", field!(io_sqring_offsets, user_addr)),
    ]
}

fn cq_offsets() -> Vec<(&'static str, RustField)> {
    vec![
        ("head", field!(io_cqring_offsets, head)),
        ("tail", field!(io_cqring_offsets, tail)),
        ("ring_mask", field!(io_cqring_offsets, ring_mask)),
        ("ring_entries", field!(io_cqring_offsets, ring_entries)),
        ("overflow", field!(io_cqring_offsets, overflow)),
        ("cqes", field!(io_cqring_offsets, cqes)),
        ("flags", field!(io_cqring_offsets, flags)),
        ("resv1", field!(io_cqring_offsets, resv1)),
        ("user_addr", field!(io_cqring_offsets, user_addr)),
        ("resv2", field!(io_cqring_offsets, user_addr)),
    ]
}

/// The fields of `struct __kernel_timespec` (from `linux/time_types.h`, not io_uring.h, so the
/// header scan does not see it; checked explicitly because EXT_ARG and TIMEOUT pass it).
pub(crate) fn timespec_fields() -> Vec<FieldEntry> {
    vec![
        f(
            "__kernel_timespec",
            "tv_sec",
            field!(__kernel_timespec, tv_sec),
        ),
        f(
            "__kernel_timespec",
            "tv_nsec",
            field!(__kernel_timespec, tv_nsec),
        ),
    ]
}

/// A header struct and its Rust counterpart.
pub(crate) struct StructEntry {
    pub(crate) c: &'static str,
    pub(crate) rust: &'static str,
    pub(crate) size: usize,
    pub(crate) align: usize,
    pub(crate) since: Version,
}

macro_rules! st {
    ($c:literal => $ty:ident) => {
        StructEntry {
            c: $c,
            rust: stringify!($ty),
            size: size_of::<$ty>(),
            align: align_of::<$ty>(),
            since: BASELINE,
        }
    };
}

pub(crate) fn structs() -> Vec<StructEntry> {
    vec![
        st!("io_uring_sqe" => io_uring_sqe),
        st!("io_uring_cqe" => io_uring_cqe),
        st!("io_sqring_offsets" => io_sqring_offsets),
        st!("io_cqring_offsets" => io_cqring_offsets),
        st!("io_uring_params" => io_uring_params),
        st!("io_uring_getevents_arg" => io_uring_getevents_arg),
        st!("io_uring_probe_op" => io_uring_probe_op),
        st!("io_uring_probe" => io_uring_probe),
        st!("io_uring_rsrc_register" => io_uring_rsrc_register),
        st!("io_uring_rsrc_update" => io_uring_rsrc_update),
        st!("io_uring_files_update" => io_uring_rsrc_update),
        st!("io_uring_rsrc_update2" => io_uring_rsrc_update2),
        st!("io_uring_buf" => io_uring_buf),
        st!("io_uring_buf_ring" => io_uring_buf_ring),
        st!("io_uring_buf_reg" => io_uring_buf_reg),
        st!("io_uring_file_index_range" => io_uring_file_index_range),
        st!("io_uring_recvmsg_out" => io_uring_recvmsg_out),
        st!("__kernel_timespec" => __kernel_timespec),
    ]
}

/// Rust types with no header struct of their own: the named unions and structs that stand
/// for C's anonymous ones inside `io_uring_sqe`. Their fields are checked as sqe fields.
pub(crate) const SQE_PARTS: &[&str] = &[
    "io_uring_sqe_off",
    "io_uring_sqe_cmd_op",
    "io_uring_sqe_addr",
    "io_uring_sqe_sockopt",
    "io_uring_sqe_op_flags",
    "io_uring_sqe_buf",
    "io_uring_sqe_file_index",
    "io_uring_sqe_addr_len",
    "io_uring_sqe_addr3",
    "io_uring_sqe_addr3_pad",
    "io_uring_sqe_attr",
];

/// A header constant (macro or enum member) and the Rust value that stands for it.
pub(crate) struct ConstEntry {
    pub(crate) name: &'static str,
    pub(crate) value: i128,
    pub(crate) since: Version,
    /// For values not declared as a Rust constant of the same name: how the Rust side
    /// derives the value.
    pub(crate) derived: Option<&'static str>,
}

macro_rules! consts {
    ($($name:ident $(@ $since:literal)?),* $(,)?) => {
        vec![$(ConstEntry {
            name: stringify!($name),
            value: $name as i128,
            since: since(&[$(stringify!($since))?]),
            derived: None,
        }),*]
    };
}

/// The version written after `@` in the table, or the baseline when there is none.
fn since(written: &[&str]) -> Version {
    written.first().map_or(BASELINE, |text| version(text))
}

/// `"6.10"` -> `(6, 10)` (written as a literal in the table, so read from its text).
fn version(text: &str) -> Version {
    let (major, minor) = text.split_once('.').expect("major.minor");
    (major.parse().unwrap(), minor.parse().unwrap())
}

/// Every constant of `ringsteal_uring::abi`, with the Linux version that introduced the ones
/// newer than the 6.1 baseline.
pub(crate) fn consts() -> Vec<ConstEntry> {
    let mut v = consts![
        // sqe.flags
        IOSQE_FIXED_FILE, IOSQE_IO_DRAIN, IOSQE_IO_LINK, IOSQE_IO_HARDLINK, IOSQE_ASYNC,
        IOSQE_BUFFER_SELECT, IOSQE_CQE_SKIP_SUCCESS,
        // setup flags
        IORING_SETUP_IOPOLL, IORING_SETUP_SQPOLL, IORING_SETUP_SQ_AFF, IORING_SETUP_CQSIZE,
        IORING_SETUP_CLAMP, IORING_SETUP_ATTACH_WQ, IORING_SETUP_R_DISABLED,
        IORING_SETUP_SUBMIT_ALL, IORING_SETUP_COOP_TASKRUN, IORING_SETUP_TASKRUN_FLAG,
        IORING_SETUP_SQE128, IORING_SETUP_CQE32, IORING_SETUP_SINGLE_ISSUER,
        IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_NO_MMAP @ 6.5,
        IORING_SETUP_REGISTERED_FD_ONLY @ 6.5, IORING_SETUP_NO_SQARRAY @ 6.6,
        IORING_SETUP_HYBRID_IOPOLL @ 6.13,
        // opcodes
        IORING_OP_NOP, IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_FSYNC, IORING_OP_READ_FIXED,
        IORING_OP_WRITE_FIXED, IORING_OP_POLL_ADD, IORING_OP_POLL_REMOVE,
        IORING_OP_SYNC_FILE_RANGE, IORING_OP_SENDMSG, IORING_OP_RECVMSG, IORING_OP_TIMEOUT,
        IORING_OP_TIMEOUT_REMOVE, IORING_OP_ACCEPT, IORING_OP_ASYNC_CANCEL,
        IORING_OP_LINK_TIMEOUT, IORING_OP_CONNECT, IORING_OP_FALLOCATE, IORING_OP_OPENAT,
        IORING_OP_CLOSE, IORING_OP_FILES_UPDATE, IORING_OP_STATX, IORING_OP_READ,
        IORING_OP_WRITE, IORING_OP_FADVISE, IORING_OP_MADVISE, IORING_OP_SEND, IORING_OP_RECV,
        IORING_OP_OPENAT2, IORING_OP_EPOLL_CTL, IORING_OP_SPLICE, IORING_OP_PROVIDE_BUFFERS,
        IORING_OP_REMOVE_BUFFERS, IORING_OP_TEE, IORING_OP_SHUTDOWN, IORING_OP_RENAMEAT,
        IORING_OP_UNLINKAT, IORING_OP_MKDIRAT, IORING_OP_SYMLINKAT, IORING_OP_LINKAT,
        IORING_OP_MSG_RING, IORING_OP_FSETXATTR, IORING_OP_SETXATTR, IORING_OP_FGETXATTR,
        IORING_OP_GETXATTR, IORING_OP_SOCKET, IORING_OP_URING_CMD, IORING_OP_SEND_ZC,
        IORING_OP_SENDMSG_ZC, IORING_OP_READ_MULTISHOT @ 6.7, IORING_OP_WAITID @ 6.7,
        IORING_OP_FUTEX_WAIT @ 6.7, IORING_OP_FUTEX_WAKE @ 6.7, IORING_OP_FUTEX_WAITV @ 6.7,
        IORING_OP_FIXED_FD_INSTALL @ 6.8, IORING_OP_FTRUNCATE @ 6.9, IORING_OP_BIND @ 6.11,
        IORING_OP_LISTEN @ 6.11, IORING_OP_RECV_ZC @ 6.15, IORING_OP_EPOLL_WAIT @ 6.15,
        IORING_OP_READV_FIXED @ 6.15, IORING_OP_WRITEV_FIXED @ 6.15, IORING_OP_PIPE @ 6.16,
        // per-opcode flags
        IORING_FSYNC_DATASYNC, IORING_TIMEOUT_ABS, IORING_TIMEOUT_UPDATE,
        IORING_TIMEOUT_BOOTTIME, IORING_TIMEOUT_REALTIME, IORING_LINK_TIMEOUT_UPDATE,
        IORING_TIMEOUT_ETIME_SUCCESS, IORING_TIMEOUT_MULTISHOT @ 6.4, IORING_TIMEOUT_CLOCK_MASK,
        IORING_TIMEOUT_UPDATE_MASK, SPLICE_F_FD_IN_FIXED, IORING_POLL_ADD_MULTI,
        IORING_POLL_UPDATE_EVENTS, IORING_POLL_UPDATE_USER_DATA, IORING_POLL_ADD_LEVEL,
        IORING_ASYNC_CANCEL_ALL, IORING_ASYNC_CANCEL_FD, IORING_ASYNC_CANCEL_ANY,
        IORING_ASYNC_CANCEL_FD_FIXED, IORING_ASYNC_CANCEL_USERDATA, IORING_ASYNC_CANCEL_OP,
        IORING_RECVSEND_POLL_FIRST, IORING_RECV_MULTISHOT, IORING_RECVSEND_FIXED_BUF,
        IORING_SEND_ZC_REPORT_USAGE, IORING_RECVSEND_BUNDLE @ 6.10,
        IORING_NOTIF_USAGE_ZC_COPIED, IORING_ACCEPT_MULTISHOT, IORING_ACCEPT_DONTWAIT @ 6.10,
        IORING_ACCEPT_POLL_FIRST @ 6.10, IORING_MSG_DATA, IORING_MSG_SEND_FD,
        IORING_MSG_RING_CQE_SKIP, IORING_MSG_RING_FLAGS_PASS @ 6.3,
        IORING_FIXED_FD_NO_CLOEXEC @ 6.8, IORING_FILE_INDEX_ALLOC,
        // cqe.flags
        IORING_CQE_F_BUFFER, IORING_CQE_F_MORE, IORING_CQE_F_SOCK_NONEMPTY, IORING_CQE_F_NOTIF,
        IORING_CQE_F_BUF_MORE @ 6.12, IORING_CQE_F_SKIP @ 6.18, IORING_CQE_F_32 @ 6.18,
        IORING_CQE_BUFFER_SHIFT,
        // mmap offsets and ring flags
        IORING_OFF_SQ_RING, IORING_OFF_CQ_RING, IORING_OFF_SQES, IORING_OFF_PBUF_RING @ 6.4,
        IORING_OFF_PBUF_SHIFT @ 6.4, IORING_OFF_MMAP_MASK, IORING_SQ_NEED_WAKEUP,
        IORING_SQ_CQ_OVERFLOW, IORING_SQ_TASKRUN, IORING_CQ_EVENTFD_DISABLED,
        // enter flags
        IORING_ENTER_GETEVENTS, IORING_ENTER_SQ_WAKEUP, IORING_ENTER_SQ_WAIT,
        IORING_ENTER_EXT_ARG, IORING_ENTER_REGISTERED_RING, IORING_ENTER_ABS_TIMER @ 6.12,
        IORING_ENTER_EXT_ARG_REG @ 6.13, IORING_ENTER_NO_IOWAIT @ 6.15,
        // features
        IORING_FEAT_SINGLE_MMAP, IORING_FEAT_NODROP, IORING_FEAT_SUBMIT_STABLE,
        IORING_FEAT_RW_CUR_POS, IORING_FEAT_CUR_PERSONALITY, IORING_FEAT_FAST_POLL,
        IORING_FEAT_POLL_32BITS, IORING_FEAT_SQPOLL_NONFIXED, IORING_FEAT_EXT_ARG,
        IORING_FEAT_NATIVE_WORKERS, IORING_FEAT_RSRC_TAGS, IORING_FEAT_CQE_SKIP,
        IORING_FEAT_LINKED_FILE, IORING_FEAT_REG_REG_RING @ 6.3,
        IORING_FEAT_RECVSEND_BUNDLE @ 6.10, IORING_FEAT_MIN_TIMEOUT @ 6.12,
        IORING_FEAT_RW_ATTR @ 6.14, IORING_FEAT_NO_IOWAIT @ 6.15,
        // register opcodes
        IORING_REGISTER_BUFFERS, IORING_UNREGISTER_BUFFERS, IORING_REGISTER_FILES,
        IORING_UNREGISTER_FILES, IORING_REGISTER_EVENTFD, IORING_UNREGISTER_EVENTFD,
        IORING_REGISTER_FILES_UPDATE, IORING_REGISTER_EVENTFD_ASYNC, IORING_REGISTER_PROBE,
        IORING_REGISTER_PERSONALITY, IORING_UNREGISTER_PERSONALITY,
        IORING_REGISTER_RESTRICTIONS, IORING_REGISTER_ENABLE_RINGS, IORING_REGISTER_FILES2,
        IORING_REGISTER_FILES_UPDATE2, IORING_REGISTER_BUFFERS2,
        IORING_REGISTER_BUFFERS_UPDATE, IORING_REGISTER_IOWQ_AFF, IORING_UNREGISTER_IOWQ_AFF,
        IORING_REGISTER_IOWQ_MAX_WORKERS, IORING_REGISTER_RING_FDS,
        IORING_UNREGISTER_RING_FDS, IORING_REGISTER_PBUF_RING, IORING_UNREGISTER_PBUF_RING,
        IORING_REGISTER_SYNC_CANCEL, IORING_REGISTER_FILE_ALLOC_RANGE,
        IORING_REGISTER_PBUF_STATUS @ 6.8, IORING_REGISTER_NAPI @ 6.9,
        IORING_UNREGISTER_NAPI @ 6.9, IORING_REGISTER_CLOCK @ 6.12,
        IORING_REGISTER_CLONE_BUFFERS @ 6.12, IORING_REGISTER_SEND_MSG_RING @ 6.13,
        IORING_REGISTER_ZCRX_IFQ @ 6.15, IORING_REGISTER_RESIZE_RINGS @ 6.13,
        IORING_REGISTER_MEM_REGION @ 6.13, IORING_REGISTER_USE_REGISTERED_RING @ 6.3,
        // register arguments
        IO_URING_OP_SUPPORTED, IORING_RSRC_REGISTER_SPARSE, IOU_PBUF_RING_MMAP @ 6.4,
        IOU_PBUF_RING_INC @ 6.12,
    ];
    // Values the header names that Rust expresses another way.
    let derived = |name, value: u32, how| ConstEntry {
        name,
        value: i128::from(value),
        since: BASELINE,
        derived: Some(how),
    };
    v.extend([
        derived(
            "IOSQE_FIXED_FILE_BIT",
            IOSQE_FIXED_FILE.trailing_zeros(),
            "IOSQE_FIXED_FILE.trailing_zeros()",
        ),
        derived(
            "IOSQE_IO_DRAIN_BIT",
            IOSQE_IO_DRAIN.trailing_zeros(),
            "IOSQE_IO_DRAIN.trailing_zeros()",
        ),
        derived(
            "IOSQE_IO_LINK_BIT",
            IOSQE_IO_LINK.trailing_zeros(),
            "IOSQE_IO_LINK.trailing_zeros()",
        ),
        derived(
            "IOSQE_IO_HARDLINK_BIT",
            IOSQE_IO_HARDLINK.trailing_zeros(),
            "IOSQE_IO_HARDLINK.trailing_zeros()",
        ),
        derived(
            "IOSQE_ASYNC_BIT",
            IOSQE_ASYNC.trailing_zeros(),
            "IOSQE_ASYNC.trailing_zeros()",
        ),
        derived(
            "IOSQE_BUFFER_SELECT_BIT",
            IOSQE_BUFFER_SELECT.trailing_zeros(),
            "IOSQE_BUFFER_SELECT.trailing_zeros()",
        ),
        derived(
            "IOSQE_CQE_SKIP_SUCCESS_BIT",
            IOSQE_CQE_SKIP_SUCCESS.trailing_zeros(),
            "IOSQE_CQE_SKIP_SUCCESS.trailing_zeros()",
        ),
        derived(
            "IO_WQ_BOUND",
            0,
            "index of `bounded` in Ring::register_iowq_max_workers",
        ),
        derived(
            "IO_WQ_UNBOUND",
            1,
            "index of `unbounded` in Ring::register_iowq_max_workers",
        ),
    ]);
    v
}

/// Header names that mark the end of an enum; checked against the Rust tables instead.
pub(crate) const BOUNDS: &[&str] = &["IORING_OP_LAST", "IORING_REGISTER_LAST"];

/// Header constants the binding does not declare, and why.
pub(crate) const OMITTED_CONSTS: &[(&str, &str)] = &[
    ("IORING_URING_CMD_FIXED", "ringsteal issues no URING_CMD"),
    ("IORING_URING_CMD_MASK", "ringsteal issues no URING_CMD"),
    (
        "IORING_REGISTER_FILES_SKIP",
        "ringsteal never updates a file slot with the skip marker",
    ),
    (
        "IORING_RESTRICTION_REGISTER_OP",
        "ring restrictions are not used",
    ),
    (
        "IORING_RESTRICTION_SQE_OP",
        "ring restrictions are not used",
    ),
    (
        "IORING_RESTRICTION_SQE_FLAGS_ALLOWED",
        "ring restrictions are not used",
    ),
    (
        "IORING_RESTRICTION_SQE_FLAGS_REQUIRED",
        "ring restrictions are not used",
    ),
    ("IORING_RESTRICTION_LAST", "ring restrictions are not used"),
    (
        "IORING_RW_ATTR_FLAG_PI",
        "read/write attributes (integrity data) are not used",
    ),
    (
        "IORING_EPOLL_WAIT_MULTISHOT",
        "ringsteal issues no EPOLL_WAIT",
    ),
    ("IORING_NOP_INJECT_RESULT", "NOP test hooks are not used"),
    ("IORING_NOP_FILE", "NOP test hooks are not used"),
    ("IORING_NOP_FIXED_FILE", "NOP test hooks are not used"),
    ("IORING_NOP_FIXED_BUFFER", "NOP test hooks are not used"),
    ("IORING_NOP_TW", "NOP test hooks are not used"),
    ("IORING_NOP_CQE32", "NOP test hooks are not used"),
    (
        "IORING_MEM_REGION_TYPE_USER",
        "memory regions are not registered",
    ),
    (
        "IORING_MEM_REGION_REG_WAIT_ARG",
        "memory regions are not registered",
    ),
    ("IORING_REG_WAIT_TS", "registered wait regions are not used"),
    (
        "IORING_REGISTER_SRC_REGISTERED",
        "buffers are not cloned between rings",
    ),
    (
        "IORING_REGISTER_DST_REPLACE",
        "buffers are not cloned between rings",
    ),
    (
        "IO_URING_NAPI_REGISTER_OP",
        "NAPI busy polling is not registered",
    ),
    (
        "IO_URING_NAPI_STATIC_ADD_ID",
        "NAPI busy polling is not registered",
    ),
    (
        "IO_URING_NAPI_STATIC_DEL_ID",
        "NAPI busy polling is not registered",
    ),
    (
        "IO_URING_NAPI_TRACKING_DYNAMIC",
        "NAPI busy polling is not registered",
    ),
    (
        "IO_URING_NAPI_TRACKING_STATIC",
        "NAPI busy polling is not registered",
    ),
    (
        "IO_URING_NAPI_TRACKING_INACTIVE",
        "NAPI busy polling is not registered",
    ),
    (
        "SOCKET_URING_OP_SIOCINQ",
        "ringsteal issues no socket URING_CMD",
    ),
    (
        "SOCKET_URING_OP_SIOCOUTQ",
        "ringsteal issues no socket URING_CMD",
    ),
    (
        "SOCKET_URING_OP_GETSOCKOPT",
        "ringsteal issues no socket URING_CMD",
    ),
    (
        "SOCKET_URING_OP_SETSOCKOPT",
        "ringsteal issues no socket URING_CMD",
    ),
    (
        "SOCKET_URING_OP_TX_TIMESTAMP",
        "ringsteal issues no socket URING_CMD",
    ),
];

/// Header structs the binding does not declare, and why.
pub(crate) const OMITTED_STRUCTS: &[(&str, &str)] = &[
    (
        "io_uring_notification_slot",
        "only in 6.0/6.1 headers; no register opcode of a released kernel takes it",
    ),
    (
        "io_uring_notification_register",
        "only in 6.0/6.1 headers; no register opcode of a released kernel takes it",
    ),
    ("io_uring_restriction", "ring restrictions are not used"),
    (
        "io_uring_sync_cancel_reg",
        "IORING_REGISTER_SYNC_CANCEL is not wrapped",
    ),
    (
        "io_uring_attr_pi",
        "read/write attributes (integrity data) are not used",
    ),
    ("io_uring_region_desc", "memory regions are not registered"),
    (
        "io_uring_mem_region_reg",
        "memory regions are not registered",
    ),
    ("io_uring_reg_wait", "registered wait regions are not used"),
    (
        "io_uring_clock_register",
        "IORING_REGISTER_CLOCK is not wrapped",
    ),
    (
        "io_uring_clone_buffers",
        "buffers are not cloned between rings",
    ),
    (
        "io_uring_buf_status",
        "IORING_REGISTER_PBUF_STATUS is not wrapped",
    ),
    ("io_uring_napi", "NAPI busy polling is not registered"),
    ("io_uring_zcrx_rqe", "zero-copy receive is not wrapped"),
    ("io_uring_zcrx_cqe", "zero-copy receive is not wrapped"),
    ("io_uring_zcrx_offsets", "zero-copy receive is not wrapped"),
    ("io_uring_zcrx_area_reg", "zero-copy receive is not wrapped"),
    ("io_uring_zcrx_ifq_reg", "zero-copy receive is not wrapped"),
];

/// Header fields whose signedness differs between header versions while size and offset do
/// not; Rust picks one, and the check reports the difference without failing.
pub(crate) const SIGNEDNESS_VARIES: &[(&str, &str, &str)] = &[(
    "io_uring_sqe",
    "rw_flags",
    "__u32 in some headers, __kernel_rwf_t (int) in others; Rust uses i32 like libc's RWF_*",
)];
