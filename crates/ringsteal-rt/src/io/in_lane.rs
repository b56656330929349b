//! [`InLane`]: an operation that holds its stream's [`LaneGuard`] until its last completion,
//! and [`LaneOutput`], which hands the guard back or, when the op's future was dropped,
//! keeps the bytes a read received.
//!
//! The guard lives in the op's data, so it is released exactly when the runtime is done with
//! the op: when the future takes the output back, or — if the future was dropped — when the
//! runtime builds the output at the last completion and drops it (`Operation::complete` is
//! called for that too). A read's output, dropped that way, first puts the bytes it received
//! back into the lane.
//!
//! May not: submit anything or know which opcode it wraps.

use std::io;

use ringsteal_uring::abi::IORING_CQE_F_SOCK_NONEMPTY;

use super::lane::LaneGuard;
use crate::buf::{BufResult, IoBuf, IoBufMut, IoVecBufMut, Slice};
use crate::op::{Op, Operation, Sqes};

/// An operation run while holding a lane. Build it from an operation's data (e.g.
/// [`RecvOp::new`](crate::op::RecvOp::new)) with [`InLane::read`], [`InLane::readv`],
/// [`InLane::read_rest`] (the bytes of an abandoned read are kept) or [`InLane::other`]
/// (writes, peeks, shutdowns: nothing to keep), and await it as an [`Op`].
///
/// ```
/// use ringsteal_rt::io::{InLane, Lane};
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
///     let lane = Lane::new();
///     op::send(&b, b"hi".to_vec(), 0).await.0.unwrap();
///     let guard = lane.acquire().await;
///     let out = InLane::read(op::RecvOp::new(&a, Vec::with_capacity(8), 0), guard).await;
///     let ((res, buf), _guard) = out.into_parts();
///     assert_eq!(&buf[..res.unwrap()], b"hi");
/// });
/// ```
pub struct InLane<T: Operation> {
    op: T,
    guard: LaneGuard,
    keep: fn(&T::Output, &mut LaneGuard),
}

impl<T: Operation> InLane<T> {
    /// `op` holding `guard`; if its future is dropped, nothing is kept.
    pub fn other(op: T, guard: LaneGuard) -> Op<InLane<T>> {
        Self::wrap(op, guard, keep_nothing::<T::Output>)
    }

    fn wrap(op: T, guard: LaneGuard, keep: fn(&T::Output, &mut LaneGuard)) -> Op<Self> {
        Op::new(InLane { op, guard, keep })
    }
}

impl<T, B> InLane<T>
where
    T: Operation<Output = BufResult<usize, B>>,
    B: IoBufMut,
{
    /// A read holding `guard`: if its future is dropped and the read still receives bytes,
    /// they go back into the lane for the next read.
    pub fn read(op: T, guard: LaneGuard) -> Op<InLane<T>> {
        Self::wrap(op, guard, keep_read::<B>)
    }
}

impl<T, B> InLane<T>
where
    T: Operation<Output = BufResult<usize, Slice<B>>>,
    B: IoBufMut,
{
    /// A read into `buf.slice(filled..)` that continues earlier reads into the same buffer
    /// (a `read_exact`): if abandoned, the bytes before the slice go back into the lane too,
    /// ahead of the new ones, so a dropped `read_exact` gives back everything it took.
    pub fn read_rest(op: T, guard: LaneGuard) -> Op<InLane<T>> {
        Self::wrap(op, guard, keep_read_rest::<B>)
    }
}

impl<T, B> InLane<T>
where
    T: Operation<Output = BufResult<usize, B>>,
    B: IoVecBufMut,
{
    /// A vectored read holding `guard`; the bytes of an abandoned read are kept.
    pub fn readv(op: T, guard: LaneGuard) -> Op<InLane<T>> {
        Self::wrap(op, guard, keep_readv::<B>)
    }
}

pub(super) fn keep_nothing<O>(_: &O, _: &mut LaneGuard) {}

/// Keeps the end an abandoned read met, for the next read ([`LaneGuard::keep_end`]): end of
/// stream (`Ok(0)` into a buffer with room), or an error the stream itself reported. Not an
/// error of the abandonment (the cancel's `ECANCELED`, a link timeout) or one a retry mends.
pub(super) fn keep_end(res: &io::Result<usize>, room: usize, guard: &mut LaneGuard) {
    match res {
        Ok(0) if room > 0 => guard.keep_end(None),
        Err(e) => match e.raw_os_error() {
            Some(libc::ECANCELED | libc::EINTR | libc::EAGAIN | libc::ETIME | libc::ENOBUFS)
            | None => {}
            Some(code) => guard.keep_end(Some(io::Error::from_raw_os_error(code))),
        },
        Ok(_) => {}
    }
}

pub(super) fn keep_read<B: IoBufMut>(out: &BufResult<usize, B>, guard: &mut LaneGuard) {
    keep_end(&out.0, out.1.bytes_total(), guard);
    if let (Ok(n @ 1..), buf) = out {
        // A count past the buffer is a datagram's whole length (`MSG_TRUNC`): only what the
        // buffer holds was received into it.
        let n = (*n).min(buf.bytes_init());
        if n == 0 {
            return;
        }
        // SAFETY: the buffer's first n bytes are initialised (n <= bytes_init); not null, as
        // n > 0 (an empty buffer's pointer may be null).
        let bytes = unsafe { std::slice::from_raw_parts(buf.stable_ptr(), n) };
        guard.unread(bytes);
    }
}

fn keep_read_rest<B: IoBufMut>(out: &BufResult<usize, Slice<B>>, guard: &mut LaneGuard) {
    let (res, slice) = out;
    keep_end(res, slice.bytes_total(), guard);
    // The bytes before the slice count only as far as the buffer says they are initialised:
    // `read_rest` is public, and nothing stops a caller from passing a slice of a buffer
    // whose start was never written (`Vec::with_capacity(64).slice(32..)`). A read that got
    // bytes has made everything before its end initialised (`Slice::set_init`).
    let n = (slice.begin() + res.as_ref().copied().unwrap_or(0)).min(slice.get_ref().bytes_init());
    if n == 0 {
        return;
    }
    // SAFETY: `IoBuf`'s contract: `stable_ptr` points at `bytes_init()` initialised bytes,
    // and n <= bytes_init(); not null, as n > 0.
    let bytes = unsafe { std::slice::from_raw_parts(slice.get_ref().stable_ptr(), n) };
    guard.unread(bytes);
}

fn keep_readv<B: IoVecBufMut>(out: &BufResult<usize, B>, guard: &mut LaneGuard) {
    let room = out.1.iovecs().iter().map(|v| v.iov_len).sum();
    keep_end(&out.0, room, guard);
    let (Ok(n), bufs) = out else { return };
    let mut got = Vec::with_capacity(*n);
    for iov in bufs.iovecs() {
        let take = (*n - got.len()).min(iov.iov_len);
        // SAFETY: the read filled the buffers in order; the first `take` bytes of this one
        // are initialised (it reports at least that many as initialised).
        got.extend_from_slice(unsafe {
            std::slice::from_raw_parts(iov.iov_base.cast::<u8>(), take)
        });
        if got.len() == *n {
            break;
        }
    }
    guard.unread(&got);
}

// SAFETY: forwards to the wrapped op, whose SQEs point only into itself, which stays inside
// this wrapper (so inside the op cell) until the runtime is done with it.
unsafe impl<T: Operation> Operation for InLane<T> {
    type Output = LaneOutput<T::Output>;
    const TIMED_OUT_RESULT: i32 = T::TIMED_OUT_RESULT;
    const ZERO_COPY_SEND: bool = T::ZERO_COPY_SEND;
    const REPORTS_REQUEST_ENDS: bool = T::REPORTS_REQUEST_ENDS;

    fn prepare(&mut self) -> Sqes {
        self.op.prepare()
    }

    fn send_result_posted(&mut self) {
        // The guard stays: a live future may go on writing in the lane after the
        // notification (`write_all_zc`'s next chunk).
        self.op.send_result_posted();
    }

    fn request_ended(&mut self, index: usize, res: i32) {
        self.op.request_ended(index, res);
    }

    fn holds_paused_clock(&self) -> bool {
        self.op.holds_paused_clock()
    }

    fn complete(self, results: &[(i32, u32)]) -> Self::Output {
        // The op's own request is SQE 0 (a link timeout, if any, sits behind it).
        let flags = results.first().map_or(0, |&(_, flags)| flags);
        LaneOutput {
            out: Some(self.op.complete(results)),
            guard: Some(self.guard),
            keep: self.keep,
            flags,
        }
    }

    fn fail(self, err: io::Error) -> Self::Output {
        LaneOutput {
            out: Some(self.op.fail(err)),
            guard: Some(self.guard),
            keep: keep_nothing::<T::Output>,
            flags: 0,
        }
    }
}

impl<T: Operation + std::fmt::Debug> std::fmt::Debug for InLane<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InLane").field("op", &self.op).finish()
    }
}

/// The output of an [`InLane`] op: the wrapped op's output and the lane's guard. Take both
/// with [`into_parts`](Self::into_parts); dropped whole (its future was gone), a read's bytes
/// go back into the lane before the guard is released.
///
/// ```
/// use ringsteal_rt::io::{InLane, Lane};
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
///     op::send(&b, b"kept".to_vec(), 0).await.0.unwrap();
///     let lane = Lane::new();
///     let guard = lane.acquire().await;
///     // Dropping the output untaken is what happens when a read's future was dropped.
///     drop(InLane::read(op::RecvOp::new(&a, Vec::with_capacity(8), 0), guard).await);
///     assert!(lane.has_leftover());
/// });
/// ```
#[must_use = "dropping the output puts a read's bytes back into the lane"]
pub struct LaneOutput<O> {
    out: Option<O>,
    guard: Option<LaneGuard>,
    keep: fn(&O, &mut LaneGuard),
    /// The flags of the completion of the op's own request, its first SQE (0 if it never
    /// reached the kernel).
    flags: u32,
}

impl<O> LaneOutput<O> {
    /// True if the kernel said the socket still had bytes queued after this receive
    /// (`IORING_CQE_F_SOCK_NONEMPTY`, Linux 5.19; TCP and Unix streams set it, a family that
    /// never does, or an older kernel, reads as never having more): the next read will find
    /// data without waiting.
    ///
    /// ```
    /// use ringsteal_rt::io::{InLane, Lane};
    /// use ringsteal_rt::op::{self, SharedFd};
    ///
    /// // The flag came with Linux 5.19, as `IORING_OP_SOCKET` did.
    /// if !ringsteal_uring::Features::get()
    ///     .unwrap()
    ///     .opcode_supported(ringsteal_uring::abi::IORING_OP_SOCKET)
    /// {
    ///     return;
    /// }
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    ///     let mut peer = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    ///     let me = SharedFd::new(listener.accept().unwrap().0.into());
    ///     std::io::Write::write_all(&mut peer, b"0123456789").unwrap();
    ///     let lane = Lane::new();
    ///     let out = InLane::read(op::RecvOp::new(&me, Vec::with_capacity(4), 0), lane.acquire().await).await;
    ///     assert!(out.socket_nonempty(), "6 of the 10 bytes are still queued");
    ///     drop(out.into_parts());
    ///     let out = InLane::read(op::RecvOp::new(&me, Vec::with_capacity(64), 0), lane.acquire().await).await;
    ///     assert!(!out.socket_nonempty(), "this receive took the rest");
    ///     assert_eq!(out.into_parts().0 .0.unwrap(), 6);
    /// });
    /// ```
    pub fn socket_nonempty(&self) -> bool {
        self.flags & IORING_CQE_F_SOCK_NONEMPTY != 0
    }

    /// The op's output and the guard (drop the guard to let the next request of the lane go).
    pub fn into_parts(mut self) -> (O, LaneGuard) {
        let out = self.out.take().expect("output present until taken");
        let guard = self.guard.take().expect("guard present until taken");
        (out, guard)
    }
}

impl<O> Drop for LaneOutput<O> {
    fn drop(&mut self) {
        if let (Some(out), Some(guard)) = (&self.out, &mut self.guard) {
            (self.keep)(out, guard);
        }
    }
}

impl<O> std::fmt::Debug for LaneOutput<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LaneOutput").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buf::IoBuf;
    use crate::io::Lane;

    /// A read as the kernel would complete it: `data` lands at the start of the buffer.
    struct FakeRead {
        buf: Vec<u8>,
        data: &'static [u8],
    }

    // SAFETY: never submitted (the tests only call complete/fail).
    unsafe impl Operation for FakeRead {
        type Output = BufResult<usize, Vec<u8>>;
        fn prepare(&mut self) -> Sqes {
            unreachable!("not submitted in these tests")
        }
        fn complete(mut self, results: &[(i32, u32)]) -> Self::Output {
            let res = results[0].0;
            if res < 0 {
                return (Err(io::Error::from_raw_os_error(-res)), self.buf);
            }
            let n = res as usize;
            self.buf.extend_from_slice(&self.data[..n]);
            (Ok(n), self.buf)
        }
        fn fail(self, err: io::Error) -> Self::Output {
            (Err(err), self.buf)
        }
    }

    #[test]
    fn an_abandoned_read_keeps_the_end_or_the_reset_it_met_for_the_next_read_once() {
        for (res, want) in [(0, None), (-libc::ECONNRESET, Some(libc::ECONNRESET))] {
            let lane = Lane::new();
            drop(read_in(&lane, b"").complete(&[(res, 0)]));
            assert!(lane.has_kept() && !lane.has_leftover(), "an end, no bytes");
            let mut g = lane.try_acquire().unwrap();
            let (end, _) = g.take_kept(Vec::with_capacity(8)).expect("kept");
            match want {
                None => assert_eq!(end.unwrap(), 0),
                Some(code) => assert_eq!(end.unwrap_err().raw_os_error(), Some(code)),
            }
            assert!(!g.has_kept(), "once");
            assert!(g.take_kept(Vec::with_capacity(8)).is_err());
        }
    }

    #[test]
    fn an_abandonment_error_or_an_empty_buffers_zero_keeps_nothing() {
        for res in [-libc::ECANCELED, -libc::EINTR, -libc::ETIME, -libc::EAGAIN] {
            let lane = Lane::new();
            drop(read_in(&lane, b"").complete(&[(res, 0)]));
            assert!(!lane.has_kept(), "{res} was kept");
        }
        // Zero bytes into a buffer with no room is no end of stream.
        let lane = Lane::new();
        let op = InLane {
            op: FakeRead {
                buf: Vec::new(),
                data: b"",
            },
            guard: lane.try_acquire().unwrap(),
            keep: keep_read::<Vec<u8>>,
        };
        drop(op.complete(&[(0, 0)]));
        assert!(!lane.has_kept());
    }

    fn read_in(lane: &Lane, data: &'static [u8]) -> InLane<FakeRead> {
        InLane {
            op: FakeRead {
                buf: Vec::with_capacity(16),
                data,
            },
            guard: lane.try_acquire().expect("lane free"),
            keep: keep_read::<Vec<u8>>,
        }
    }

    #[test]
    fn an_abandoned_read_puts_its_bytes_back_and_frees_the_lane() {
        let lane = Lane::new();
        let op = read_in(&lane, b"late bytes");
        assert!(lane.is_held());
        // What the runtime does when the future was dropped: complete, then drop the output.
        drop(op.complete(&[(10, 0)]));
        assert!(!lane.is_held());
        let mut g = lane.try_acquire().unwrap();
        let (n, buf) = g.take_leftover(Vec::with_capacity(32));
        assert_eq!(&buf[..n], b"late bytes");
    }

    #[test]
    fn a_read_whose_output_is_taken_keeps_nothing_in_the_lane() {
        let lane = Lane::new();
        let out = read_in(&lane, b"abc").complete(&[(3, 0)]);
        let ((res, buf), guard) = out.into_parts();
        assert_eq!(&buf[..res.unwrap()], b"abc");
        assert!(lane.is_held(), "the caller holds the guard");
        drop(guard);
        assert!(!lane.has_leftover());
        assert!(!lane.is_held());
    }

    #[test]
    fn a_failed_or_unsubmitted_read_just_frees_the_lane() {
        let lane = Lane::new();
        drop(read_in(&lane, b"x").fail(io::Error::other("no ring")));
        assert!(!lane.is_held() && !lane.has_leftover());
        drop(read_in(&lane, b"x"));
        assert!(!lane.is_held() && !lane.has_leftover());
    }

    /// A read into the rest of a buffer whose first bytes an earlier read filled.
    struct FakeReadRest {
        buf: Slice<Vec<u8>>,
        data: &'static [u8],
    }

    // SAFETY: never submitted.
    unsafe impl Operation for FakeReadRest {
        type Output = BufResult<usize, Slice<Vec<u8>>>;
        fn prepare(&mut self) -> Sqes {
            unreachable!("not submitted in these tests")
        }
        fn complete(self, results: &[(i32, u32)]) -> Self::Output {
            let n = results[0].0 as usize;
            let range = self.buf.begin()..self.buf.end();
            let mut whole = self.buf.into_inner();
            whole.extend_from_slice(&self.data[..n]);
            (Ok(n), whole.slice(range))
        }
        fn fail(self, err: io::Error) -> Self::Output {
            (Err(err), self.buf)
        }
    }

    #[test]
    fn an_abandoned_read_rest_gives_back_the_earlier_bytes_too() {
        let lane = Lane::new();
        let mut filled = Vec::with_capacity(8);
        filled.extend_from_slice(b"abc");
        let op = InLane {
            op: FakeReadRest {
                buf: filled.slice(3..),
                data: b"de",
            },
            guard: lane.try_acquire().unwrap(),
            keep: keep_read_rest::<Vec<u8>>,
        };
        drop(op.complete(&[(2, 0)]));
        let mut g = lane.try_acquire().unwrap();
        let (n, buf) = g.take_leftover(Vec::with_capacity(8));
        assert_eq!(&buf[..n], b"abcde");
    }

    #[test]
    fn an_abandoned_read_rest_into_a_never_written_buffer_keeps_nothing_uninitialised() {
        // A caller's slice past bytes nobody wrote (`read_rest` is public): a read that gets
        // nothing must not put the gap into the lane (under Miri, reading it is an error).
        for result in [Err(()), Ok(0)] {
            let lane = Lane::new();
            let op = InLane {
                op: FakeReadRest {
                    buf: Vec::with_capacity(64).slice(32..),
                    data: b"",
                },
                guard: lane.try_acquire().unwrap(),
                keep: keep_read_rest::<Vec<u8>>,
            };
            match result {
                Err(()) => drop(op.fail(io::Error::other("refused"))),
                Ok(n) => drop(op.complete(&[(n, 0)])),
            }
            assert!(!lane.is_held());
            assert!(!lane.has_leftover(), "bytes nobody received were kept");
        }
    }

    #[test]
    fn an_abandoned_vectored_read_keeps_its_bytes_in_order() {
        let lane = Lane::new();
        let bufs = vec![b"ab".to_vec(), b"cd".to_vec(), Vec::with_capacity(4)];
        let mut guard = lane.try_acquire().unwrap();
        keep_readv::<Vec<Vec<u8>>>(&(Ok(3), bufs), &mut guard);
        let (n, buf) = guard.take_leftover(Vec::with_capacity(8));
        assert_eq!(&buf[..n], b"abc");
    }
}
