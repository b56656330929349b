//! [`WriteThenRead`]: a stream's write and the read after it as two linked requests, the
//! request/response step of a server (send the reply, wait for the next request) in one op:
//! one submission, one wake of the task, one op cell, where a write and then a read cost two
//! of each (ADR-0040).
//!
//! The write is a `SEND` with `MSG_WAITALL`, so the kernel keeps sending until every byte
//! is out (or the send fails), and the read a `RECV` linked behind it (`IOSQE_IO_LINK`),
//! which the kernel starts only once the write sent everything. The op holds both lanes'
//! guards; the write lane's goes as soon as the write has sent everything
//! ([`Operation::request_ended`]), so another task's write on the same stream does not wait
//! for the read. A write that fails or stops short breaks the link: the read never runs
//! (the kernel reports it `ECANCELED`), and the caller gets the write lane back to finish.
//!
//! May not: decide when the pair pays (the stream types do), or loop.

use std::io;

use ringsteal_uring::abi::IORING_CQE_F_SOCK_NONEMPTY;

use super::in_lane::{keep_nothing, keep_read};
use super::lane::LaneGuard;
use crate::buf::{BufResult, IoBuf, IoBufMut};
use crate::op::{Op, Operation, RecvOp, SendOp, SharedFd, Sqes};

/// A write of all of `out` and a read into `buf` after it, on one stream socket, as two
/// linked requests holding the stream's write and read lanes (module docs). Await the
/// [`Op`] that [`WriteThenRead::new`] returns; [`WriteThenReadOutput::into_parts`] gives
/// the results, the buffers and the guards back.
///
/// ```
/// use ringsteal_rt::io::{Lane, WriteThenRead};
/// use ringsteal_rt::op::SharedFd;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let a = SharedFd::new(a.into());
///     let (read_lane, write_lane) = (Lane::new(), Lane::new());
///     // The peer answers what it is sent.
///     let peer = std::thread::spawn(move || {
///         use std::io::{Read, Write};
///         let mut got = [0u8; 4];
///         (&b).read_exact(&mut got).unwrap();
///         (&b).write_all(b"pong").unwrap();
///         got
///     });
///     let (write, read) = (write_lane.acquire().await, read_lane.acquire().await);
///     let op = WriteThenRead::new(&a, b"ping".to_vec(), Vec::with_capacity(16), write, read);
///     let parts = op.await.into_parts();
///     assert_eq!(parts.written.0.unwrap(), 4);
///     assert!(parts.write_lane.is_none(), "let go once the write sent everything");
///     let (n, reply) = parts.read;
///     assert_eq!(&reply[..n.unwrap()], b"pong");
///     assert_eq!(&peer.join().unwrap(), b"ping");
/// });
/// ```
#[derive(Debug)]
pub struct WriteThenRead<W, R> {
    send: SendOp<W>,
    recv: RecvOp<R>,
    /// Bytes the write must send for the read to follow.
    want: usize,
    write_lane: Option<LaneGuard>,
    read_lane: LaneGuard,
}

impl<W: IoBuf, R: IoBufMut> WriteThenRead<W, R> {
    /// Writes the initialised bytes of `out` on the connected stream socket `fd`, then reads
    /// into `buf` (from its start, up to its capacity), holding `write_lane` until the write
    /// has sent everything and `read_lane` until the read completes. (An empty `out` works:
    /// its `SEND` sends nothing and the read follows; the stream types read alone then.)
    pub fn new(
        fd: &SharedFd,
        out: W,
        buf: R,
        write_lane: LaneGuard,
        read_lane: LaneGuard,
    ) -> Op<Self> {
        let want = out.bytes_init();
        Op::new(WriteThenRead {
            send: SendOp::new(fd, out, libc::MSG_WAITALL),
            recv: RecvOp::new(fd, buf, 0),
            want,
            write_lane: Some(write_lane),
            read_lane,
        })
    }
}

impl<W, R> WriteThenRead<W, R> {
    /// The read result that `write_all_then_read` reports when its write failed and the
    /// read was not made: an error of the write's kind that says so.
    ///
    /// ```
    /// use ringsteal_rt::io::WriteThenRead;
    ///
    /// let write = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
    /// let read = WriteThenRead::<Vec<u8>, Vec<u8>>::read_not_made(&write);
    /// assert_eq!(read.kind(), std::io::ErrorKind::BrokenPipe);
    /// assert!(read.to_string().contains("not read"));
    /// ```
    pub fn read_not_made(write: &io::Error) -> io::Error {
        io::Error::new(write.kind(), "not read: the write before it failed")
    }
}

// SAFETY: the SQEs are those of `SendOp` and `RecvOp`, each pointing into its own buffer,
// which stays inside this op (so inside the op cell) until the runtime is done with it; each
// ends with one CQE. `request_ended` drops only a lane guard, which the kernel never sees.
unsafe impl<W: IoBuf, R: IoBufMut> Operation for WriteThenRead<W, R> {
    type Output = WriteThenReadOutput<W, R>;
    const REPORTS_REQUEST_ENDS: bool = true;

    fn prepare(&mut self) -> Sqes {
        match (self.send.prepare(), self.recv.prepare()) {
            (Sqes::One(send), Sqes::One(recv)) => Sqes::Linked(send, recv),
            _ => unreachable!("a send and a receive are one request each"),
        }
    }

    fn request_ended(&mut self, index: usize, res: i32) {
        if index == 0 && usize::try_from(res).is_ok_and(|n| n == self.want) {
            // Everything is out: the next write may go, even while the read waits.
            self.write_lane = None;
        }
    }

    fn complete(self, results: &[(i32, u32)]) -> Self::Output {
        WriteThenReadOutput {
            written: Some(self.send.complete(&results[..1])),
            read: Some(self.recv.complete(&results[1..2])),
            write_lane: self.write_lane,
            read_lane: Some(self.read_lane),
            keep: keep_read::<R>,
            flags: results[1].1,
        }
    }

    fn fail(self, err: io::Error) -> Self::Output {
        let not_read = Self::read_not_made(&err);
        WriteThenReadOutput {
            written: Some(self.send.fail(err)),
            read: Some(self.recv.fail(not_read)),
            write_lane: self.write_lane,
            read_lane: Some(self.read_lane),
            keep: keep_nothing::<BufResult<usize, R>>,
            flags: 0,
        }
    }
}

/// The output of a [`WriteThenRead`]. Take it apart with
/// [`into_parts`](Self::into_parts); dropped whole (its future was gone), the bytes the read
/// received go back into the read lane, as an abandoned read's do ([`InLane`]).
///
/// [`InLane`]: super::InLane
///
/// ```
/// use ringsteal_rt::io::{Lane, WriteThenRead};
/// use ringsteal_rt::op::SharedFd;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     std::io::Write::write_all(&mut &b, b"early").unwrap();
///     let a = SharedFd::new(a.into());
///     let (read_lane, write_lane) = (Lane::new(), Lane::new());
///     let (write, read) = (write_lane.acquire().await, read_lane.acquire().await);
///     // Dropping the output untaken is what happens when the op's future was dropped.
///     drop(WriteThenRead::new(&a, b"x".to_vec(), Vec::with_capacity(16), write, read).await);
///     assert!(read_lane.has_leftover(), "the bytes read were kept for the next read");
///     assert!(!write_lane.is_held() && !read_lane.is_held());
/// });
/// ```
#[must_use = "dropping the output puts the bytes read back into the lane"]
pub struct WriteThenReadOutput<W, R> {
    written: Option<BufResult<usize, W>>,
    read: Option<BufResult<usize, R>>,
    write_lane: Option<LaneGuard>,
    read_lane: Option<LaneGuard>,
    /// Puts a read's bytes back into the lane (the output is dropped untaken).
    keep: fn(&BufResult<usize, R>, &mut LaneGuard),
    /// The flags of the read's completion (0 if it never reached the kernel).
    flags: u32,
}

/// The parts of a [`WriteThenReadOutput`].
///
/// ```
/// # use ringsteal_rt::io::WriteThenReadParts;
/// fn written(parts: &WriteThenReadParts<Vec<u8>, Vec<u8>>) -> usize {
///     *parts.written.0.as_ref().unwrap_or(&0)
/// }
/// ```
#[derive(Debug)]
pub struct WriteThenReadParts<W, R> {
    /// Bytes the write sent (all of them, or it failed or stopped short) and its buffer.
    pub written: BufResult<usize, W>,
    /// The read's byte count and buffer. If the write did not send everything, the read did
    /// not run: an error (`ECANCELED` from the kernel, or the write's error kind if nothing
    /// was submitted).
    pub read: BufResult<usize, R>,
    /// The write lane's guard, if the write did not send everything (so the caller can write
    /// the rest before anyone else writes); `None` once it did.
    pub write_lane: Option<LaneGuard>,
    /// The read lane's guard.
    pub read_lane: LaneGuard,
    /// True if the kernel said the socket still had bytes queued after the read
    /// (`IORING_CQE_F_SOCK_NONEMPTY`).
    pub socket_nonempty: bool,
}

impl<W, R> WriteThenReadOutput<W, R> {
    /// The results, the buffers and the guards.
    pub fn into_parts(mut self) -> WriteThenReadParts<W, R> {
        WriteThenReadParts {
            written: self.written.take().expect("present until taken"),
            read: self.read.take().expect("present until taken"),
            write_lane: self.write_lane.take(),
            read_lane: self.read_lane.take().expect("present until taken"),
            socket_nonempty: self.flags & IORING_CQE_F_SOCK_NONEMPTY != 0,
        }
    }
}

impl<W, R> Drop for WriteThenReadOutput<W, R> {
    fn drop(&mut self) {
        if let (Some(read), Some(lane)) = (&self.read, &mut self.read_lane) {
            (self.keep)(read, lane);
        }
    }
}

impl<W, R> std::fmt::Debug for WriteThenReadOutput<W, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteThenReadOutput")
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::{FromRawFd, OwnedFd};

    use super::*;
    use crate::io::Lane;

    /// A descriptor for the ops to name (never submitted: the tests call the op's methods as
    /// the driver and the future would). A pipe's read end, which Miri can make.
    fn some_fd() -> SharedFd {
        let mut ends = [0; 2];
        // SAFETY: `ends` has room for the two descriptors.
        assert_eq!(unsafe { libc::pipe(ends.as_mut_ptr()) }, 0);
        // SAFETY: fresh descriptors that nothing else owns.
        let (read, _write) =
            unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) };
        SharedFd::new(read)
    }

    /// The op as `new` builds it, with a receive buffer the "kernel" filled with `received`.
    fn pair(
        write_lane: &Lane,
        read_lane: &Lane,
        out: &[u8],
        received: &[u8],
    ) -> WriteThenRead<Vec<u8>, Vec<u8>> {
        let mut buf = Vec::with_capacity(16);
        for (slot, &b) in buf.spare_capacity_mut().iter_mut().zip(received) {
            slot.write(b);
        }
        let fd = some_fd();
        WriteThenRead {
            send: SendOp::new(&fd, out.to_vec(), libc::MSG_WAITALL),
            recv: RecvOp::new(&fd, buf, 0),
            want: out.len(),
            write_lane: write_lane.try_acquire(),
            read_lane: read_lane.try_acquire().expect("read lane free"),
        }
    }

    #[test]
    fn the_write_lane_goes_when_everything_is_sent_and_not_before() {
        let (w, r) = (Lane::new(), Lane::new());
        let mut op = pair(&w, &r, b"reply", b"");
        op.request_ended(0, 3);
        assert!(
            w.is_held(),
            "a short send keeps the write lane for the rest"
        );
        op.request_ended(1, 5);
        assert!(w.is_held(), "the read's end says nothing about the write");
        op.request_ended(0, 5);
        assert!(!w.is_held(), "everything sent");
        assert!(r.is_held(), "the read lane stays until the read completes");
        let parts = op
            .complete(&[(5, 0), (0, IORING_CQE_F_SOCK_NONEMPTY)])
            .into_parts();
        assert!(parts.write_lane.is_none() && parts.socket_nonempty);
        assert_eq!(parts.written.0.unwrap(), 5);
        drop(parts.read_lane);
        assert!(!r.is_held());
    }

    #[test]
    fn a_dropped_output_puts_the_bytes_read_back_and_frees_both_lanes() {
        let (w, r) = (Lane::new(), Lane::new());
        let op = pair(&w, &r, b"reply", b"next");
        // What the runtime does for a dropped future: complete, then drop the output.
        drop(op.complete(&[(5, 0), (4, 0)]));
        assert!(!w.is_held() && !r.is_held());
        let mut g = r.try_acquire().unwrap();
        let (n, buf) = g.take_leftover(Vec::with_capacity(8));
        assert_eq!(&buf[..n], b"next");
    }

    #[test]
    fn a_failed_write_gives_back_the_write_lane_and_keeps_nothing() {
        let (w, r) = (Lane::new(), Lane::new());
        let mut op = pair(&w, &r, b"reply", b"");
        op.request_ended(0, -libc::EPIPE);
        let parts = op
            .complete(&[(-libc::EPIPE, 0), (-libc::ECANCELED, 0)])
            .into_parts();
        assert_eq!(
            parts.written.0.as_ref().unwrap_err().raw_os_error(),
            Some(libc::EPIPE)
        );
        assert_eq!(
            parts.read.0.as_ref().unwrap_err().raw_os_error(),
            Some(libc::ECANCELED)
        );
        assert!(
            parts.write_lane.is_some(),
            "handed back to finish or give up"
        );
        drop(parts);
        assert!(!w.is_held() && !r.is_held() && !r.has_leftover());
        let op = pair(&w, &r, b"reply", b"");
        let parts = op.fail(io::Error::other("no ring")).into_parts();
        assert!(parts.read.0.unwrap_err().to_string().contains("not read"));
    }
}
