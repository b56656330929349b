//! Test helpers for the kernel-free I/O code: a poll loop for futures that never wait on the
//! kernel, and an in-memory reader that returns a few bytes per read.

use std::future::{ready, Future};
use std::pin::pin;
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
