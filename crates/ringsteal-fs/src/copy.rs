//! [`copy`]: copies a file's contents and permissions: with `copy_file_range` on the
//! blocking pool where the kernel can (as std's `fs::copy`, and so tokio's), else chunk by
//! chunk (up to a megabyte, at least 64 KiB whatever size the file reports), each chunk a
//! linked read + write pair that the kernel runs back to back.

use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

use ringsteal_rt::buf::IoBuf;
use ringsteal_rt::op;

use crate::{File, OpenOptions};

const CHUNK: usize = 1 << 20;
/// The smallest chunk: what a file that reports a size smaller than it is (`/proc` and
/// `/sys` files report 0, a growing file an old size) is copied by at least. Sized by the
/// reported length alone, a `/proc` file was copied one byte per request.
const MIN_CHUNK: usize = 64 * 1024;

/// Copies `from` to `to` (created or truncated), like [`std::fs::copy`]: contents and
/// permission bits (set only if `to` is a regular file, as std does). Returns the number of
/// bytes copied.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let dir = std::env::temp_dir();
///     let (a, b) = (dir.join(format!("rs-copy-a-{}", std::process::id())), dir.join(format!("rs-copy-b-{}", std::process::id())));
///     ringsteal_fs::write(&a, vec![7u8; 3000]).await?;
///     assert_eq!(ringsteal_fs::copy(&a, &b).await?, 3000);
///     assert_eq!(ringsteal_fs::read(&b).await?, vec![7u8; 3000]);
///     std::fs::remove_file(&a)?;
///     std::fs::remove_file(&b)
/// })
/// .unwrap();
/// ```
pub async fn copy(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<u64> {
    let src = File::open(from).await?;
    let meta = src.metadata().await?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the source path is not a file",
        ));
    }
    let dst = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(meta.mode() & 0o7777)
        .open(to)
        .await?;
    // Permission bits as std sets them (the umask applied at creation may have cleared
    // some), and, as std, only on a regular file: copying onto a FIFO or a device (such as
    // /dev/null) must not change its permissions.
    if dst.metadata().await?.is_file() {
        // SAFETY: fchmod on a descriptor `dst` keeps open; no memory is passed.
        if unsafe { libc::fchmod(dst.as_raw_fd(), meta.mode() & 0o7777) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    if let Some(copied) = copy_in_kernel(&src, &dst).await? {
        src.close().await?;
        dst.close().await?;
        return Ok(copied);
    }
    let reported = usize::try_from(meta.len()).unwrap_or(usize::MAX);
    let mut buf = Vec::with_capacity(reported.clamp(MIN_CHUNK, CHUNK));
    let mut pos = 0u64;
    loop {
        let len = buf.capacity();
        buf.clear();
        let (res, b) = op::copy_linked(src.shared_fd(), pos, dst.shared_fd(), pos, buf, len).await;
        buf = b;
        let (read, written) = match res {
            // Positional on both sides: the chunk can simply run again.
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            res => res?,
        };
        if read == 0 {
            break;
        }
        if written < read {
            // Short read (end of file, or the file shrank): the kernel skipped the linked
            // write, so write what was read here.
            let (res, b) = dst
                .write_all_at(buf.slice(written..read), pos + written as u64)
                .await;
            buf = b.into_inner();
            res?;
        }
        // After a short read (end of file, or a file that shrank) the next read returns 0.
        pos += read as u64;
    }
    src.close().await?;
    dst.close().await?;
    Ok(pos)
}

/// Copies all of `src` (from its position, at its start) to `dst` with `copy_file_range(2)`
/// on the blocking pool: the kernel moves the bytes with no copy through user memory, and
/// shares extents where the file system can (reflinks on Btrfs and XFS, server-side copies on
/// NFS). The linked read + write chunks cost a 1 GiB copy 1.4x std's time, and a sparse one
/// 6.7x (a review's figures). `Ok(None)` if the kernel copied nothing this way (file systems
/// it cannot copy between, a device or a FIFO as the destination, a `/proc` file, which
/// reports no bytes to it): the caller copies by chunks, from the start.
async fn copy_in_kernel(src: &File, dst: &File) -> io::Result<Option<u64>> {
    // The descriptors go with the job: held open until it ends, even if this future is
    // dropped (the job runs on, as a std copy on the blocking pool would).
    let (src, dst) = (src.shared_fd().clone(), dst.shared_fd().clone());
    crate::blocking::spawn_blocking(move || {
        let mut copied = 0u64;
        loop {
            // SAFETY: copies between two descriptors the job holds open, at their positions
            // (null offsets); no memory of ours is passed.
            let n = unsafe {
                libc::copy_file_range(
                    src.as_raw_fd(),
                    std::ptr::null_mut(),
                    dst.as_raw_fd(),
                    std::ptr::null_mut(),
                    1 << 30,
                    0,
                )
            };
            match n {
                0 if copied == 0 => return Ok(None),
                0 => return Ok(Some(copied)),
                n if n > 0 => copied += n as u64,
                _ => {
                    let err = io::Error::last_os_error();
                    match err.raw_os_error() {
                        Some(libc::EINTR) => {}
                        Some(
                            libc::EXDEV
                            | libc::EINVAL
                            | libc::ENOSYS
                            | libc::EOPNOTSUPP
                            | libc::EPERM
                            | libc::ETXTBSY
                            | libc::EBADF,
                        ) if copied == 0 => return Ok(None),
                        _ => return Err(err),
                    }
                }
            }
        }
    })?
    .await
    .map_err(io::Error::other)?
}
