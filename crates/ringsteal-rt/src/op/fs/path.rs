//! Path operations relative to the working directory: `UNLINKAT`, `MKDIRAT`, `RENAMEAT`,
//! `SYMLINKAT`, `LINKAT`. Paths are C strings owned by the op until its CQE.

use std::ffi::CString;
use std::io;

use ringsteal_uring::opcode;

use crate::op::{cqe_result, Op, Operation, Sqes};

macro_rules! path_op {
    ($(#[$doc:meta])* $name:ident { $($field:ident : $ty:ty),* } => |$this:ident| $sqe:expr) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name {
            $($field: $ty),*
        }

        // SAFETY: the SQE points only at C strings owned by the op.
        unsafe impl Operation for $name {
            type Output = io::Result<()>;
            /// A file system request: it completes on its own.
            fn holds_paused_clock(&self) -> bool {
                true
            }
            fn prepare(&mut self) -> Sqes {
                let $this = &*self;
                Sqes::One($sqe)
            }
            fn complete(self, results: &[(i32, u32)]) -> io::Result<()> {
                cqe_result(results[0].0).map(drop)
            }
            fn fail(self, err: io::Error) -> io::Result<()> {
                Err(err)
            }
        }
    };
}

path_op!(
    /// The operation of [`unlinkat`].
    ///
    /// ```
    /// use std::ffi::CString;
    /// use ringsteal_rt::op;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let path = std::env::temp_dir().join(format!("ringsteal-doc-unlinkat-{}", std::process::id()));
    ///     let _ = std::fs::remove_dir_all(&path);
    ///     std::fs::create_dir(&path).unwrap();
    ///     let c = |p: &std::path::Path| CString::new(p.to_str().unwrap()).unwrap();
    ///     std::fs::write(path.join("f"), "x").unwrap();
    ///     op::unlinkat(c(&path.join("f")), 0).await.unwrap();
    ///     op::unlinkat(c(&path), libc::AT_REMOVEDIR).await.unwrap(); // empty now
    ///     assert!(!path.exists());
    /// });
    /// ```
    UnlinkAt { path: CString, flags: i32 } => |op| opcode::unlinkat(libc::AT_FDCWD, &op.path, op.flags)
);
path_op!(
    /// The operation of [`mkdirat`].
    ///
    /// ```
    /// use std::ffi::CString;
    /// use ringsteal_rt::op;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let path = std::env::temp_dir().join(format!("ringsteal-doc-mkdirat-{}", std::process::id()));
    ///     op::mkdirat(CString::new(path.to_str().unwrap()).unwrap(), 0o755).await.unwrap();
    ///     assert!(path.is_dir());
    ///     std::fs::remove_dir(&path).unwrap();
    /// });
    /// ```
    MkdirAt { path: CString, mode: u32 } => |op| opcode::mkdirat(libc::AT_FDCWD, &op.path, op.mode)
);
path_op!(
    /// The operation of [`renameat`].
    ///
    /// ```
    /// use std::ffi::CString;
    /// use ringsteal_rt::op;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let path = std::env::temp_dir().join(format!("ringsteal-doc-renameat-{}", std::process::id()));
    ///     let c = |p: &std::path::Path| CString::new(p.to_str().unwrap()).unwrap();
    ///     let to = path.with_extension("renamed");
    ///     std::fs::write(&path, "x").unwrap();
    ///     op::renameat(c(&path), c(&to), 0).await.unwrap();
    ///     assert!(!path.exists() && to.exists());
    ///     std::fs::remove_file(&to).unwrap();
    /// });
    /// ```
    RenameAt { from: CString, to: CString, flags: u32 } =>
        |op| opcode::renameat(libc::AT_FDCWD, &op.from, libc::AT_FDCWD, &op.to, op.flags)
);
path_op!(
    /// The operation of [`symlinkat`].
    ///
    /// ```
    /// use std::ffi::CString;
    /// use ringsteal_rt::op;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let path = std::env::temp_dir().join(format!("ringsteal-doc-symlinkat-{}", std::process::id()));
    ///     op::symlinkat(CString::new("/tmp").unwrap(), CString::new(path.to_str().unwrap()).unwrap())
    ///         .await
    ///         .unwrap();
    ///     assert_eq!(std::fs::read_link(&path).unwrap(), std::path::Path::new("/tmp"));
    ///     std::fs::remove_file(&path).unwrap();
    /// });
    /// ```
    SymlinkAt { target: CString, link: CString } => |op| opcode::symlinkat(&op.target, libc::AT_FDCWD, &op.link)
);
path_op!(
    /// The operation of [`linkat`].
    ///
    /// ```
    /// use std::ffi::CString;
    /// use ringsteal_rt::op;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let path = std::env::temp_dir().join(format!("ringsteal-doc-linkat-{}", std::process::id()));
    ///     let c = |p: &std::path::Path| CString::new(p.to_str().unwrap()).unwrap();
    ///     let link = path.with_extension("link");
    ///     std::fs::write(&path, "shared").unwrap();
    ///     op::linkat(c(&path), c(&link), 0).await.unwrap();
    ///     assert_eq!(std::fs::read_to_string(&link).unwrap(), "shared");
    ///     std::fs::remove_file(&path).unwrap();
    ///     std::fs::remove_file(&link).unwrap();
    /// });
    /// ```
    LinkAt { from: CString, to: CString, flags: i32 } =>
        |op| opcode::linkat(libc::AT_FDCWD, &op.from, libc::AT_FDCWD, &op.to, op.flags)
);

/// `unlinkat(AT_FDCWD, path, flags)`; `AT_REMOVEDIR` removes an empty directory.
pub fn unlinkat(path: CString, flags: i32) -> Op<UnlinkAt> {
    Op::new(UnlinkAt { path, flags })
}

/// `mkdirat(AT_FDCWD, path, mode)`.
pub fn mkdirat(path: CString, mode: u32) -> Op<MkdirAt> {
    Op::new(MkdirAt { path, mode })
}

/// `renameat2(AT_FDCWD, from, AT_FDCWD, to, flags)`.
pub fn renameat(from: CString, to: CString, flags: u32) -> Op<RenameAt> {
    Op::new(RenameAt { from, to, flags })
}

/// `symlinkat(target, AT_FDCWD, link)`.
pub fn symlinkat(target: CString, link: CString) -> Op<SymlinkAt> {
    Op::new(SymlinkAt { target, link })
}

/// `linkat(AT_FDCWD, from, AT_FDCWD, to, flags)`.
pub fn linkat(from: CString, to: CString, flags: i32) -> Op<LinkAt> {
    Op::new(LinkAt { from, to, flags })
}
