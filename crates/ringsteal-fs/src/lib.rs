//! # ringsteal-fs
//!
//! Files and directories for the [ringsteal](https://github.com/ringsteal/ringsteal)
//! runtime, re-exported as `ringsteal::fs`. Every call is an io_uring operation on the shard
//! that runs it (`OPENAT`, `READ`, `WRITE`, `STATX`, `FSYNC`, `RENAMEAT`...), with owned
//! buffers: reads and writes take the buffer and hand it back with the result. Calls the
//! kernel has no opcode for (`canonicalize`, `read_dir`, `set_permissions`,
//! `File::set_times` and `set_modified`, `read_link`, `remove_dir_all`, `copy`'s
//! `copy_file_range`, and `set_len` before Linux 6.9) run on the runtime's blocking pool. Two are plain system calls on the calling thread, as in
//! std: `copy` setting the permissions with `fchmod`, and the synchronous
//! `DirEntry::file_type` asking `fstatat` when the directory listing did not say.
//!
//! Names and semantics follow `std::fs` and `tokio::fs`; errors are the `io::Error`s std
//! gives for the same input (missing file, permission denied, invalid UTF-8...).
//!
//! ```
//! let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
//! rt.block_on(async {
//!     let dir = std::env::temp_dir().join(format!("ringsteal-doc-lib-{}", std::process::id()));
//!     ringsteal_fs::create_dir_all(&dir).await?;
//!     let path = dir.join("greeting");
//!     ringsteal_fs::write(&path, "hello").await?;
//!     assert_eq!(ringsteal_fs::metadata(&path).await?.len(), 5);
//!     let err = ringsteal_fs::read(dir.join("missing")).await.unwrap_err();
//!     assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
//!     std::fs::remove_dir_all(&dir)
//! })
//! .unwrap();
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]

mod blocking;
mod chunked_read;
mod copy;
mod cstr;
mod cursor;
mod dir_builder;
mod dir_listing;
mod fifo;
mod file;
#[cfg(feature = "stream")]
mod futures_stream;
mod io_traits;
mod metadata;
mod open_options;
mod path_ops;
mod read_dir;
mod seek;

pub use copy::copy;
pub use dir_builder::DirBuilder;
pub use file::File;
pub use metadata::{FileType, Metadata};
pub use open_options::OpenOptions;
pub use path_ops::{
    canonicalize, create_dir, create_dir_all, hard_link, metadata, read, read_link, read_to_string,
    remove_dir, remove_dir_all, remove_file, rename, set_permissions, symlink, symlink_metadata,
    try_exists, write,
};
pub use read_dir::{read_dir, DirEntry, ReadDir};
