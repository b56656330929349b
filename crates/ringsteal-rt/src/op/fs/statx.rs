//! `IORING_OP_STATX` of an open descriptor, a path, or a name in an open directory.

use std::ffi::CString;
use std::io;
use std::os::fd::AsRawFd;

use ringsteal_uring::opcode;

use crate::op::{cqe_result, Op, Operation, SharedFd, Sqes};

/// `statx` of an open file (`AT_EMPTY_PATH`).
pub fn statx_fd(fd: &SharedFd) -> Op<Statx> {
    Op::new(Statx {
        fd: Some(fd.clone()),
        path: CString::default(),
        flags: libc::AT_EMPTY_PATH,
        out: new_statx(),
    })
}

/// `statx` of a path, following a final symlink if `follow`.
pub fn statx_path(path: CString, follow: bool) -> Op<Statx> {
    let flags = if follow { 0 } else { libc::AT_SYMLINK_NOFOLLOW };
    Op::new(Statx {
        fd: None,
        path,
        flags,
        out: new_statx(),
    })
}

/// `statx` of `name` in the directory `dir` (as `fstatat(dir, name)`), following a final
/// symlink if `follow`: the entry of that directory, wherever it has moved since it was
/// opened.
pub fn statx_at(dir: &SharedFd, name: CString, follow: bool) -> Op<Statx> {
    let flags = if follow { 0 } else { libc::AT_SYMLINK_NOFOLLOW };
    Op::new(Statx {
        fd: Some(dir.clone()),
        path: name,
        flags,
        out: new_statx(),
    })
}

fn new_statx() -> Box<libc::statx> {
    // SAFETY: statx is plain old data; all-zero is a valid value.
    Box::new(unsafe { std::mem::zeroed() })
}

/// The operation of [`statx_fd`], [`statx_path`] and [`statx_at`]: yields the raw `libc::statx`
/// (`ringsteal_fs::Metadata` wraps it with std's accessors).
///
/// ```
/// use std::ffi::CString;
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let stx = op::statx_path(CString::new("/").unwrap(), true).await.unwrap();
///     assert_eq!(u32::from(stx.stx_mode) & libc::S_IFMT, libc::S_IFDIR);
///     let file = temp_file("statx");
///     op::write_at(&file, "abc", 0).await.0.unwrap();
///     assert_eq!(op::statx_fd(&file).await.unwrap().stx_size, 3);
/// });
/// # fn temp_file(name: &str) -> SharedFd {
/// #     let path = std::env::temp_dir().join(format!("ringsteal-doc-{name}-{}", std::process::id()));
/// #     let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
/// #     std::fs::remove_file(&path).unwrap();
/// #     SharedFd::new(f.into())
/// # }
/// ```
pub struct Statx {
    fd: Option<SharedFd>,
    path: CString,
    flags: i32,
    out: Box<libc::statx>,
}

impl std::fmt::Debug for Statx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Statx")
            .field("path", &self.path)
            .field("flags", &self.flags)
            .finish()
    }
}

// SAFETY: the SQE points at `path` and `out`, both heap allocations owned by the op.
unsafe impl Operation for Statx {
    type Output = io::Result<libc::statx>;
    /// A file system request: it completes on its own.
    fn holds_paused_clock(&self) -> bool {
        true
    }
    fn prepare(&mut self) -> Sqes {
        let dirfd = self.fd.as_ref().map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
        let flags = self.flags | libc::AT_STATX_SYNC_AS_STAT;
        Sqes::One(opcode::statx(
            dirfd,
            &self.path,
            flags,
            libc::STATX_BASIC_STATS | libc::STATX_BTIME,
            &mut *self.out,
        ))
    }
    fn complete(self, results: &[(i32, u32)]) -> io::Result<libc::statx> {
        cqe_result(results[0].0).map(|_| *self.out)
    }
    fn fail(self, err: io::Error) -> io::Result<libc::statx> {
        Err(err)
    }
}
