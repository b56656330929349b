//! Inline transfers: a stream read or write that the socket can most likely serve at once
//! is made with one non-blocking system call (`MSG_DONTWAIT`) in the poll that asks for
//! it, and goes by io_uring request only if the socket cannot serve it (`EAGAIN`). It then
//! completes in that poll: no op cell, no completion to reap, no wake and second poll of
//! the task.
//!
//! **Only where the socket most likely can** ([`StreamHints`]): a system call that finds
//! nothing to do costs more than the op round trip it was meant to save.
//! - A *write that continues a run of writes* of the same stream
//!   (ADR-0021-inline-sends-for-runs-of-writes). A run is the `write` and `write_all` calls
//!   between two reads (`read`, `read_exact`, `readv`, a poll of the stream's receive
//!   stream); vectored and zero-copy writes neither count nor end one. A task that writes
//!   several frames in a row hands them to the peer back to back (the peer reads them with
//!   one `recv`) instead of one per shard tick. The first write after a read goes by ring
//!   if the stream's last run was a single write (or it has had none): a request/response
//!   server writes once per read, and its sends, batched with the shard's other requests
//!   into one `io_uring_enter`, cost less than a system call each (measured on
//!   `http_1000_concurrent`). On a stream whose last run had more than one write it goes
//!   inline too, so the whole next run leaves back to back, not its first write a tick
//!   before the rest.
//! - A *read when the socket had bytes queued after the stream's last read*
//!   (ADR-0022-inline-receives-when-the-kernel-says-bytes-are-queued): the kernel says so
//!   on a ring receive's completion (`IORING_CQE_F_SOCK_NONEMPTY`: TCP and Unix streams set it), and an
//!   inline receive that filled its buffer may have left more. A read that finds the socket
//!   empty goes by ring, whose completion sets the hint again.
//!
//! **Budget.** A transfer that completes inline does not yield. So that a task reading or
//! writing in a loop cannot hold its shard, a thread makes at most [`MAX_STREAK`] inline
//! transfers in a row; the next one goes through the ring, whose first poll always returns
//! `Pending` (the task yields), and the count starts again. A transfer that was offered
//! inline and then took the ring (a full or empty socket) resets it too; transfers that
//! never try inline leave it alone.
//!
//! Owns: the decision whether to try, the system calls, the per-thread streak and the
//! per-stream hints.
//! May not: hold or release a lane (the caller holds the stream's lane for the direction
//! around every call, so an inline transfer can neither overtake nor interleave with a ring
//! request of the stream).

use std::cell::Cell;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

/// Inline transfers a thread makes in a row before one goes through the ring (and yields).
pub(crate) const MAX_STREAK: u32 = 64;

thread_local! {
    static STREAK: Cell<u32> = const { Cell::new(0) };
}

/// What a stream's past transfers say about its next ones; shared by the handles of one
/// stream (the halves of a split). Hints only: a wrong guess costs the choice of path, so
/// every access is relaxed.
#[derive(Clone, Debug, Default)]
pub(crate) struct StreamHints(Arc<Hints>);

#[derive(Debug, Default)]
struct Hints {
    /// Writes since the last read, counted up to 2: 0 means the next write starts a run of
    /// writes, more means it continues one.
    writes: AtomicU8,
    /// The last run of writes (ended by a read) had more than one write.
    runs: AtomicBool,
    /// The socket had bytes queued after the last read.
    queued: AtomicBool,
    /// Receive streams of this stream alive (polled or not), which `into_std` refuses: an
    /// unpolled one would arm its request on the socket after the handover.
    receive_streams: AtomicUsize,
}

impl StreamHints {
    /// Records a write (by either path) and says whether to offer it inline: true if it
    /// continues a run of writes, or starts one on a stream whose last run had more than
    /// one write (a stream that writes in runs: its peer gets the whole run back to back,
    /// not the first write alone a tick before the rest). False for the first write after a
    /// read of a stream that writes once per read (a request/response server's reply).
    pub(crate) fn write_inline(&self) -> bool {
        let writes = &self.0.writes;
        match writes.load(Ordering::Relaxed) {
            0 => {
                writes.store(1, Ordering::Relaxed);
                self.0.runs.load(Ordering::Relaxed)
            }
            1 => {
                writes.store(2, Ordering::Relaxed);
                true
            }
            _ => true,
        }
    }

    /// A read was made (or data was delivered): a run of writes ends, and its length (one
    /// write or more) decides how the next run starts.
    pub(crate) fn read(&self) {
        let writes = self.0.writes.load(Ordering::Relaxed);
        if writes != 0 {
            set(&self.0.runs, writes > 1);
            self.0.writes.store(0, Ordering::Relaxed);
        }
    }

    /// Records whether the socket had bytes queued after the read just made.
    pub(crate) fn set_bytes_queued(&self, queued: bool) {
        set(&self.0.queued, queued);
    }

    /// True if the socket had bytes queued after the last read.
    pub(crate) fn bytes_queued(&self) -> bool {
        self.0.queued.load(Ordering::Relaxed)
    }

    /// A receive stream of this stream was made (`true`) or dropped (`false`).
    pub(crate) fn count_receive_stream(&self, made: bool) {
        if made {
            self.0.receive_streams.fetch_add(1, Ordering::SeqCst);
        } else {
            self.0.receive_streams.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// True while a receive stream of this stream is alive.
    pub(crate) fn receive_stream_alive(&self) -> bool {
        self.0.receive_streams.load(Ordering::SeqCst) > 0
    }
}

/// Stores `value` unless it is there already (a load is cheaper than a store to a line the
/// other half of a split may be reading).
fn set(flag: &AtomicBool, value: bool) {
    if flag.load(Ordering::Relaxed) != value {
        flag.store(value, Ordering::Relaxed);
    }
}

/// What an inline transfer did.
#[derive(Debug)]
pub(crate) enum Inline {
    /// The socket took (or gave) this many bytes: for a write maybe fewer than offered (the
    /// rest goes by ring); for a read 0 is the end of the stream.
    Done(usize),
    /// The socket refused with an error the ring would report too (`EPIPE`, `ECONNRESET`).
    Failed(io::Error),
    /// Not tried, or the socket had no room or no data (`EAGAIN`) or the call was
    /// interrupted: submit a request for all of it.
    UseRing,
}

/// Offers `bytes` to the connected stream socket `fd` without waiting, if this thread is a
/// ringsteal shard (elsewhere I/O fails as the ring op does) and its streak allows.
///
/// The caller holds the stream's write lane.
pub(crate) fn try_send(fd: RawFd, bytes: &[u8]) -> Inline {
    within_streak(|| {
        // SAFETY: `bytes` is valid for reads of its length for the duration of the call,
        // which keeps no pointer; MSG_DONTWAIT makes this one call non-blocking on a
        // blocking socket.
        unsafe {
            libc::send(
                fd,
                bytes.as_ptr().cast(),
                bytes.len(),
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            )
        }
    })
}

/// Takes what the connected stream socket `fd` has queued, up to `dst.len()` bytes, into
/// the start of `dst` without waiting, if this thread is a ringsteal shard and its streak
/// allows. `Done(n)`: the first `n` bytes of `dst` are initialised.
///
/// The caller holds the stream's read lane, with no leftover bytes in it.
pub(crate) fn try_recv(fd: RawFd, dst: &mut [MaybeUninit<u8>]) -> Inline {
    within_streak(|| {
        // SAFETY: `dst` is valid for writes of its length for the duration of the call,
        // which keeps no pointer and writes only bytes (any value is a valid
        // `MaybeUninit<u8>`); MSG_DONTWAIT makes this one call non-blocking.
        unsafe { libc::recv(fd, dst.as_mut_ptr().cast(), dst.len(), libc::MSG_DONTWAIT) }
    })
}

/// Makes the non-blocking call `call` (a `send`/`recv` result) on a shard whose streak
/// allows, and counts it: a success extends the streak, anything else ends it.
fn within_streak(call: impl FnOnce() -> isize) -> Inline {
    let streak = STREAK.get();
    if streak >= MAX_STREAK || ringsteal_rt::current_shard().is_none() {
        STREAK.set(0);
        return Inline::UseRing;
    }
    let n = call();
    if n >= 0 {
        STREAK.set(streak + 1);
        return Inline::Done(n as usize);
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
                    matches!(try_send(a.as_raw_fd(), b"x"), Inline::Done(1)),
                    "send {i}"
                );
            }
            assert!(matches!(try_send(a.as_raw_fd(), b"y"), Inline::UseRing));
            assert!(matches!(try_send(a.as_raw_fd(), b"z"), Inline::Done(1)));
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
                    Inline::Done(_) => {}
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

    fn uninit(n: usize) -> Vec<MaybeUninit<u8>> {
        vec![MaybeUninit::uninit(); n]
    }

    #[test]
    fn receives_and_sends_share_one_streak() {
        let (a, mut b) = UnixStream::pair().unwrap();
        std::io::Write::write_all(&mut b, &[9; 100]).unwrap();
        on_a_shard(|| {
            STREAK.set(0);
            let mut dst = uninit(1);
            for i in 0..MAX_STREAK - 1 {
                assert!(
                    matches!(try_recv(a.as_raw_fd(), &mut dst), Inline::Done(1)),
                    "receive {i}"
                );
            }
            assert!(matches!(try_send(a.as_raw_fd(), b"x"), Inline::Done(1)));
            assert!(matches!(try_recv(a.as_raw_fd(), &mut dst), Inline::UseRing));
            assert!(matches!(try_recv(a.as_raw_fd(), &mut dst), Inline::Done(1)));
            // SAFETY: the receive just initialised it.
            assert_eq!(unsafe { dst[0].assume_init() }, 9);
        });
    }

    #[test]
    fn an_empty_socket_leaves_the_read_to_the_ring_and_the_end_of_stream_is_zero() {
        let (a, b) = UnixStream::pair().unwrap();
        on_a_shard(|| {
            STREAK.set(3);
            assert!(matches!(
                try_recv(a.as_raw_fd(), &mut uninit(8)),
                Inline::UseRing
            ));
            assert_eq!(STREAK.get(), 0, "a refused receive restarts the streak");
            drop(b);
            assert!(matches!(
                try_recv(a.as_raw_fd(), &mut uninit(8)),
                Inline::Done(0)
            ));
        });
    }

    #[test]
    fn off_a_shard_nothing_is_received_inline() {
        let (a, mut b) = UnixStream::pair().unwrap();
        std::io::Write::write_all(&mut b, b"kept").unwrap();
        assert!(matches!(
            try_recv(a.as_raw_fd(), &mut uninit(8)),
            Inline::UseRing
        ));
        let mut got = [0; 4];
        (&a).read_exact(&mut got).unwrap();
        assert_eq!(&got, b"kept", "the bytes are still queued");
    }

    #[test]
    fn hints_start_empty_and_the_halves_of_a_split_share_them() {
        let hints = StreamHints::default();
        assert!(!hints.bytes_queued());
        let half = hints.clone();
        assert!(!half.write_inline(), "a first write goes by ring");
        assert!(
            hints.write_inline(),
            "the halves of a split share the hints"
        );
        half.set_bytes_queued(true);
        assert!(hints.bytes_queued());
    }

    #[test]
    fn a_run_starts_inline_only_after_a_run_of_more_than_one_write() {
        let hints = StreamHints::default();
        // One write per read (a request/response server): every first write by ring.
        for _ in 0..3 {
            assert!(!hints.write_inline());
            hints.read();
        }
        // A run of two: the next run starts inline, and so does the one after.
        assert!(!hints.write_inline());
        assert!(hints.write_inline(), "the second write continues the run");
        assert!(hints.write_inline());
        // Reads with no write between them keep the last run's length.
        hints.read();
        hints.read();
        assert!(hints.write_inline(), "the last run had three writes");
        assert!(hints.write_inline());
        hints.read();
        assert!(hints.write_inline(), "the last run had two writes");
        // A run of one write: the next run starts by ring again.
        hints.read();
        assert!(!hints.write_inline());
    }
}
