//! [`File`]: an open file whose reads and writes are io_uring operations on the shard that
//! runs them.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::sync::OnceLock;

use ringsteal_rt::buf::{BufResult, IoBuf, IoBufMut, IoVecBuf, IoVecBufMut};
use ringsteal_rt::io::{AsyncReadOwned, AsyncWriteOwned};
use ringsteal_rt::op::{self, Op, ReadAt, ReadvAt, SharedFd, WriteAt, WritevAt};

use crate::cursor::{Cursor, AT_POSITION};
use crate::{Metadata, OpenOptions};

/// An open file. Positional I/O (`read_at`/`write_at`) with owned buffers: each call takes
/// the buffer and gives it back with the result. It also implements
/// [`AsyncReadOwned`](ringsteal_rt::io::AsyncReadOwned) and
/// [`AsyncWriteOwned`](ringsteal_rt::io::AsyncWriteOwned), which read and write at the file
/// position (as std's `Read`/`Write`), for `ringsteal::io::copy`, `BufReader` and the rest.
///
/// `File` is `Send + Sync`; several tasks may run operations on one file at once. Every
/// operation holds the descriptor open until its completion arrives, so closing (or dropping)
/// a `File` never lets an in-flight operation act on a reused descriptor.
///
/// ```
/// use ringsteal_fs::File;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let path = std::env::temp_dir().join(format!("ringsteal-doc-file-{}", std::process::id()));
///     let file = File::options().read(true).write(true).create(true).truncate(true).open(&path).await?;
///     let (res, _) = file.write_all_at(b"hello, ring".to_vec(), 0).await;
///     res?;
///     file.sync_all().await?;
///     let (res, buf) = file.read_at(Vec::with_capacity(64), 7).await;
///     assert_eq!(res?, 4);
///     assert_eq!(buf, b"ring");
///     file.close().await?;
///     std::fs::remove_file(&path)
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct File {
    fd: SharedFd,
    /// The position as the I/O traits use it (`cursor.rs`), made on first use: positional
    /// I/O needs none.
    cursor: OnceLock<Cursor>,
}

impl File {
    pub(crate) fn from_owned(fd: OwnedFd) -> Self {
        Self {
            fd: SharedFd::new(fd),
            cursor: OnceLock::new(),
        }
    }

    /// The lanes that order reads and writes at the file position, and what it can do.
    pub(crate) fn cursor(&self) -> &Cursor {
        self.cursor.get_or_init(|| Cursor::new(&self.fd))
    }

    /// Opens a file read-only.
    pub async fn open(path: impl AsRef<Path>) -> io::Result<File> {
        OpenOptions::new().read(true).open(path).await
    }

    /// Creates (or truncates) a file, write-only.
    pub async fn create(path: impl AsRef<Path>) -> io::Result<File> {
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .await
    }

    /// Like [`create`](Self::create), but fails if the file exists.
    pub async fn create_new(path: impl AsRef<Path>) -> io::Result<File> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .await
    }

    /// A blank [`OpenOptions`].
    pub fn options() -> OpenOptions {
        OpenOptions::new()
    }

    /// Adopts a std file.
    pub fn from_std(file: std::fs::File) -> File {
        File::from_owned(file.into())
    }

    /// A second `File` for the same open file (`dup`, as std's and tokio's `try_clone`): it
    /// shares the kernel's file position and flags, but not bytes an abandoned read of this
    /// one kept.
    ///
    /// ```
    /// use ringsteal_fs::File;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let file = File::open("/dev/null").await?;
    ///     let copy = file.try_clone().await?;
    ///     drop(file);
    ///     assert_eq!(copy.metadata().await?.len(), 0);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap();
    /// ```
    pub async fn try_clone(&self) -> io::Result<File> {
        let fd = std::os::fd::AsFd::as_fd(self).try_clone_to_owned()?;
        Ok(File::from_owned(fd))
    }

    /// The file as a std `File`, once every operation on it has completed (as tokio's
    /// `into_std`). On a seekable file, bytes an abandoned read kept are given back first (the
    /// position moves back over them), so the std file reads on from where this one's reader
    /// was; on a pipe or FIFO they are dropped.
    ///
    /// ```
    /// use ringsteal_fs::File;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// let std_file = rt.block_on(async { File::open("/dev/null").await?.into_std().await });
    /// assert_eq!(std_file.unwrap().metadata().unwrap().len(), 0);
    /// ```
    pub async fn into_std(self) -> io::Result<std::fs::File> {
        if self.cursor.get().is_some() {
            let write = self.cursor().write.acquire().await;
            self.give_back_read_ahead(&write).await?;
        }
        Ok(self.fd.into_owned().await.into())
    }

    /// The file as a std `File` now, if nothing is using it (tokio's `try_into_std`): no
    /// operation in flight on it and no read or write of the I/O traits under way; otherwise
    /// the file back, unchanged. Bytes an abandoned read kept are given back first, as by
    /// [`into_std`](Self::into_std).
    ///
    /// ```
    /// use ringsteal_fs::File;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let file = File::open("/dev/null").await?;
    ///     let read = file.read_at(Vec::with_capacity(8), 0); // holds the descriptor
    ///     let file = file.try_into_std().expect_err("a read holds it");
    ///     assert_eq!(read.await.0?, 0);
    ///     let std_file = file.try_into_std().expect("nothing holds it now");
    ///     assert_eq!(std_file.metadata()?.len(), 0);
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn try_into_std(self) -> Result<std::fs::File, Self> {
        if self.fd.holders() != 1 {
            return Err(self);
        }
        if let Some(cursor) = self.cursor.get() {
            let (Some(write), Some(mut read)) =
                (cursor.write.try_acquire(), cursor.read.try_acquire())
            else {
                return Err(self);
            };
            if self.give_back_read_ahead_now(&write, &mut read).is_err() {
                return Err(self);
            }
        }
        match self.fd.try_unwrap() {
            Ok(fd) => Ok(fd.into()),
            // A holder that let go an instant ago is still leaving: try again later. What
            // was given back is read again from the file, so nothing is lost.
            Err(fd) => Err(File {
                fd,
                cursor: self.cursor,
            }),
        }
    }

    /// The shared descriptor, for the low-level op API (`ringsteal_rt::op`).
    pub fn shared_fd(&self) -> &SharedFd {
        &self.fd
    }

    /// Reads into `buf` (up to its capacity) at `pos`. Yields the byte count (0 at end of
    /// file) and the buffer. The returned [`Op`] accepts [`Op::with_timeout`].
    ///
    /// `pos == u64::MAX` reads at the file position (which the read advances) as one bare
    /// request: unlike a read through the I/O traits, it is not ordered with their reads and
    /// writes and does not see bytes an abandoned one kept (`read_exact_at` at `u64::MAX` is
    /// ordered, and does).
    pub fn read_at<B: IoBufMut>(&self, buf: B, pos: u64) -> Op<ReadAt<B>> {
        op::read_at(&self.fd, buf, pos)
    }

    /// Fills `buf` completely (its whole capacity) from `pos`, or fails with
    /// `UnexpectedEof` if the file ends first. With `pos == u64::MAX` it reads at the file
    /// position, as `AsyncReadOwned::read_exact` (and std's sequential `read_exact`): the
    /// bytes abandoned reads kept come first.
    pub async fn read_exact_at<B: IoBufMut>(&self, buf: B, pos: u64) -> BufResult<(), B> {
        if pos == AT_POSITION {
            return AsyncReadOwned::read_exact(&mut &*self, buf).await;
        }
        let want = buf.bytes_total();
        let mut buf = buf;
        let mut filled = 0;
        while filled < want {
            let (res, slice) = self
                .read_at(buf.slice(filled..), part_pos(pos, filled))
                .await;
            buf = slice.into_inner();
            match res {
                Ok(0) => {
                    return (
                        Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "failed to fill whole buffer",
                        )),
                        buf,
                    )
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return (Err(e), buf),
            }
        }
        (Ok(()), buf)
    }

    /// Writes the initialised bytes of `buf` at `pos`; may write fewer. `pos == u64::MAX`
    /// writes at the file position as one bare request, not ordered with the I/O traits'
    /// reads and writes (`write_all_at` at `u64::MAX` is).
    pub fn write_at<B: IoBuf>(&self, buf: B, pos: u64) -> Op<WriteAt<B>> {
        op::write_at(&self.fd, buf, pos)
    }

    /// Writes all initialised bytes of `buf` at `pos`, or fails (`WriteZero` if the kernel
    /// accepts nothing). With `pos == u64::MAX` it writes at the file position, as
    /// `AsyncWriteOwned::write_all`: where the next read at the position would read.
    pub async fn write_all_at<B: IoBuf>(&self, buf: B, pos: u64) -> BufResult<(), B> {
        if pos == AT_POSITION {
            return AsyncWriteOwned::write_all(&mut &*self, buf).await;
        }
        let want = buf.bytes_init();
        let mut buf = buf;
        let mut done = 0;
        while done < want {
            let (res, slice) = self
                .write_at(buf.slice(done..want), part_pos(pos, done))
                .await;
            buf = slice.into_inner();
            match res {
                Ok(0) => {
                    return (
                        Err(io::Error::new(
                            io::ErrorKind::WriteZero,
                            "failed to write whole buffer",
                        )),
                        buf,
                    )
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return (Err(e), buf),
            }
        }
        (Ok(()), buf)
    }

    /// Reads into several buffers in order (`readv`); `u64::MAX` as for
    /// [`read_at`](Self::read_at).
    pub fn readv_at<B: IoVecBufMut>(&self, bufs: B, pos: u64) -> Op<ReadvAt<B>> {
        op::readv_at(&self.fd, bufs, pos)
    }

    /// Writes several buffers in order (`writev`); `u64::MAX` as for
    /// [`write_at`](Self::write_at).
    pub fn writev_at<B: IoVecBuf>(&self, bufs: B, pos: u64) -> Op<WritevAt<B>> {
        op::writev_at(&self.fd, bufs, pos)
    }

    /// Flushes data and metadata to storage (`fsync`), after the write at the position in
    /// flight (a dropped `write` finishing), as tokio's waits for its own.
    pub async fn sync_all(&self) -> io::Result<()> {
        let _write = self.wait_for_write_at_position().await;
        op::fsync(&self.fd, false).await
    }

    /// Flushes data (and the metadata needed to read it) to storage (`fdatasync`), after
    /// the write at the position in flight, as [`sync_all`](Self::sync_all).
    pub async fn sync_data(&self) -> io::Result<()> {
        let _write = self.wait_for_write_at_position().await;
        op::fsync(&self.fd, true).await
    }

    /// The write lane of a file with a position (`Cursor::seekable`), once the write in
    /// flight there is done. `None` for a pipe, FIFO or other stream: its write may wait for
    /// a reader for ever, and what waits for it here (a sync) is refused for such a file
    /// anyway, at once, as std's is.
    async fn wait_for_write_at_position(&self) -> Option<ringsteal_rt::io::LaneGuard> {
        let cursor = self.cursor();
        if !cursor.seekable() {
            return None;
        }
        Some(cursor.write.acquire().await)
    }

    /// Allocates (or, with `mode` flags such as `FALLOC_FL_PUNCH_HOLE`, deallocates) the
    /// range `offset..offset + len` (`fallocate(2)`).
    pub async fn fallocate(&self, offset: u64, len: u64, mode: i32) -> io::Result<()> {
        op::fallocate(&self.fd, mode, offset, len).await
    }

    /// Truncates or extends the file to `size` bytes: `IORING_OP_FTRUNCATE` (Linux 6.9)
    /// where the runtime's feature set has it
    /// ([`Feature::Ftruncate`](ringsteal_rt::Feature::Ftruncate)), `ftruncate(2)` on the
    /// blocking pool otherwise.
    ///
    /// As tokio's, it first waits for the reads and writes at the position in flight and
    /// gives back the bytes a dropped read kept (the position moves back over them), so the
    /// next read reads the file as `set_len` left it, not bytes cut off by it. The position
    /// itself stays where it is (past the end after a shrink, as in std).
    pub async fn set_len(&self, size: u64) -> io::Result<()> {
        // No cursor yet: nothing was read or written at the position. No position to keep in
        // step (a pipe, a FIFO: the kernel refuses at once, as std's): nothing to wait for,
        // where a read in flight may wait for data for ever.
        let Some(cursor) = self.cursor.get().filter(|c| c.seekable()) else {
            return self.truncate(size).await;
        };
        let write = cursor.write.acquire().await;
        let mut read = cursor.read.acquire().await;
        self.give_back_read_ahead_now(&write, &mut read)?;
        self.truncate(size).await
    }

    /// `set_len`'s truncation, the cursor's lanes held by the caller.
    async fn truncate(&self, size: u64) -> io::Result<()> {
        // Asked of the runtime whose ring takes the op, which inside another runtime's
        // `enter()` is not the current one.
        if op::ftruncate_available() {
            return op::ftruncate(&self.fd, size).await;
        }
        let fd = self.fd.clone();
        let len = i64::try_from(size)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "size too large"))?;
        crate::blocking::spawn_blocking(move || {
            // SAFETY: `fd` (a clone) keeps the descriptor open for the call.
            if unsafe { libc::ftruncate(fd.as_raw_fd(), len) } == 0 {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        })?
        .await?
    }
    /// Sets the file's permissions (`fchmod`, on the blocking pool: there is no opcode), as
    /// std's and tokio's `File::set_permissions`.
    ///
    /// ```
    /// use std::os::unix::fs::PermissionsExt;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let path = std::env::temp_dir().join(format!("ringsteal-doc-fperm-{}", std::process::id()));
    ///     let file = ringsteal_fs::File::create(&path).await?;
    ///     file.set_permissions(std::fs::Permissions::from_mode(0o600)).await?;
    ///     assert_eq!(file.metadata().await?.permissions().mode() & 0o777, 0o600);
    ///     ringsteal_fs::remove_file(&path).await
    /// })
    /// .unwrap();
    /// ```
    pub async fn set_permissions(&self, perm: std::fs::Permissions) -> io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let fd = self.fd.clone();
        let set = crate::blocking::spawn_blocking(move || {
            // SAFETY: fchmod passes no memory; `fd` holds the descriptor open.
            let res = unsafe { libc::fchmod(fd.as_raw_fd(), perm.mode() as libc::mode_t) };
            if res < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(())
            }
        })?;
        set.await?
    }

    /// Sets the file's last access and modification times (std's `FileTimes`: those it
    /// names; `futimens`, on the blocking pool: there is no opcode), as std's and tokio's
    /// `File::set_times`.
    ///
    /// ```
    /// use std::fs::FileTimes;
    /// use std::time::{Duration, SystemTime};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let path = std::env::temp_dir().join(format!("ringsteal-doc-ftimes-{}", std::process::id()));
    ///     let file = ringsteal_fs::File::create(&path).await?;
    ///     let then = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    ///     file.set_times(FileTimes::new().set_accessed(then).set_modified(then)).await?;
    ///     let meta = file.metadata().await?;
    ///     assert_eq!((meta.accessed()?, meta.modified()?), (then, then));
    ///     ringsteal_fs::remove_file(&path).await
    /// })
    /// .unwrap();
    /// ```
    pub async fn set_times(&self, times: std::fs::FileTimes) -> io::Result<()> {
        let fd = self.fd.clone();
        crate::blocking::spawn_blocking(move || {
            use std::os::fd::FromRawFd;
            // SAFETY: `fd` (a clone) keeps the descriptor open for the call, and the
            // `ManuallyDrop` keeps this borrowed `std::fs::File` from closing it.
            let file =
                std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd.as_raw_fd()) });
            file.set_times(times)
        })?
        .await?
    }

    /// Sets the file's modification time, as std's and tokio's `File::set_modified`
    /// (see [`set_times`](Self::set_times)).
    pub async fn set_modified(&self, time: std::time::SystemTime) -> io::Result<()> {
        self.set_times(std::fs::FileTimes::new().set_modified(time))
            .await
    }

    /// The file's metadata (`statx`).
    pub async fn metadata(&self) -> io::Result<Metadata> {
        op::statx_fd(&self.fd).await.map(Metadata::from_statx)
    }

    /// Closes the file through the ring and reports the result of the close.
    ///
    /// Operations still in flight on the file hold its descriptor open (an operation never
    /// acts on a reused descriptor number), so `close` first waits for them to let go: one
    /// that was dropped lets go when its cancellation completes, one that another task still
    /// awaits when it completes (so do not await `close` in a task that holds an operation on
    /// this file it means to await afterwards: it would wait for itself). Clones of
    /// [`shared_fd`](Self::shared_fd) are waited for too.
    ///
    /// When it returns the descriptor is closed. On an SQPOLL ring
    /// ([`Builder::sqpoll`](ringsteal_rt::Builder::sqpoll)) the open file behind it can outlive it
    /// for a moment, as the kernel's SQ thread lets go of a request that just completed a
    /// little after its completion is visible: the last close of a pipe's read end, say, may
    /// reach the writer (`EPIPE`) that much later.
    pub async fn close(self) -> io::Result<()> {
        let fd = self.fd.into_owned().await;
        op::close(fd).await
    }
}

/// Where the part of a multi-part read or write that starts `done` bytes in goes:
/// `u64::MAX` (the file position, which each part advances) stays `u64::MAX`.
fn part_pos(pos: u64, done: usize) -> u64 {
    if pos == u64::MAX {
        pos
    } else {
        pos.saturating_add(done as u64)
    }
}

impl AsRawFd for File {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl std::os::fd::AsFd for File {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        // SAFETY: the file holds its descriptor open for as long as it is borrowed.
        unsafe { std::os::fd::BorrowedFd::borrow_raw(self.as_raw_fd()) }
    }
}

impl From<std::fs::File> for File {
    fn from(file: std::fs::File) -> Self {
        File::from_std(file)
    }
}
