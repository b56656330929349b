//! The owned-buffer I/O traits for [`File`]: reads and writes at the file position, as std's
//! `Read`/`Write` for `File`, through the file's cursor (`cursor.rs`: its lanes, and what a
//! write does with bytes an abandoned read kept).
//!
//! May not: touch positional I/O (`read_at`/`write_at` use no lane and no position).

use std::future::Future;
use std::io::{self, SeekFrom};
use std::os::fd::AsRawFd;

use ringsteal_rt::buf::{BufResult, IoBuf, IoBufMut};
use ringsteal_rt::io::{AsyncReadOwned, AsyncSeek, AsyncWriteOwned, SpliceEnd};
use ringsteal_rt::op::SharedFd;

use crate::File;

/// True if writes to `fd` go to the end of the file (`O_APPEND`, asked now: `fcntl` may have
/// changed it since the open), or if the flags cannot be read.
fn appends(fd: &SharedFd) -> bool {
    // SAFETY: F_GETFL passes no memory; `fd` holds the descriptor open for the call.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    flags < 0 || flags & libc::O_APPEND != 0
}

/// The traits for `File` and `&File` (both read and write at the position).
macro_rules! at_position {
    ($(#[$doc:meta])* $t:ty) => {
        $(#[$doc])*
        impl AsyncReadOwned for $t {
            fn read<B: IoBufMut>(
                &mut self,
                buf: B,
            ) -> impl Future<Output = BufResult<usize, B>> + Send {
                self.read_at_position(buf)
            }
            /// Holds the read lane throughout: if dropped, it gives back every byte it took.
            fn read_exact<B: IoBufMut>(
                &mut self,
                buf: B,
            ) -> impl Future<Output = BufResult<(), B>> + Send {
                self.read_exact_at_position(buf)
            }
            /// On a seekable file, each splice waits for the write in flight first, as a
            /// read does (`Cursor::acquire_read`).
            fn splice_source(&self) -> Option<SpliceEnd<'_>> {
                let cursor = self.cursor();
                let end = SpliceEnd::new(self.shared_fd(), &cursor.read);
                Some(if cursor.seekable() { end.after(&cursor.write) } else { end })
            }
        }

        /// [`File::seek`], for generic code and the buffered types (`BufReader<File>`).
        impl AsyncSeek for $t {
            fn seek(&mut self, pos: SeekFrom) -> impl Future<Output = io::Result<u64>> + Send {
                File::seek(self, pos)
            }
        }

        /// Writes at the file position; `flush` and `shutdown` have nothing to do (nothing
        /// is buffered in user space; use [`File::sync_all`] for durability).
        impl AsyncWriteOwned for $t {
            fn write<B: IoBuf>(&mut self, buf: B) -> impl Future<Output = BufResult<usize, B>> + Send {
                self.write_at_position(buf)
            }
            /// Holds the write lane throughout: two tasks' `write_all`s never interleave.
            fn write_all<B: IoBuf>(
                &mut self,
                buf: B,
            ) -> impl Future<Output = BufResult<(), B>> + Send {
                self.write_all_at_position(buf)
            }
            fn shutdown(&mut self) -> impl Future<Output = io::Result<()>> + Send {
                std::future::ready(Ok(()))
            }
            /// None for a file opened for appending: splice(2) refuses to write into one
            /// (`EINVAL`), so `copy` appends through a buffer, as std's and tokio's do. None
            /// too while reads of a seekable file have bytes kept (or in flight).
            fn splice_sink(&self) -> Option<SpliceEnd<'_>> {
                let cursor = self.cursor();
                // A write must first give back what reads kept (`cursor.rs`): the buffered
                // copy's writes do.
                (!appends(self.shared_fd()) && !cursor.may_read_ahead())
                    .then(|| SpliceEnd::new(self.shared_fd(), &cursor.write))
            }
        }
    };
}

at_position!(
    /// Reads at the file position, as std's `Read for File`.
    ///
    /// ```
    /// use ringsteal_rt::io::{AsyncReadOwned, AsyncWriteOwned};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let path = std::env::temp_dir().join(format!("ringsteal-doc-cursor-{}", std::process::id()));
    ///     let mut f = ringsteal_fs::File::create(&path).await?;
    ///     f.write_all(b"first ".to_vec()).await.0?;
    ///     f.write_all(b"second".to_vec()).await.0?;
    ///     let mut f = ringsteal_fs::File::open(&path).await?;
    ///     let (res, all) = f.read_to_end(Vec::new()).await;
    ///     assert_eq!((res?, &all[..]), (12, &b"first second"[..]));
    ///     std::fs::remove_file(&path)
    /// })
    /// .unwrap();
    /// ```
    File
);
at_position!(&File);
