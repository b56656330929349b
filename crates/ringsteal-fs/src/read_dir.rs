//! [`read_dir`]: a stream of directory entries, read in batches on the blocking pool (the
//! kernel has no io_uring opcode for `getdents`) from a [`Listing`] of our own, whose
//! descriptor the entries keep: [`DirEntry::metadata`] is a `statx` of the name in that
//! directory, through the ring.

use std::collections::VecDeque;
use std::ffi::{CString, OsString};
use std::future::{poll_fn, Future};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::task::{Context, Poll};

use ringsteal_rt::{op, JoinHandle};

use crate::dir_listing::{Dir, Listing, RawEntry};
use crate::metadata::FileType;
use crate::Metadata;

const BATCH: usize = 64;

type Batch = (Listing, Vec<io::Result<RawEntry>>);

/// Opens a directory for listing.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let dir = std::env::temp_dir().join(format!("ringsteal-doc-dir-{}", std::process::id()));
///     ringsteal_fs::create_dir_all(dir.join("sub")).await?;
///     ringsteal_fs::write(dir.join("a.txt"), "a").await?;
///     let mut names = Vec::new();
///     let mut entries = ringsteal_fs::read_dir(&dir).await?;
///     while let Some(entry) = entries.next_entry().await? {
///         names.push(entry.file_name().into_string().unwrap());
///     }
///     names.sort();
///     assert_eq!(names, ["a.txt", "sub"]);
///     std::fs::remove_dir_all(&dir)
/// })
/// .unwrap();
/// ```
pub async fn read_dir(path: impl AsRef<Path>) -> io::Result<ReadDir> {
    let path = path.as_ref().to_path_buf();
    let iter = crate::blocking::spawn_blocking(move || Listing::open(&path))?.await??;
    Ok(ReadDir {
        dir: iter.dir().clone(),
        state: State::Idle(Some(iter)),
        buffered: VecDeque::new(),
    })
}

/// Entries of a directory, yielded by [`next_entry`](Self::next_entry), from [`read_dir`].
/// Entries come in the order the file system lists them (not sorted), without `.` and `..`;
/// they are read 64 at a time on the blocking pool, so a shard never waits for `getdents`.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let dir = std::env::temp_dir().join(format!("ringsteal-doc-readdir-{}", std::process::id()));
///     ringsteal_fs::create_dir_all(&dir).await?;
///     for i in 0..3 {
///         ringsteal_fs::write(dir.join(format!("{i}.log")), "x").await?;
///     }
///     let mut entries = ringsteal_fs::read_dir(&dir).await?;
///     let mut count = 0;
///     while let Some(entry) = entries.next_entry().await? {
///         assert!(entry.file_name().to_string_lossy().ends_with(".log"));
///         count += 1;
///     }
///     assert_eq!(count, 3);
///     std::fs::remove_dir_all(&dir)
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct ReadDir {
    state: State,
    buffered: VecDeque<io::Result<RawEntry>>,
    /// The listed directory, which every entry keeps.
    dir: Arc<Dir>,
}

#[derive(Debug)]
enum State {
    /// The listing (`None` once exhausted).
    Idle(Option<Listing>),
    /// A batch being read on the blocking pool.
    Reading(JoinHandle<Batch>),
}

impl ReadDir {
    /// The next entry, or `None` at the end.
    pub async fn next_entry(&mut self) -> io::Result<Option<DirEntry>> {
        poll_fn(|cx| self.poll_next_entry(cx)).await
    }

    /// Polls for the next entry. After an error that ends the listing (its background read
    /// failed), later polls return `Ok(None)`.
    pub fn poll_next_entry(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Option<DirEntry>>> {
        loop {
            if let Some(entry) = self.buffered.pop_front() {
                let dir = &self.dir;
                return Poll::Ready(entry.map(|raw| {
                    Some(DirEntry {
                        dir: dir.clone(),
                        raw,
                    })
                }));
            }
            match &mut self.state {
                State::Idle(None) => return Poll::Ready(Ok(None)),
                State::Idle(iter) => {
                    if ringsteal_rt::RuntimeHandle::try_current().is_none() {
                        // Keep the iterator: polled again on the runtime, it goes on.
                        return Poll::Ready(Err(crate::blocking::off_runtime()));
                    }
                    let mut iter = iter.take().expect("checked above");
                    let batch = crate::blocking::spawn_blocking(move || {
                        let batch = iter.next_batch(BATCH);
                        (iter, batch)
                    });
                    self.state = State::Reading(batch.expect("a runtime is current"));
                }
                State::Reading(handle) => {
                    let (iter, batch) = match std::pin::Pin::new(handle).poll(cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Ok(read)) => read,
                        Poll::Ready(Err(e)) => {
                            // The batch's task failed (cancelled at shutdown, say) and took the
                            // iterator with it: report that once, then end, rather than poll a
                            // finished task again.
                            self.state = State::Idle(None);
                            return Poll::Ready(Err(e.into()));
                        }
                    };
                    // A short batch is the end, and so is an error (it can fill the batch's
                    // last place: it must not be read again).
                    let done = batch.len() < BATCH || matches!(batch.last(), Some(Err(_)));
                    self.buffered.extend(batch);
                    self.state = State::Idle((!done).then_some(iter));
                }
            }
        }
    }
}

/// One directory entry, from [`ReadDir::next_entry`]: its name and path, its type as the
/// listing reports it, and its [`Metadata`] on request.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let dir = std::env::temp_dir().join(format!("ringsteal-doc-entry-{}", std::process::id()));
///     ringsteal_fs::create_dir_all(&dir).await?;
///     ringsteal_fs::write(dir.join("data.bin"), [0u8; 100]).await?;
///     let entry = ringsteal_fs::read_dir(&dir).await?.next_entry().await?.expect("one entry");
///     assert_eq!(entry.file_name(), "data.bin");
///     assert_eq!(entry.path(), dir.join("data.bin"));
///     assert!(entry.file_type()?.is_file());
///     assert_eq!(entry.metadata().await?.len(), 100);
///     std::fs::remove_dir_all(&dir)
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct DirEntry {
    /// The directory the listing opened (its descriptor and path).
    dir: Arc<Dir>,
    raw: RawEntry,
}

impl DirEntry {
    /// The full path (the directory's path, as given to [`read_dir`], joined with the file
    /// name).
    pub fn path(&self) -> PathBuf {
        self.dir.root.join(&self.raw.name)
    }

    /// The bare file name.
    pub fn file_name(&self) -> OsString {
        self.raw.name.clone()
    }

    /// The inode number, as the directory reports it.
    pub fn ino(&self) -> u64 {
        self.raw.ino
    }

    /// The file type the directory reports (no system call on most file systems; where the
    /// directory does not say, an `fstatat` of the name in the listed directory, as std).
    pub fn file_type(&self) -> io::Result<FileType> {
        let bits = match self.raw.d_type {
            libc::DT_REG => libc::S_IFREG,
            libc::DT_DIR => libc::S_IFDIR,
            libc::DT_LNK => libc::S_IFLNK,
            libc::DT_FIFO => libc::S_IFIFO,
            libc::DT_SOCK => libc::S_IFSOCK,
            libc::DT_BLK => libc::S_IFBLK,
            libc::DT_CHR => libc::S_IFCHR,
            _ => {
                return self
                    .lstat_in_dir()
                    .map(|st| FileType::from_mode(st.st_mode))
            }
        };
        Ok(FileType::from_mode(bits))
    }

    /// The entry's metadata, not following a final symlink: a `statx` of the name in the
    /// directory the listing opened, through the ring (as std's `fstatat(dirfd, name)`), so
    /// it describes this entry even after the directory was moved or replaced.
    pub async fn metadata(&self) -> io::Result<Metadata> {
        op::statx_at(&self.dir.fd, self.c_name(), false)
            .await
            .map(Metadata::from_statx)
    }

    fn c_name(&self) -> CString {
        CString::new(self.raw.name.as_bytes()).expect("a directory entry's name has no NUL")
    }

    /// `fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW)`, for a type the directory does not report.
    fn lstat_in_dir(&self) -> io::Result<libc::stat> {
        let name = self.c_name();
        // SAFETY: zeroed stat is a valid value; fstatat writes into it; the name is
        // NUL-terminated and the directory's descriptor is held open by `self.dir`.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            let rc = libc::fstatat(
                self.dir.fd.as_raw_fd(),
                name.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            );
            if rc != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(st)
        }
    }
}
