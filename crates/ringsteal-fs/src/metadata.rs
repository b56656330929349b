//! [`Metadata`] and [`FileType`], from `statx`.

use std::fs::Permissions;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, SystemTime};

/// What `statx` reports about a file, with the accessors of [`std::fs::Metadata`] and std's
/// [`MetadataExt`](std::os::unix::fs::MetadataExt) (`size`, `mtime`, `ino`, ...). Returned
/// by [`metadata`](crate::metadata), [`symlink_metadata`](crate::symlink_metadata),
/// [`File::metadata`](crate::File::metadata) and [`DirEntry::metadata`](crate::DirEntry::metadata),
/// each one `statx` request through the ring.
///
/// ```
/// use std::time::{Duration, SystemTime};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let path = std::env::temp_dir().join(format!("ringsteal-doc-meta-{}", std::process::id()));
///     ringsteal_fs::write(&path, "twelve bytes").await?;
///     let meta = ringsteal_fs::metadata(&path).await?;
///     assert!(meta.is_file() && !meta.is_dir());
///     assert_eq!(meta.len(), 12);
///     let age = SystemTime::now().duration_since(meta.modified()?).unwrap_or_default();
///     assert!(age < Duration::from_secs(60));
///     assert!(!meta.permissions().readonly());
///     ringsteal_fs::remove_file(&path).await
/// })
/// .unwrap();
/// ```
#[derive(Clone, Copy)]
pub struct Metadata {
    stx: libc::statx,
}

impl Metadata {
    pub(crate) fn from_statx(stx: libc::statx) -> Self {
        Self { stx }
    }

    /// The kind of file.
    pub fn file_type(&self) -> FileType {
        FileType(u32::from(self.stx.stx_mode) & libc::S_IFMT)
    }

    /// True for a regular file.
    pub fn is_file(&self) -> bool {
        self.file_type().is_file()
    }

    /// True for a directory.
    pub fn is_dir(&self) -> bool {
        self.file_type().is_dir()
    }

    /// True for a symbolic link (only from `symlink_metadata`).
    pub fn is_symlink(&self) -> bool {
        self.file_type().is_symlink()
    }

    /// Size in bytes.
    pub fn len(&self) -> u64 {
        self.stx.stx_size
    }

    /// True if the size is zero.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Permissions, as std's type. As std's, it holds the whole `st_mode` (file type bits
    /// included), so it compares equal to std's for the same file.
    pub fn permissions(&self) -> Permissions {
        Permissions::from_mode(u32::from(self.stx.stx_mode))
    }

    /// The full `st_mode` (type and permission bits).
    pub fn mode(&self) -> u32 {
        u32::from(self.stx.stx_mode)
    }

    /// Last modification time.
    pub fn modified(&self) -> io::Result<SystemTime> {
        time(self.stx.stx_mtime)
    }

    /// Last access time.
    pub fn accessed(&self) -> io::Result<SystemTime> {
        time(self.stx.stx_atime)
    }

    /// Creation time, where the file system records it.
    pub fn created(&self) -> io::Result<SystemTime> {
        if self.stx.stx_mask & libc::STATX_BTIME == 0 {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "creation time is not available on this file system",
            ));
        }
        time(self.stx.stx_btime)
    }

    /// Inode number.
    pub fn ino(&self) -> u64 {
        self.stx.stx_ino
    }

    /// Device id (`makedev(major, minor)`).
    pub fn dev(&self) -> u64 {
        libc::makedev(self.stx.stx_dev_major, self.stx.stx_dev_minor)
    }

    /// Hard link count.
    pub fn nlink(&self) -> u64 {
        u64::from(self.stx.stx_nlink)
    }

    /// Owner user id.
    pub fn uid(&self) -> u32 {
        self.stx.stx_uid
    }

    /// Owner group id.
    pub fn gid(&self) -> u32 {
        self.stx.stx_gid
    }

    /// Preferred I/O block size.
    pub fn blksize(&self) -> u64 {
        u64::from(self.stx.stx_blksize)
    }

    /// 512-byte blocks allocated.
    pub fn blocks(&self) -> u64 {
        self.stx.stx_blocks
    }
}

/// std's Unix metadata accessors, so code written for `tokio::fs::metadata` (which returns
/// `std::fs::Metadata`) keeps its `use std::os::unix::fs::MetadataExt` and its calls
/// (`m.size()`, `m.mtime()`, `m.ino()`, ...). Times are seconds and nanoseconds since the
/// epoch, as `statx` reports them.
///
/// ```
/// use std::os::unix::fs::MetadataExt;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let path = std::env::temp_dir().join(format!("ringsteal-doc-ext-{}", std::process::id()));
///     ringsteal_fs::write(&path, "four").await?;
///     let ours = ringsteal_fs::metadata(&path).await?;
///     let std = std::fs::metadata(&path)?;
///     assert_eq!((ours.size(), ours.ino(), ours.mtime()), (std.size(), std.ino(), std.mtime()));
///     ringsteal_fs::remove_file(&path).await
/// })
/// .unwrap();
/// ```
impl std::os::unix::fs::MetadataExt for Metadata {
    fn dev(&self) -> u64 {
        Metadata::dev(self)
    }
    fn ino(&self) -> u64 {
        Metadata::ino(self)
    }
    fn mode(&self) -> u32 {
        Metadata::mode(self)
    }
    fn nlink(&self) -> u64 {
        Metadata::nlink(self)
    }
    fn uid(&self) -> u32 {
        Metadata::uid(self)
    }
    fn gid(&self) -> u32 {
        Metadata::gid(self)
    }
    fn rdev(&self) -> u64 {
        libc::makedev(self.stx.stx_rdev_major, self.stx.stx_rdev_minor)
    }
    fn size(&self) -> u64 {
        self.stx.stx_size
    }
    fn atime(&self) -> i64 {
        self.stx.stx_atime.tv_sec
    }
    fn atime_nsec(&self) -> i64 {
        i64::from(self.stx.stx_atime.tv_nsec)
    }
    fn mtime(&self) -> i64 {
        self.stx.stx_mtime.tv_sec
    }
    fn mtime_nsec(&self) -> i64 {
        i64::from(self.stx.stx_mtime.tv_nsec)
    }
    fn ctime(&self) -> i64 {
        self.stx.stx_ctime.tv_sec
    }
    fn ctime_nsec(&self) -> i64 {
        i64::from(self.stx.stx_ctime.tv_nsec)
    }
    fn blksize(&self) -> u64 {
        Metadata::blksize(self)
    }
    fn blocks(&self) -> u64 {
        Metadata::blocks(self)
    }
}

/// A statx timestamp as std reads one: `tv_sec` whole seconds from the epoch (negative
/// before it) *plus* `tv_nsec` nanoseconds, so `{-2, 500_000_000}` is 1.5 s before the epoch.
/// Like std, an out-of-range `tv_nsec` or a time `SystemTime` cannot hold is `InvalidData`.
fn time(ts: libc::statx_timestamp) -> io::Result<SystemTime> {
    let invalid = || io::Error::new(io::ErrorKind::InvalidData, "invalid timestamp");
    if ts.tv_nsec >= 1_000_000_000 {
        return Err(invalid());
    }
    let whole = if ts.tv_sec >= 0 {
        SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(ts.tv_sec.unsigned_abs()))
    } else {
        // Two steps: |i64::MIN| = 2^63 seconds is one more than a single step may take.
        SystemTime::UNIX_EPOCH
            .checked_sub(Duration::from_secs(ts.tv_sec.unsigned_abs() - 1))
            .and_then(|t| t.checked_sub(Duration::from_secs(1)))
    };
    whole
        .and_then(|t| t.checked_add(Duration::from_nanos(u64::from(ts.tv_nsec))))
        .ok_or_else(invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(tv_sec: i64, tv_nsec: u32) -> libc::statx_timestamp {
        // SAFETY: a plain C struct of integers; all zeroes is valid.
        let mut ts: libc::statx_timestamp = unsafe { std::mem::zeroed() };
        ts.tv_sec = tv_sec;
        ts.tv_nsec = tv_nsec;
        ts
    }

    fn offset(t: SystemTime) -> (bool, Duration) {
        match t.duration_since(SystemTime::UNIX_EPOCH) {
            Ok(d) => (true, d),
            Err(e) => (false, e.duration()),
        }
    }

    #[test]
    fn seconds_and_nanoseconds_add_up_before_and_after_the_epoch() {
        let cases = [
            (ts(-2, 500_000_000), (false, Duration::from_millis(1500))),
            (ts(-1, 0), (false, Duration::from_secs(1))),
            (ts(-1, 1), (false, Duration::from_nanos(999_999_999))),
            (ts(0, 0), (true, Duration::ZERO)),
            (ts(1, 5), (true, Duration::new(1, 5))),
        ];
        for (stamp, want) in cases {
            assert_eq!(offset(time(stamp).unwrap()), want, "{}", stamp.tv_sec);
        }
    }

    #[test]
    fn the_extremes_do_not_panic() {
        let min = time(ts(i64::MIN, 999_999_999)).unwrap();
        assert_eq!(offset(min), (false, Duration::new(i64::MAX as u64, 1)));
        let max = time(ts(i64::MAX, 999_999_999)).unwrap();
        assert_eq!(
            offset(max),
            (true, Duration::new(i64::MAX as u64, 999_999_999))
        );
        let bad = time(ts(0, 1_000_000_000)).unwrap_err();
        assert_eq!(bad.kind(), io::ErrorKind::InvalidData);
    }
}

impl std::fmt::Debug for Metadata {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metadata")
            .field("file_type", &self.file_type())
            .field("len", &self.len())
            .field("mode", &format_args!("{:o}", self.mode()))
            .finish()
    }
}

/// The kind of a file: from [`Metadata::file_type`] (one `statx`) or
/// [`DirEntry::file_type`](crate::DirEntry::file_type) (what the directory listing says, usually
/// no system call).
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let dir = ringsteal_fs::metadata(std::env::temp_dir()).await?.file_type();
///     assert!(dir.is_dir() && !dir.is_file() && !dir.is_symlink());
///     let null = ringsteal_fs::metadata("/dev/null").await?.file_type();
///     assert!(null.is_char_device());
///     Ok::<(), std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileType(u32);

impl FileType {
    /// Regular file.
    pub fn is_file(&self) -> bool {
        self.0 == libc::S_IFREG
    }
    /// Directory.
    pub fn is_dir(&self) -> bool {
        self.0 == libc::S_IFDIR
    }
    /// Symbolic link.
    pub fn is_symlink(&self) -> bool {
        self.0 == libc::S_IFLNK
    }
    /// Named pipe.
    pub fn is_fifo(&self) -> bool {
        self.0 == libc::S_IFIFO
    }
    /// Unix socket.
    pub fn is_socket(&self) -> bool {
        self.0 == libc::S_IFSOCK
    }
    /// Block device.
    pub fn is_block_device(&self) -> bool {
        self.0 == libc::S_IFBLK
    }
    /// Character device.
    pub fn is_char_device(&self) -> bool {
        self.0 == libc::S_IFCHR
    }
}

impl FileType {
    /// The type in a mode's `S_IFMT` bits.
    pub(crate) fn from_mode(mode: u32) -> Self {
        FileType(mode & libc::S_IFMT)
    }
}

impl From<std::fs::FileType> for FileType {
    fn from(ft: std::fs::FileType) -> Self {
        use std::os::unix::fs::FileTypeExt;
        let bits = if ft.is_file() {
            libc::S_IFREG
        } else if ft.is_dir() {
            libc::S_IFDIR
        } else if ft.is_symlink() {
            libc::S_IFLNK
        } else if ft.is_fifo() {
            libc::S_IFIFO
        } else if ft.is_socket() {
            libc::S_IFSOCK
        } else if ft.is_block_device() {
            libc::S_IFBLK
        } else {
            libc::S_IFCHR
        };
        FileType(bits)
    }
}

impl std::fmt::Debug for FileType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self.0 {
            libc::S_IFREG => "file",
            libc::S_IFDIR => "dir",
            libc::S_IFLNK => "symlink",
            libc::S_IFIFO => "fifo",
            libc::S_IFSOCK => "socket",
            libc::S_IFBLK => "block device",
            libc::S_IFCHR => "char device",
            _ => "unknown",
        };
        f.write_str(name)
    }
}
