//! The owned-buffer I/O traits for [`File`]: reads and writes at the file position (offset
//! `-1` for `IORING_OP_READ`/`WRITE`), as std's `Read`/`Write` for `File`.
//!
//! Reads are ordered by the file's read lane and writes by its write lane
//! (`ringsteal_rt::io::Lane`): a read whose future is dropped may still advance the position,
//! and the bytes it read are returned by the next read; a write whose future is dropped
//! finishes before the next write starts.
//!
//! May not: touch positional I/O (`read_at`/`write_at` use no lane and no position).

use std::future::Future;
use std::io;

use ringsteal_rt::buf::{BufResult, IoBuf, IoBufMut};
use ringsteal_rt::io::{AsyncReadOwned, AsyncWriteOwned, InLane, SpliceEnd};
use ringsteal_rt::op::{ReadAt, WriteAt};

use crate::File;

/// The file position, for `IORING_OP_READ`/`WRITE`.
const AT_POSITION: u64 = u64::MAX;

impl File {
    async fn read_at_position<B: IoBufMut>(&self, buf: B) -> BufResult<usize, B> {
        let mut guard = self.lanes().0.acquire().await;
        if guard.has_leftover() {
            let (n, buf) = guard.take_leftover(buf);
            return (Ok(n), buf);
        }
        InLane::read(ReadAt::new(self.shared_fd(), buf, AT_POSITION), guard)
            .await
            .into_parts()
            .0
    }

    async fn write_at_position<B: IoBuf>(&self, buf: B) -> BufResult<usize, B> {
        let guard = self.lanes().1.acquire().await;
        InLane::other(WriteAt::new(self.shared_fd(), buf, AT_POSITION), guard)
            .await
            .into_parts()
            .0
    }
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
            fn splice_source(&self) -> Option<SpliceEnd<'_>> {
                Some(SpliceEnd::new(self.shared_fd(), &self.lanes().0))
            }
        }

        /// Writes at the file position; `flush` and `shutdown` have nothing to do (nothing
        /// is buffered in user space; use [`File::sync_all`] for durability).
        impl AsyncWriteOwned for $t {
            fn write<B: IoBuf>(&mut self, buf: B) -> impl Future<Output = BufResult<usize, B>> + Send {
                self.write_at_position(buf)
            }
            fn shutdown(&mut self) -> impl Future<Output = io::Result<()>> + Send {
                std::future::ready(Ok(()))
            }
            fn splice_sink(&self) -> Option<SpliceEnd<'_>> {
                Some(SpliceEnd::new(self.shared_fd(), &self.lanes().1))
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
