//! [`read_dir`]: a stream of directory entries, read in batches on the blocking pool (the
//! kernel has no io_uring opcode for `getdents`).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::future::{poll_fn, Future};
use std::io;
use std::path::{Path, PathBuf};
use std::task::{Context, Poll};

use ringsteal_rt::JoinHandle;

use crate::metadata::FileType;
use crate::Metadata;

const BATCH: usize = 64;

type Batch = (std::fs::ReadDir, Vec<io::Result<std::fs::DirEntry>>);

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
    let iter = crate::blocking::spawn_blocking(move || std::fs::read_dir(path))?.await??;
    Ok(ReadDir {
        state: State::Idle(Some(iter)),
        buffered: VecDeque::new(),
    })
}

/// Entries of a directory, yielded by [`next_entry`](Self::next_entry).
#[derive(Debug)]
pub struct ReadDir {
    state: State,
    buffered: VecDeque<io::Result<std::fs::DirEntry>>,
}

#[derive(Debug)]
enum State {
    /// The std iterator (`None` once exhausted).
    Idle(Option<std::fs::ReadDir>),
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
                return Poll::Ready(entry.map(|e| Some(DirEntry(e))));
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
                        let batch: Vec<_> = iter.by_ref().take(BATCH).collect();
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
                    let done = batch.len() < BATCH;
                    self.buffered.extend(batch);
                    self.state = State::Idle((!done).then_some(iter));
                }
            }
        }
    }
}

/// One directory entry.
#[derive(Debug)]
pub struct DirEntry(std::fs::DirEntry);

impl DirEntry {
    /// The full path (the directory joined with the file name).
    pub fn path(&self) -> PathBuf {
        self.0.path()
    }

    /// The bare file name.
    pub fn file_name(&self) -> OsString {
        self.0.file_name()
    }

    /// The inode number, as the directory reports it.
    pub fn ino(&self) -> u64 {
        std::os::unix::fs::DirEntryExt::ino(&self.0)
    }

    /// The file type the directory reports (no extra syscall on most file systems).
    pub fn file_type(&self) -> io::Result<FileType> {
        self.0.file_type().map(FileType::from)
    }

    /// The entry's metadata, not following a final symlink (`statx` through the ring).
    pub async fn metadata(&self) -> io::Result<Metadata> {
        crate::symlink_metadata(self.path()).await
    }
}
