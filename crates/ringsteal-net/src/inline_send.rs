//! Inline sends: a stream write that follows another write of the same stream (no read in
//! between) first offers its bytes to the socket with one non-blocking `send(2)`
//! (`MSG_DONTWAIT | MSG_NOSIGNAL`) and submits an io_uring `SEND` only for what the socket
//! did not take (ADR-0021-inline-sends-for-runs-of-writes).
//!
//! A socket with room in its send buffer takes a small write whole, so the write completes
//! in the poll that made it: no op cell, no completion to reap, no wake and second poll of
//! the task, and a task that writes several frames in a row hands them to the peer back to
//! back (the peer reads them with one `recv`) instead of one per shard tick.
//!
//! **Only in a run of writes** ([`WriteRun`]). The first write after a read goes by ring:
//! a request/response server writes once per read, and its sends, batched with the shard's
//! other requests into one `io_uring_enter`, cost less than a system call each (measured on
//! `http_1000_concurrent`: an inline send per response cost more server CPU than the op
//! round trip it saved).
//!
//! **Budget.** A write that completes inline does not yield. So that a task writing in a
//! loop to a fast reader cannot hold its shard, a thread makes at most [`MAX_STREAK`]
//! inline sends in a row; the next write goes through the ring, whose first poll always
//! returns `Pending` (the task yields), and the count starts again. A write that was offered
//! inline and then took the ring (a full socket, a refused send) resets it too; writes that
//! never try inline (the first after a read, vectored and zero-copy writes) leave it alone.
//!
//! Owns: the decision whether to try, the system call and the per-thread streak.
//! May not: hold or release a lane (the caller holds the write lane around every call, so
//! an inline send can neither overtake nor interleave with a ring write of the stream).

use std::cell::Cell;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Inline sends a thread makes in a row before one write goes through the ring (and yields).
pub(crate) const MAX_STREAK: u32 = 64;

thread_local! {
    static STREAK: Cell<u32> = const { Cell::new(0) };
}

/// Whether a stream's last transfer was a write: its next write continues a run of writes
/// and is tried inline. Reads (and a receive stream's deliveries) end the run. Shared by the
/// handles of one stream (the halves of a split); a hint only, so relaxed.
#[derive(Clone, Debug, Default)]
pub(crate) struct WriteRun(Arc<AtomicBool>);

impl WriteRun {
    /// A write was made (by either path).
    pub(crate) fn wrote(&self) {
        if !self.0.load(Ordering::Relaxed) {
            self.0.store(true, Ordering::Relaxed);
        }
    }

    /// A read was made (or data was delivered).
    pub(crate) fn read(&self) {
        if self.0.load(Ordering::Relaxed) {
            self.0.store(false, Ordering::Relaxed);
        }
    }

    /// True if the last transfer was a write.
    pub(crate) fn continues(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// What an inline send did.
#[derive(Debug)]
pub(crate) enum Inline {
    /// The socket took this many bytes (maybe fewer than offered: the rest goes by ring).
    Sent(usize),
    /// The socket refused with an error the ring would report too (`EPIPE`, `ECONNRESET`).
    Failed(io::Error),
    /// Not tried, or the socket had no room (`EAGAIN`) or the call was interrupted: submit a
    /// `SEND` for all of it.
    UseRing,
}

/// Offers `bytes` to the connected stream socket `fd` without waiting, if this thread is a
/// ringsteal shard (elsewhere I/O fails as the ring op does) and its streak allows.
///
/// The caller holds the stream's write lane.
pub(crate) fn try_send(fd: RawFd, bytes: &[u8]) -> Inline {
    let streak = STREAK.get();
    if streak >= MAX_STREAK || ringsteal_rt::current_shard().is_none() {
        STREAK.set(0);
        return Inline::UseRing;
    }
    // SAFETY: `bytes` is valid for reads of its length for the duration of the call, which
    // keeps no pointer; MSG_DONTWAIT makes this one call non-blocking on a blocking socket.
    let n = unsafe {
        libc::send(
            fd,
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        )
    };
    if n >= 0 {
        STREAK.set(streak + 1);
        return Inline::Sent(n as usize);
    }
    let err = io::Error::last_os_error();
    STREAK.set(0);
    match err.raw_os_error() {
        Some(libc::EAGAIN | libc::EINTR) => Inline::UseRing,
        _ => Inline::Failed(err),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    use super::*;

    fn on_a_shard<T>(f: impl FnOnce() -> T) -> T {
        let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
        rt.block_on(async move { f() })
    }

    #[test]
    fn a_thread_takes_the_ring_once_after_max_streak_inline_sends() {
        let (a, mut b) = UnixStream::pair().unwrap();
        on_a_shard(|| {
            STREAK.set(0);
            for i in 0..MAX_STREAK {
                assert!(
                    matches!(try_send(a.as_raw_fd(), b"x"), Inline::Sent(1)),
                    "send {i}"
                );
            }
            assert!(matches!(try_send(a.as_raw_fd(), b"y"), Inline::UseRing));
            assert!(matches!(try_send(a.as_raw_fd(), b"z"), Inline::Sent(1)));
        });
        let mut got = vec![0; MAX_STREAK as usize + 1];
        b.read_exact(&mut got).unwrap();
        assert!(got.ends_with(b"xz"), "the refused byte was not sent");
    }

    #[test]
    fn off_a_shard_nothing_is_sent_inline() {
        let (a, b) = UnixStream::pair().unwrap();
        assert!(matches!(try_send(a.as_raw_fd(), b"x"), Inline::UseRing));
        b.set_nonblocking(true).unwrap();
        let err = (&b).read(&mut [0; 1]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
    }

    #[test]
    fn a_full_socket_leaves_the_send_to_the_ring_and_a_closed_one_fails() {
        let (a, b) = UnixStream::pair().unwrap();
        on_a_shard(|| {
            let chunk = vec![7u8; 64 * 1024];
            let mut full = false;
            for _ in 0..1024 {
                STREAK.set(0);
                match try_send(a.as_raw_fd(), &chunk) {
                    Inline::Sent(_) => {}
                    Inline::UseRing => {
                        full = true;
                        break;
                    }
                    Inline::Failed(e) => panic!("{e}"),
                }
            }
            assert!(full, "the socket never filled");
            assert_eq!(STREAK.get(), 0, "a refused send restarts the streak");
            drop(b);
            match try_send(a.as_raw_fd(), b"late") {
                Inline::Failed(e) => assert_eq!(e.kind(), io::ErrorKind::BrokenPipe),
                other => panic!("{other:?}"),
            }
        });
    }
}
