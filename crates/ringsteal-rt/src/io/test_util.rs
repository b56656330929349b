//! Test helpers for the kernel-free I/O code: a poll loop for futures that never wait on the
//! kernel, an in-memory reader that returns a few bytes per read, and one whose reads wait
//! for bytes the test has not sent yet.

use std::collections::VecDeque;
use std::future::{ready, Future};
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use super::traits::AsyncReadOwned;
use crate::buf::{BufResult, IoBufMut};

struct Noop;
impl Wake for Noop {
    fn wake(self: Arc<Self>) {}
}

/// Polls `fut` to completion; it must never return `Pending` (in-memory I/O only).
pub(crate) fn block_on<F: Future>(fut: F) -> F::Output {
    let waker = Waker::from(Arc::new(Noop));
    let mut cx = Context::from_waker(&waker);
    match pin!(fut).poll(&mut cx) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("an in-memory future returned Pending"),
    }
}

/// A reader over `data` that returns at most `step` bytes per read.
pub(crate) struct Trickle {
    data: Vec<u8>,
    pos: usize,
    step: usize,
}

impl Trickle {
    pub(crate) fn new(data: Vec<u8>, step: usize) -> Self {
        Self { data, pos: 0, step }
    }
}

impl AsyncReadOwned for Trickle {
    fn read<B: IoBufMut>(&mut self, buf: B) -> impl Future<Output = BufResult<usize, B>> + Send {
        let end = (self.pos + self.step).min(self.data.len());
        let mut src = &self.data[self.pos..end];
        let out = block_on(src.read(buf));
        self.pos += out.0.as_ref().copied().unwrap_or(0);
        ready(out)
    }
}

/// A reader of chunks the test hands it as they "arrive": a read with none waiting stays
/// pending (as a socket's would) until it is dropped, having taken nothing.
#[derive(Default)]
pub(crate) struct Arrivals {
    chunks: VecDeque<Vec<u8>>,
    /// The stream ended: once the chunks are read, reads return 0.
    ended: bool,
}

impl Arrivals {
    /// `chunk` arrives: the next read returns it (or as much of it as fits).
    pub(crate) fn arrive(&mut self, chunk: &[u8]) {
        self.chunks.push_back(chunk.to_vec());
    }

    /// The stream ends after the chunks that arrived.
    pub(crate) fn end(&mut self) {
        self.ended = true;
    }
}

/// A read of [`Arrivals`]: done at once, or waiting for good.
enum ArrivalRead<B> {
    Done(Option<Box<BufResult<usize, B>>>),
    Waiting(#[allow(dead_code)] Box<B>),
}

impl<B> Future for ArrivalRead<B> {
    type Output = BufResult<usize, B>;
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            ArrivalRead::Done(out) => Poll::Ready(*out.take().expect("polled after done")),
            ArrivalRead::Waiting(_) => Poll::Pending,
        }
    }
}

impl AsyncReadOwned for Arrivals {
    fn read<B: IoBufMut>(&mut self, buf: B) -> impl Future<Output = BufResult<usize, B>> + Send {
        match self.chunks.pop_front() {
            None if self.ended => ArrivalRead::Done(Some(Box::new((Ok(0), buf)))),
            None => ArrivalRead::Waiting(Box::new(buf)),
            Some(chunk) => {
                let out = block_on((&chunk[..]).read(buf));
                let n = out.0.as_ref().copied().unwrap_or(0);
                if n < chunk.len() {
                    self.chunks.push_front(chunk[n..].to_vec());
                }
                ArrivalRead::Done(Some(Box::new(out)))
            }
        }
    }
}
