//! [`StreamCore::write_all_then_read`]: a stream's reply and the read after it, as one pair
//! of linked requests where that pays ([`WriteThenRead`], ADR-0040), else as `write_all`
//! then `read`.
//!
//! The call's future is written by hand ([`WriteAllThenRead`]) and is small: a future is
//! copied whole each time it is moved into place (into the awaiting future's state), once
//! per call, and as an `async fn` this one was 768 bytes. Its pair path keeps one op; the
//! other paths are an `async fn` ([`StreamCore::write_rest_then_read`]), boxed.
//!
//! May not: send or receive by any other path than the stream's own (`write_all_by`,
//! `read`), which keep the lanes and the hints.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use ringsteal_rt::buf::{BufResult, IoBuf, IoBufMut};
use ringsteal_rt::io::{WriteThenRead, WriteThenReadOutput};
use ringsteal_rt::op::Op;

use super::{HeldWrite, StreamCore};

/// What the two results of a `write_all_then_read` are.
type Results<W, R> = (BufResult<(), W>, BufResult<usize, R>);

/// The read of a `write_all_then_read` whose write goes on by itself: still to make, or
/// made by the pair (with whether the socket had bytes queued after it).
enum ReadStep<R> {
    ToMake(R),
    Made(BufResult<usize, R>, bool),
}

impl StreamCore {
    /// `write_all(out)`, then `read(buf)`. A lone reply (the first write after a read on a
    /// stream that writes once per read, which goes by ring anyway: `inline`) followed by a
    /// read that would wait (nothing queued, nothing left over, the read lane free) goes as
    /// one pair of linked requests ([`WriteThenRead`], ADR-0040); anything else as the two
    /// calls.
    pub(crate) fn write_all_then_read<W: IoBuf, R: IoBufMut>(
        &self,
        out: W,
        buf: R,
    ) -> impl Future<Output = Results<W, R>> + Send + '_ {
        WriteAllThenRead {
            core: self,
            state: State::Start { out, buf },
        }
    }

    /// The paths of [`write_all_then_read`](Self::write_all_then_read) other than the
    /// pair's: write the rest of `out` (taking the write lane unless `held`), then the read
    /// as `read` says.
    async fn write_rest_then_read<W: IoBuf, R: IoBufMut>(
        &self,
        out: W,
        held: Option<HeldWrite>,
        read: ReadStep<R>,
    ) -> Results<W, R> {
        let (res, out) = self.write_all_by(out, false, held).await;
        match read {
            ReadStep::ToMake(buf) => self.then_read(res, out, buf).await,
            // The short write broke the link, so the read did not run: make it now.
            ReadStep::Made((Err(e), buf), _) if e.raw_os_error() == Some(libc::ECANCELED) => {
                self.then_read(res, out, buf).await
            }
            // This kernel ran the read anyway (it ignores `MSG_WAITALL` on a send).
            ReadStep::Made(read, queued) => {
                self.hints.set_bytes_queued(queued);
                ((res, out), read)
            }
        }
    }

    /// The read of [`write_all_then_read`](Self::write_all_then_read) made on its own, after
    /// its write's result `res`: not made if the write failed.
    async fn then_read<W, R: IoBufMut>(
        &self,
        res: io::Result<()>,
        out: W,
        buf: R,
    ) -> Results<W, R> {
        match res {
            Ok(()) => ((Ok(()), out), self.read(buf).await),
            Err(e) => {
                let skipped = WriteThenRead::<W, R>::read_not_made(&e);
                ((Err(e), out), (Err(skipped), buf))
            }
        }
    }

    /// The pair, if this call can make it; else `out` and `buf` back, with the write lane if
    /// it was taken.
    #[allow(clippy::type_complexity)]
    fn try_pair<W: IoBuf, R: IoBufMut>(
        &self,
        out: W,
        buf: R,
    ) -> Result<Op<WriteThenRead<W, R>>, (W, R, Option<HeldWrite>)> {
        // A busy write lane: the two calls, whose `write_all` waits its turn.
        let Some(guard) = self.write.try_acquire() else {
            return Err((out, buf, None));
        };
        let want = out.bytes_init();
        let inline = want > 0 && self.hints.write_inline();
        let alone = want > 0 && !inline && buf.bytes_total() > 0 && !self.hints.bytes_queued();
        // Never waits for the read lane with the write lane held: a busy read lane (another
        // task's read, waiting for data) would hold up this write.
        let read_lane = if alone {
            self.read.try_acquire().filter(|g| !g.has_kept())
        } else {
            None
        };
        match read_lane {
            Some(read_lane) => {
                self.hints.read();
                Ok(WriteThenRead::new(&self.fd, out, buf, guard, read_lane))
            }
            None => {
                let held = HeldWrite {
                    guard,
                    done: 0,
                    inline,
                };
                Err((out, buf, Some(held)))
            }
        }
    }

    /// What the pair's `parts` mean for the call: its results, or what is left to do (a
    /// write that stopped short, holding the write lane, and the read's outcome).
    #[allow(clippy::type_complexity)]
    fn pair_done<W: IoBuf, R: IoBufMut>(
        &self,
        parts: WriteThenReadOutput<W, R>,
        want: usize,
    ) -> Result<Results<W, R>, (W, HeldWrite, ReadStep<R>)> {
        let parts = parts.into_parts();
        let (sent, out) = parts.written;
        let sent = match sent {
            Ok(n) if n == want => {
                self.hints.set_bytes_queued(parts.socket_nonempty);
                return Ok(((Ok(()), out), parts.read));
            }
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
            Err(e) => {
                let skipped = WriteThenRead::<W, R>::read_not_made(&e);
                return Ok(((Err(e), out), (Err(skipped), parts.read.1)));
            }
        };
        // The write stopped short, which breaks the link: the read did not run (`ECANCELED`)
        // unless this kernel ignores `MSG_WAITALL` on a send (the read then ran). The write
        // lane is still held: finish the write before anyone else writes.
        drop(parts.read_lane);
        let guard = parts
            .write_lane
            .expect("kept while the write has not sent everything");
        let held = HeldWrite {
            guard,
            done: sent,
            inline: false,
        };
        Err((out, held, ReadStep::Made(parts.read, parts.socket_nonempty)))
    }
}

/// The future of [`StreamCore::write_all_then_read`].
struct WriteAllThenRead<'a, W, R> {
    core: &'a StreamCore,
    state: State<'a, W, R>,
}

// Nothing in it is pinned: the buffers move freely until the op takes them, and the other
// paths' future is boxed.
impl<W, R> Unpin for WriteAllThenRead<'_, W, R> {}

/// The other paths' future ([`StreamCore::write_rest_then_read`]'s).
type Rest<'a, W, R> = Pin<Box<dyn Future<Output = Results<W, R>> + Send + 'a>>;

enum State<'a, W, R> {
    Start {
        out: W,
        buf: R,
    },
    Pair {
        op: Op<WriteThenRead<W, R>>,
        want: usize,
    },
    /// Boxed: a future moved into place is copied whole, so an unboxed one made every call
    /// pay for this path's size.
    Rest(Rest<'a, W, R>),
    Done,
}

impl<W: IoBuf, R: IoBufMut> Future for WriteAllThenRead<'_, W, R> {
    type Output = Results<W, R>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        loop {
            match &mut this.state {
                State::Rest(rest) => {
                    let done = ready!(rest.as_mut().poll(cx));
                    this.state = State::Done;
                    return Poll::Ready(done);
                }
                State::Pair { op, want } => {
                    let parts = ready!(Pin::new(op).poll(cx));
                    let want = *want;
                    match this.core.pair_done(parts, want) {
                        Ok(done) => {
                            this.state = State::Done;
                            return Poll::Ready(done);
                        }
                        Err((out, held, read)) => {
                            this.state = State::Rest(Box::pin(this.core.write_rest_then_read(
                                out,
                                Some(held),
                                read,
                            )));
                        }
                    }
                }
                State::Start { .. } => {
                    let State::Start { out, buf } = std::mem::replace(&mut this.state, State::Done)
                    else {
                        unreachable!("matched above");
                    };
                    let want = out.bytes_init();
                    this.state = match this.core.try_pair(out, buf) {
                        Ok(op) => State::Pair { op, want },
                        Err((out, buf, held)) => State::Rest(Box::pin(
                            this.core
                                .write_rest_then_read(out, held, ReadStep::ToMake(buf)),
                        )),
                    };
                }
                State::Done => panic!("`write_all_then_read` polled after it completed"),
            }
        }
    }
}
