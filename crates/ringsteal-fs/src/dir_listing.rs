//! [`Listing`]: a directory open for listing on a descriptor of our own, so that every entry
//! it yields can be looked at again *in that directory* (`statx(dirfd, name)`, as std's
//! `DirEntry::metadata` does), wherever the directory has moved since, and not by its path.
//!
//! Owns: the directory's descriptor (shared with the entries, [`Dir`]) and its `DIR` stream.
//! May not: block a shard: `open` and `next_batch` run on the blocking pool (`read_dir.rs`).

use std::ffi::{CStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ringsteal_rt::op::SharedFd;

use crate::cstr::cstr;

/// The directory a listing opened: its descriptor and the path it was opened by (entries'
/// paths are joined onto it, as std's are).
#[derive(Debug)]
pub(crate) struct Dir {
    pub(crate) fd: SharedFd,
    pub(crate) root: PathBuf,
}

/// One entry as the directory reports it.
#[derive(Debug)]
pub(crate) struct RawEntry {
    pub(crate) name: OsString,
    pub(crate) ino: u64,
    /// `d_type` (`DT_UNKNOWN` where the file system does not say).
    pub(crate) d_type: u8,
}

/// A `DIR` stream over a duplicate of the directory's descriptor.
#[derive(Debug)]
pub(crate) struct Listing {
    stream: *mut libc::DIR,
    dir: Arc<Dir>,
}

// SAFETY: the `DIR` stream is owned by this value alone and used only through `&mut self`
// (one thread at a time); glibc's `DIR` carries no thread affinity.
unsafe impl Send for Listing {}

impl Listing {
    /// Opens `path` for listing (blocking), with the errors std's `read_dir` gives.
    pub(crate) fn open(path: &Path) -> io::Result<Listing> {
        let c = cstr(path)?;
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC | libc::O_NONBLOCK;
        // SAFETY: a NUL-terminated path; a non-negative result is a new descriptor.
        let fd = unsafe { libc::open(c.as_ptr(), flags) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: as above: ours alone.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: plain fcntl; a non-negative result is a new descriptor, which fdopendir
        // takes over (and closedir closes); on failure it is closed here.
        let stream = unsafe {
            let dup = libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0);
            if dup < 0 {
                return Err(io::Error::last_os_error());
            }
            let stream = libc::fdopendir(dup);
            if stream.is_null() {
                let err = io::Error::last_os_error();
                libc::close(dup);
                return Err(err);
            }
            stream
        };
        Ok(Listing {
            stream,
            dir: Arc::new(Dir {
                fd: SharedFd::new(fd),
                root: path.to_path_buf(),
            }),
        })
    }

    /// The directory, for the entries.
    pub(crate) fn dir(&self) -> &Arc<Dir> {
        &self.dir
    }

    /// Up to `max` more entries (blocking), without `.` and `..`; fewer at the end (after
    /// an error, which ends the listing).
    pub(crate) fn next_batch(&mut self, max: usize) -> Vec<io::Result<RawEntry>> {
        let mut batch = Vec::new();
        while batch.len() < max {
            // SAFETY: errno is thread-local; clearing it tells the end (null, errno 0) from
            // an error (null, errno set).
            unsafe { *libc::__errno_location() = 0 };
            // SAFETY: `stream` is a live DIR stream owned by `self`.
            let ent = unsafe { libc::readdir64(self.stream) };
            if ent.is_null() {
                let err = io::Error::last_os_error();
                if err.raw_os_error() != Some(0) {
                    batch.push(Err(err));
                }
                break;
            }
            // SAFETY: readdir64 returned a valid entry, good until the next call on the
            // stream; its name is NUL-terminated. Everything is copied out here.
            let (name, ino, d_type) = unsafe {
                let ent = &*ent;
                (CStr::from_ptr(ent.d_name.as_ptr()), ent.d_ino, ent.d_type)
            };
            let name = name.to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            batch.push(Ok(RawEntry {
                name: OsString::from_vec(name.to_vec()),
                ino,
                d_type,
            }));
        }
        batch
    }
}

impl Drop for Listing {
    fn drop(&mut self) {
        // SAFETY: the stream is live and owned by `self`; closedir also closes its
        // descriptor (the duplicate, not the one the entries share).
        unsafe { libc::closedir(self.stream) };
    }
}
