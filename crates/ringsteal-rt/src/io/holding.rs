//! [`read_exact_in_lane`], [`write_all_in_lane`] and [`write_all_vectored_in_lane`]: the loops
//! of a `read_exact`, a `write_all` and a `write_all_vectored` that hold their direction's
//! [`Lane`](super::Lane) for the whole call, for a type whose reads and writes run in lanes
//! (`fs::File` at its position, child pipes, a descriptor of your own). The net crate's
//! streams keep their own `read_exact` and `write_all`, with their inline fast paths outside
//! any part future (measured: `stream_rtt` ran 2.5 % more instructions per loop through
//! these); their `write_all_vectored` has no fast path and uses the shared loop.
//!
//! Holding the lane throughout is what the provided loops (`provided.rs`) cannot do: two
//! tasks' `write_all`s never interleave, and a `read_exact` whose parts are [`InLane::read_rest`]
//! reads gives back, if dropped, every byte it took (earlier parts included), instead of
//! losing the parts it had.
//!
//! May not: submit anything itself; each part is the caller's (a request in the lane, or a
//! step that needs none, such as serving kept bytes).
//!
//! [`InLane::read_rest`]: super::InLane::read_rest

use std::future::Future;
use std::io;

use super::lane::LaneGuard;
use super::provided::{unexpected_eof, write_zero};
use crate::buf::{Advance, BufResult, IoBuf, IoBufMut, IoVecBuf, Slice};

/// Fills `buf` to its capacity holding `guard` (the read lane) throughout: each part is
/// `part(guard, rest)`, a read into the rest of the buffer that gives the guard back. Fails
/// with `UnexpectedEof` if a part reads nothing (the bytes read so far are in the buffer);
/// retries a part interrupted by a signal.
///
/// A part that submits a request should run it as [`InLane::read_rest`](super::InLane::read_rest),
/// so that a dropped `read_exact` gives back what its earlier parts read, too.
///
/// ```
/// use ringsteal_rt::io::{read_exact_in_lane, InLane, Lane};
/// use ringsteal_rt::op::{RecvOp, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let a = SharedFd::new(a.into());
///     let lane = Lane::new();
///     lane.try_acquire().unwrap().unread(b"kept ");
///     std::io::Write::write_all(&mut b, b"and new").unwrap();
///     let guard = lane.acquire().await;
///     let (res, buf) = read_exact_in_lane(guard, Vec::with_capacity(12), |mut guard, rest| {
///         let a = &a;
///         async move {
///             // What a dropped read kept (bytes, then the end it met) comes first.
///             let rest = match guard.take_kept(rest) {
///                 Ok(done) => return (done, guard),
///                 Err(rest) => rest,
///             };
///             InLane::read_rest(RecvOp::new(a, rest, 0), guard).await.into_parts()
///         }
///     })
///     .await;
///     res.unwrap();
///     assert_eq!(buf, b"kept and new");
/// });
/// ```
pub async fn read_exact_in_lane<B, F, Fut>(
    guard: LaneGuard,
    buf: B,
    mut part: F,
) -> BufResult<(), B>
where
    B: IoBufMut,
    F: FnMut(LaneGuard, Slice<B>) -> Fut,
    Fut: Future<Output = (BufResult<usize, Slice<B>>, LaneGuard)>,
{
    let want = buf.bytes_total();
    let mut guard = guard;
    let mut buf = buf;
    let mut filled = 0;
    while filled < want {
        let ((res, rest), g) = part(guard, buf.slice(filled..)).await;
        guard = g;
        buf = rest.into_inner();
        match res {
            Ok(0) => return (Err(unexpected_eof()), buf),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (Err(e), buf),
        }
    }
    (Ok(()), buf)
}

/// Writes every initialised byte of `buf` holding `guard` (the write lane) throughout: each
/// part is `part(guard, rest)`, a write of the rest that gives the guard back. Fails with
/// `WriteZero` if a part writes nothing; retries a part interrupted by a signal.
///
/// ```
/// use ringsteal_rt::io::{write_all_in_lane, InLane, Lane};
/// use ringsteal_rt::op::{SendOp, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let a = SharedFd::new(a.into());
///     let lane = Lane::new();
///     let guard = lane.acquire().await;
///     let (res, _) = write_all_in_lane(guard, b"whole".to_vec(), |guard, rest| {
///         let a = &a;
///         async move { InLane::other(SendOp::new(a, rest, 0), guard).await.into_parts() }
///     })
///     .await;
///     res.unwrap();
///     let mut got = [0u8; 5];
///     std::io::Read::read_exact(&mut b, &mut got).unwrap();
///     assert_eq!(&got, b"whole");
/// });
/// ```
pub async fn write_all_in_lane<B, F, Fut>(guard: LaneGuard, buf: B, mut part: F) -> BufResult<(), B>
where
    B: IoBuf,
    F: FnMut(LaneGuard, Slice<B>) -> Fut,
    Fut: Future<Output = (BufResult<usize, Slice<B>>, LaneGuard)>,
{
    let want = buf.bytes_init();
    let mut guard = guard;
    let mut buf = buf;
    let mut done = 0;
    while done < want {
        let ((res, rest), g) = part(guard, buf.slice(done..want)).await;
        guard = g;
        buf = rest.into_inner();
        match res {
            Ok(0) => return (Err(write_zero()), buf),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (Err(e), buf),
        }
    }
    (Ok(()), buf)
}

/// Writes every initialised byte of `bufs`, in order, holding `guard` (the write lane)
/// throughout: each part is `part(guard, rest)`, a vectored write of what is left that gives
/// the guard back. Fails with `WriteZero` if a part writes nothing; retries a part
/// interrupted by a signal. A length-delimited frame's header and body written this way
/// never have another task's write between them.
///
/// ```
/// use ringsteal_rt::io::{write_all_vectored_in_lane, InLane, Lane};
/// use ringsteal_rt::op::{SendVectored, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let a = SharedFd::new(a.into());
///     let lane = Lane::new();
///     let guard = lane.acquire().await;
///     let parts = vec![b"head ".to_vec(), b"body".to_vec()];
///     let (res, _) = write_all_vectored_in_lane(guard, parts, |guard, rest| {
///         let a = &a;
///         async move { InLane::other(SendVectored::new(a, rest), guard).await.into_parts() }
///     })
///     .await;
///     res.unwrap();
///     let mut got = [0u8; 9];
///     std::io::Read::read_exact(&mut b, &mut got).unwrap();
///     assert_eq!(&got, b"head body");
/// });
/// ```
pub async fn write_all_vectored_in_lane<B, F, Fut>(
    guard: LaneGuard,
    bufs: B,
    mut part: F,
) -> BufResult<(), B>
where
    B: IoVecBuf,
    F: FnMut(LaneGuard, Advance<B>) -> Fut,
    Fut: Future<Output = (BufResult<usize, Advance<B>>, LaneGuard)>,
{
    let mut guard = guard;
    let mut rest = Advance::new(bufs);
    while rest.remaining() > 0 {
        let ((res, back), g) = part(guard, rest).await;
        guard = g;
        rest = back;
        match res {
            Ok(0) => return (Err(write_zero()), rest.into_inner()),
            Ok(n) => rest.advance(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (Err(e), rest.into_inner()),
        }
    }
    (Ok(()), rest.into_inner())
}
