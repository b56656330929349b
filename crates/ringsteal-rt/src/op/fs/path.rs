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
    UnlinkAt { path: CString, flags: i32 } => |op| opcode::unlinkat(libc::AT_FDCWD, &op.path, op.flags)
);
path_op!(
    /// The operation of [`mkdirat`].
    MkdirAt { path: CString, mode: u32 } => |op| opcode::mkdirat(libc::AT_FDCWD, &op.path, op.mode)
);
path_op!(
    /// The operation of [`renameat`].
    RenameAt { from: CString, to: CString, flags: u32 } =>
        |op| opcode::renameat(libc::AT_FDCWD, &op.from, libc::AT_FDCWD, &op.to, op.flags)
);
path_op!(
    /// The operation of [`symlinkat`].
    SymlinkAt { target: CString, link: CString } => |op| opcode::symlinkat(&op.target, libc::AT_FDCWD, &op.link)
);
path_op!(
    /// The operation of [`linkat`].
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
