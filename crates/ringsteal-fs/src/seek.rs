//! Moving a [`File`]'s position, as tokio's `AsyncSeekExt` does: [`File::seek`],
//! [`File::rewind`], [`File::stream_position`].
//!
//! The kernel has no opcode for `lseek`; it is a short system call that never blocks, made on
//! the calling thread with both of the cursor's lanes held (`cursor.rs`), so no read or write
//! at the position is in flight meanwhile. Bytes an abandoned read kept (the position the I/O
//! traits show is behind the kernel's by them) are dropped on a seekable file, and a relative
//! seek counts from the position the reader sees, as tokio's `File` does with its read-ahead.
//!
//! May not: touch I/O at an explicit offset (`read_at`/`write_at` do not use the position).

use std::io::{self, SeekFrom};
use std::os::fd::AsRawFd;

use crate::File;

impl File {
    /// Moves the position the I/O traits read and write at (std's `Seek::seek`, tokio's
    /// `AsyncSeekExt::seek`) and returns it, counted from the start of the file.
    ///
    /// Waits for reads and writes at the position that are in flight. Positional I/O
    /// (`read_at`, `write_at`) is not affected. A pipe or a socket fails with the kernel's
    /// `ESPIPE` (`ErrorKind::NotSeekable` on recent Rust), as in std.
    ///
    /// ```
    /// use std::io::SeekFrom;
    /// use ringsteal_fs::File;
    /// use ringsteal_rt::io::AsyncReadOwned;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let path = std::env::temp_dir().join(format!("ringsteal-doc-seek-{}", std::process::id()));
    ///     std::fs::write(&path, b"0123456789")?;
    ///     let mut file = File::open(&path).await?;
    ///     assert_eq!(file.seek(SeekFrom::End(-3)).await?, 7);
    ///     let (res, buf) = file.read(Vec::with_capacity(8)).await;
    ///     assert_eq!((res?, &buf[..]), (3, &b"789"[..]));
    ///     file.rewind().await?;
    ///     assert_eq!(file.stream_position().await?, 0);
    ///     std::fs::remove_file(&path)
    /// })
    /// .unwrap();
    /// ```
    pub async fn seek(&self, pos: SeekFrom) -> io::Result<u64> {
        let cursor = self.cursor();
        if !cursor.seekable() {
            // No shared position (a pipe, a FIFO, a terminal, a device that ignores seeks):
            // the kernel answers at once, as std's does (`ESPIPE`, or a move of nothing), and
            // the kept bytes stay for the next read. Waiting for the lanes here would wait for
            // a read in flight, which may wait for data for ever.
            return lseek_unordered(self.as_raw_fd(), pos);
        }
        let _write = cursor.write.acquire().await;
        let mut read = cursor.read.acquire().await;
        // On a seekable file the kept bytes sit between the reader's position and the
        // kernel's: drop them, and count a relative move from the reader's position.
        let kept = if cursor.seekable() {
            read.take_all_leftover()
        } else {
            Vec::new()
        };
        let target = match pos {
            SeekFrom::Start(n) => i64::try_from(n)
                .map(|n| (n, libc::SEEK_SET))
                .map_err(|_| too_far()),
            SeekFrom::End(n) => Ok((n, libc::SEEK_END)),
            SeekFrom::Current(n) => i64::try_from(kept.len())
                .ok()
                .and_then(|behind| n.checked_sub(behind))
                .map(|n| (n, libc::SEEK_CUR))
                .ok_or_else(too_far),
        };
        // A refused seek moves nothing, as std's: the kept bytes stay for the next read.
        let (offset, whence) = match target {
            Ok(target) => target,
            Err(err) => {
                read.unread(&kept);
                return Err(err);
            }
        };
        // SAFETY: lseek passes no memory; the file holds the descriptor open, and both lanes
        // are held, so no request at the position is in flight.
        let at = unsafe { libc::lseek(self.as_raw_fd(), offset, whence) };
        if at < 0 {
            let err = io::Error::last_os_error();
            read.unread(&kept);
            return Err(err);
        }
        Ok(at as u64)
    }

    /// Moves the position to the start of the file (`seek(SeekFrom::Start(0))`).
    pub async fn rewind(&self) -> io::Result<()> {
        self.seek(SeekFrom::Start(0)).await.map(drop)
    }

    /// The position the I/O traits read and write at (`seek(SeekFrom::Current(0))`): after
    /// an abandoned read, the position the next read starts from.
    pub async fn stream_position(&self) -> io::Result<u64> {
        self.seek(SeekFrom::Current(0)).await
    }
}

fn too_far() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "seek to a position past i64::MAX",
    )
}

/// `lseek` outside the lanes, for a file without a shared position.
fn lseek_unordered(fd: std::os::fd::RawFd, pos: SeekFrom) -> io::Result<u64> {
    let (offset, whence) = match pos {
        SeekFrom::Start(n) => (i64::try_from(n).map_err(|_| too_far())?, libc::SEEK_SET),
        SeekFrom::End(n) => (n, libc::SEEK_END),
        SeekFrom::Current(n) => (n, libc::SEEK_CUR),
    };
    // SAFETY: lseek passes no memory; the caller's file holds the descriptor open.
    let at = unsafe { libc::lseek(fd, offset, whence) };
    if at < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(at as u64)
}
