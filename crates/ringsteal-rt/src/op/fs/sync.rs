//! `IORING_OP_FSYNC`, `IORING_OP_FALLOCATE`, `IORING_OP_FTRUNCATE`.

use std::io;
use std::os::fd::AsRawFd;

use ringsteal_uring::opcode;

use crate::op::{cqe_result, Op, Operation, SharedFd, Sqes};

/// `fsync` (or `fdatasync` when `datasync`).
pub fn fsync(fd: &SharedFd, datasync: bool) -> Op<Fsync> {
    Op::new(Fsync {
        fd: fd.clone(),
        datasync,
    })
}

/// The operation of [`fsync`].
///
/// ```
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let file = temp_file("fsync");
///     op::write_at(&file, "durable", 0).await.0.unwrap();
///     op::fsync(&file, false).await.unwrap(); // data and metadata on disk
///     op::fsync(&file, true).await.unwrap(); // fdatasync: the data
/// });
/// # fn temp_file(name: &str) -> SharedFd {
/// #     let path = std::env::temp_dir().join(format!("ringsteal-doc-{name}-{}", std::process::id()));
/// #     let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
/// #     std::fs::remove_file(&path).unwrap();
/// #     SharedFd::new(f.into())
/// # }
/// ```
#[derive(Debug)]
pub struct Fsync {
    fd: SharedFd,
    datasync: bool,
}

// SAFETY: references no memory.
unsafe impl Operation for Fsync {
    type Output = io::Result<()>;
    /// A file system request: it completes on its own.
    fn holds_paused_clock(&self) -> bool {
        true
    }
    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::fsync(self.fd.as_raw_fd(), self.datasync))
    }
    fn complete(self, results: &[(i32, u32)]) -> io::Result<()> {
        cqe_result(results[0].0).map(drop)
    }
    fn fail(self, err: io::Error) -> io::Result<()> {
        Err(err)
    }
}

/// `fallocate(fd, mode, offset, len)`.
pub fn fallocate(fd: &SharedFd, mode: i32, offset: u64, len: u64) -> Op<Fallocate> {
    Op::new(Fallocate {
        fd: fd.clone(),
        mode,
        offset,
        len,
    })
}

/// The operation of [`fallocate`].
///
/// ```
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let file = temp_file("fallocate");
///     op::fallocate(&file, 0, 0, 4096).await.unwrap(); // mode 0: allocate and extend
///     let stx = op::statx_fd(&file).await.unwrap();
///     assert_eq!(stx.stx_size, 4096);
/// });
/// # fn temp_file(name: &str) -> SharedFd {
/// #     let path = std::env::temp_dir().join(format!("ringsteal-doc-{name}-{}", std::process::id()));
/// #     let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
/// #     std::fs::remove_file(&path).unwrap();
/// #     SharedFd::new(f.into())
/// # }
/// ```
#[derive(Debug)]
pub struct Fallocate {
    fd: SharedFd,
    mode: i32,
    offset: u64,
    len: u64,
}

// SAFETY: references no memory.
unsafe impl Operation for Fallocate {
    type Output = io::Result<()>;
    /// A file system request: it completes on its own.
    fn holds_paused_clock(&self) -> bool {
        true
    }
    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::fallocate(
            self.fd.as_raw_fd(),
            self.mode,
            self.offset,
            self.len,
        ))
    }
    fn complete(self, results: &[(i32, u32)]) -> io::Result<()> {
        cqe_result(results[0].0).map(drop)
    }
    fn fail(self, err: io::Error) -> io::Result<()> {
        Err(err)
    }
}

/// Whether an [`ftruncate`] submitted here may use `IORING_OP_FTRUNCATE`: the kernel has it
/// and the runtime whose ring the op goes to (the shard this code runs on, even inside another
/// runtime's `enter()`) did not take it away (`without_feature(Feature::Ftruncate)`). Off a
/// runtime, whether the kernel has it.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder()
///     .shards(1)
///     .without_feature(ringsteal_rt::Feature::Ftruncate)
///     .build()
///     .unwrap();
/// rt.block_on(async { assert!(!ringsteal_rt::op::ftruncate_available()) });
/// ```
pub fn ftruncate_available() -> bool {
    crate::op::support::has_opcode(ringsteal_uring::abi::IORING_OP_FTRUNCATE)
}

/// `ftruncate(fd, len)` (`IORING_OP_FTRUNCATE`, Linux 6.9; probe before use:
/// [`ftruncate_available`]). Without it the op fails with `ErrorKind::Unsupported`.
pub fn ftruncate(fd: &SharedFd, len: u64) -> Op<Ftruncate> {
    Op::new(Ftruncate {
        fd: fd.clone(),
        len,
    })
}

/// The operation of [`ftruncate`]. The kernel must have `IORING_OP_FTRUNCATE`
/// ([`Feature::Ftruncate`](crate::Feature::Ftruncate)); `ringsteal_fs::File::set_len` falls
/// back to the blocking pool where it does not.
///
/// ```
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     if !op::ftruncate_available() {
///         return;
///     }
///     let file = temp_file("ftruncate");
///     op::write_at(&file, "longer than five", 0).await.0.unwrap();
///     op::ftruncate(&file, 5).await.unwrap();
///     assert_eq!(op::statx_fd(&file).await.unwrap().stx_size, 5);
/// });
/// # fn temp_file(name: &str) -> SharedFd {
/// #     let path = std::env::temp_dir().join(format!("ringsteal-doc-{name}-{}", std::process::id()));
/// #     let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
/// #     std::fs::remove_file(&path).unwrap();
/// #     SharedFd::new(f.into())
/// # }
/// ```
#[derive(Debug)]
pub struct Ftruncate {
    fd: SharedFd,
    len: u64,
}

// SAFETY: references no memory.
unsafe impl Operation for Ftruncate {
    const REQUIRES: Option<u8> = Some(ringsteal_uring::abi::IORING_OP_FTRUNCATE);
    type Output = io::Result<()>;
    /// A file system request: it completes on its own.
    fn holds_paused_clock(&self) -> bool {
        true
    }
    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::ftruncate(self.fd.as_raw_fd(), self.len))
    }
    fn complete(self, results: &[(i32, u32)]) -> io::Result<()> {
        cqe_result(results[0].0).map(drop)
    }
    fn fail(self, err: io::Error) -> io::Result<()> {
        Err(err)
    }
}
