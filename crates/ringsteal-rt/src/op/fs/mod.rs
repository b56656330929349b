//! File-system operations: one file per opcode family.

mod copy;
mod open;
mod path;
mod position;
mod read_write;
mod statx;
mod sync;
mod vectored;

pub use copy::{copy_linked, CopyLinked};
pub use open::{close, openat, Close, OpenAt};
pub use path::{
    linkat, mkdirat, renameat, symlinkat, unlinkat, LinkAt, MkdirAt, RenameAt, SymlinkAt, UnlinkAt,
};
pub use read_write::{read_at, write_at, ReadAt, WriteAt};
pub use statx::{statx_at, statx_fd, statx_path, Statx};
pub use sync::{fallocate, fsync, ftruncate, ftruncate_available, Fallocate, Fsync, Ftruncate};
pub use vectored::{readv_at, writev_at, ReadvAt, WritevAt};
