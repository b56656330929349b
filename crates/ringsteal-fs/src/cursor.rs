//! [`Cursor`]: a [`File`]'s position as the I/O traits see it — a read lane, a write lane
//! (`ringsteal_rt::io::Lane`) and whether the position can be moved back — and the reads and
//! writes at the position (offset `-1` for `IORING_OP_READ`/`WRITE`) that go through them.
//!
//! Reads are ordered by the read lane and writes by the write lane (on a seekable file, a
//! read waits for the write in flight, and a write for the reads: one at a time at the
//! shared position, [`Cursor::acquire_read`]): a read whose future is
//! dropped may still advance the kernel's position, and the bytes it read are kept in the
//! read lane and returned by the next read; a write whose future is dropped finishes before
//! the next write starts. `read_exact` and `write_all` hold their lane for the whole call
//! (`ringsteal_rt::io::read_exact_in_lane`, as the net crate's streams do): a dropped
//! `read_exact` gives back every byte it took, and two tasks' `write_all`s never interleave.
//!
//! Kept bytes put the position the reader sees (the logical one) behind the kernel's. A
//! write belongs at the logical position, as in tokio's `File` (which seeks back over
//! read-ahead it has not handed out): so before a write, a seekable file drops its kept
//! bytes and moves the kernel's position back over them (`lseek`), and the next read reads
//! them again, or what the write put there. Only a regular file or a block device shares
//! a position between its reads and writes; anything else (a pipe, a FIFO, a terminal, an
//! eventfd or other character device, even where `lseek` succeeds and does nothing) keeps
//! its kept bytes for the next read, and its writes never wait for its reads (which may wait
//! for data indefinitely, or for the write itself).
//!
//! May not: touch I/O at an explicit offset (`read_at`/`write_at` use no lane).

use std::io;
use std::os::fd::AsRawFd;

use ringsteal_rt::buf::{BufResult, IoBuf, IoBufMut};
use ringsteal_rt::io::{read_exact_in_lane, write_all_in_lane, InLane, Lane, LaneGuard};
use ringsteal_rt::op::{ReadAt, SharedFd, WriteAt};

use crate::File;

/// The file position, for `IORING_OP_READ`/`WRITE`.
pub(crate) const AT_POSITION: u64 = u64::MAX;

/// The state of a [`File`]'s position (see the module docs).
#[derive(Debug)]
pub(crate) struct Cursor {
    /// Orders reads at the position and keeps the bytes of abandoned ones.
    pub(crate) read: Lane,
    /// Orders writes at the position.
    pub(crate) write: Lane,
    /// Reads and writes share a position that `lseek` moves (regular files, block
    /// devices: [`has_shared_position`]).
    seekable: bool,
}

impl Cursor {
    /// The cursor of `fd`, whose kind (seekable or not) never changes.
    pub(crate) fn new(fd: &SharedFd) -> Self {
        Self {
            // A file may go on after an end of stream (it grows, is seeked; a FIFO's next
            // writer comes): a dropped read's end is not kept (`Lane::bytes_only`).
            read: Lane::bytes_only(),
            write: Lane::new(),
            seekable: has_shared_position(fd),
        }
    }

    /// Whether reads and writes share a position that `lseek` moves ([`has_shared_position`]).
    pub(crate) fn seekable(&self) -> bool {
        self.seekable
    }

    /// True if a read may have bytes kept (or be about to keep some) that a write must first
    /// give back to the file: the write cannot be a bare splice then.
    pub(crate) fn may_read_ahead(&self) -> bool {
        self.seekable && (self.read.has_leftover() || self.read.is_held())
    }
}

/// Whether reads and writes of `fd` share a position that `lseek` moves: a regular file or a
/// block device. Not a pipe or a terminal (`lseek` fails), nor an eventfd, a timerfd, a
/// signalfd, an inotify descriptor or most character devices, where `lseek` succeeds and
/// moves nothing (`noop_llseek`): giving kept bytes back there would lose them, and a write
/// waiting for a read that waits for it would never end.
fn has_shared_position(fd: &SharedFd) -> bool {
    // SAFETY: all-zero is a valid `stat`; fstat fills it; `fd` holds the descriptor open.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return false;
    }
    let kind = st.st_mode & libc::S_IFMT;
    // SAFETY: lseek passes no memory; a zero move changes nothing (a check that it works).
    (kind == libc::S_IFREG || kind == libc::S_IFBLK)
        && unsafe { libc::lseek(fd.as_raw_fd(), 0, libc::SEEK_CUR) } >= 0
}

impl Cursor {
    /// The read lane, for a read at the position. On a seekable file, first waits for the
    /// write in flight (a write whose future was dropped goes on in the kernel): a read
    /// beside it would start at the same position, return the bytes the write is putting
    /// there (or a torn mix), and its move of the position be lost to the write's. The
    /// write lane is let go once the read lane is held, so a write that comes next waits for
    /// the read (`give_back_read_ahead`): reads and writes at the shared position run one
    /// at a time, in the order they came, as with std's and tokio's `File`. The lanes are
    /// taken write first, as everywhere (`seek`, `set_len`), so no two callers wait for
    /// each other.
    pub(crate) async fn acquire_read(&self) -> LaneGuard {
        if !self.seekable {
            return self.read.acquire().await;
        }
        let _write = self.write.acquire().await;
        self.read.acquire().await
    }
}

impl File {
    pub(crate) async fn read_at_position<B: IoBufMut>(&self, buf: B) -> BufResult<usize, B> {
        let mut guard = self.cursor().acquire_read().await;
        let buf = match guard.take_kept(buf) {
            Ok(done) => return done,
            Err(buf) => buf,
        };
        InLane::read(ReadAt::new(self.shared_fd(), buf, AT_POSITION), guard)
            .await
            .into_parts()
            .0
    }

    /// Holds the read lane throughout; if dropped, every byte it took goes back to the
    /// lane (`InLane::read_rest`), for the next read: a file that returns short reads (a
    /// pipe, a FIFO, a terminal) loses nothing either.
    pub(crate) async fn read_exact_at_position<B: IoBufMut>(&self, buf: B) -> BufResult<(), B> {
        let guard = self.cursor().acquire_read().await;
        read_exact_in_lane(guard, buf, |mut guard, rest| async move {
            let rest = match guard.take_kept(rest) {
                Ok(done) => return (done, guard),
                Err(rest) => rest,
            };
            InLane::read_rest(ReadAt::new(self.shared_fd(), rest, AT_POSITION), guard)
                .await
                .into_parts()
        })
        .await
    }

    pub(crate) async fn write_at_position<B: IoBuf>(&self, buf: B) -> BufResult<usize, B> {
        let guard = self.cursor().write.acquire().await;
        if let Err(e) = self.give_back_read_ahead(&guard).await {
            return (Err(e), buf);
        }
        InLane::other(WriteAt::new(self.shared_fd(), buf, AT_POSITION), guard)
            .await
            .into_parts()
            .0
    }

    /// Holds the write lane throughout, so two tasks' `write_all`s never interleave.
    pub(crate) async fn write_all_at_position<B: IoBuf>(&self, buf: B) -> BufResult<(), B> {
        let guard = self.cursor().write.acquire().await;
        if let Err(e) = self.give_back_read_ahead(&guard).await {
            return (Err(e), buf);
        }
        write_all_in_lane(guard, buf, |guard, rest| async move {
            InLane::other(WriteAt::new(self.shared_fd(), rest, AT_POSITION), guard)
                .await
                .into_parts()
        })
        .await
    }

    /// Before a write at the position (the caller holds the write lane, `_write`): on a
    /// seekable file, waits for reads in flight, drops the bytes abandoned reads kept and
    /// moves the kernel's position back over them, so the write goes where the next read
    /// would have read. If the position cannot be moved, the bytes stay and the error is the
    /// write's.
    pub(crate) async fn give_back_read_ahead(&self, write: &LaneGuard) -> io::Result<()> {
        if !self.cursor().seekable {
            return Ok(());
        }
        let mut read = self.cursor().read.acquire().await;
        self.give_back_read_ahead_now(write, &mut read)
    }

    /// [`give_back_read_ahead`](Self::give_back_read_ahead) with the read lane already
    /// held (`read`).
    pub(crate) fn give_back_read_ahead_now(
        &self,
        _write: &LaneGuard,
        read: &mut LaneGuard,
    ) -> io::Result<()> {
        if !self.cursor().seekable || !read.has_leftover() {
            return Ok(());
        }
        let kept = read.take_all_leftover();
        let back = -i64::try_from(kept.len()).expect("kept bytes fit in memory");
        // SAFETY: lseek passes no memory; the file holds the descriptor open. No request at
        // the position is in flight: both lanes are held.
        if unsafe { libc::lseek(self.as_raw_fd(), back, libc::SEEK_CUR) } < 0 {
            let err = io::Error::last_os_error();
            read.unread(&kept);
            return Err(err);
        }
        Ok(())
    }
}
