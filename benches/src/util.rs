//! Small helpers shared by all workloads: a dependency-free `block_on`, a
//! deterministic pseudo-random sequence, a CPU-bound unit of work and a race of two
//! futures.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

struct ThreadWaker(Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Drives `fut` to completion on the calling thread, parking between polls.
///
/// Used only to wait, from the criterion thread, for a future that completes
/// on some runtime's own threads (for example a spargio `JoinHandle`). It never
/// runs workload code itself.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let waker = Waker::from(Arc::new(ThreadWaker(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = pin!(fut);
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
        thread::park();
    }
}

/// Deterministic xorshift64* sequence, so every runtime sees the same offsets.
#[derive(Clone, Debug)]
pub struct XorShift(u64);

impl XorShift {
    /// A sequence starting from `seed` (0 is replaced by a fixed constant).
    pub fn new(seed: u64) -> Self {
        Self(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// The next value of the sequence.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// A CPU-bound unit of work: `iters` steps of a dependent multiply/xor chain.
///
/// About 1.3 ns per step on the 2-vCPU bench VM. The result depends on every
/// step, so the compiler cannot drop or shorten it.
#[inline(never)]
pub fn synthetic_work(seed: u64, iters: u32) -> u64 {
    let mut x = seed ^ 0x9E37_79B9_7F4A_7C15;
    for i in 0..iters {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407 ^ u64::from(i));
        x ^= x >> 29;
    }
    x
}

/// A future that is pending at its first poll (waking itself at once) and
/// ready at its second. Used by `timer_churn` so that every `timeout` really
/// registers its timer (first poll) and then cancels it (second poll).
#[derive(Debug, Default)]
pub struct PendingOnce {
    polled: bool,
}

impl PendingOnce {
    /// A fresh future that has not been polled.
    pub fn new() -> Self {
        Self { polled: false }
    }
}

impl Future for PendingOnce {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.polled {
            Poll::Ready(())
        } else {
            self.polled = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// Races two futures (the accept loop against the work that loads it): the examples'
/// own, so the benchmarks and the examples share one.
pub use ringsteal_examples::future::{race, Either};

/// The `p`-th of `parts` nearly equal, contiguous pieces of `0..total`.
pub fn part(total: usize, parts: usize, p: usize) -> std::ops::Range<usize> {
    let base = total / parts;
    let extra = total % parts;
    let start = p * base + p.min(extra);
    let len = base + usize::from(p < extra);
    start..start + len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_once_needs_two_polls() {
        let waker = Waker::from(Arc::new(ThreadWaker(thread::current())));
        let mut cx = Context::from_waker(&waker);
        let mut f = pin!(PendingOnce::new());
        assert!(f.as_mut().poll(&mut cx).is_pending());
        assert!(f.as_mut().poll(&mut cx).is_ready());
    }

    #[test]
    fn block_on_returns_value() {
        assert_eq!(block_on(async { 7 }), 7);
    }

    #[test]
    fn race_returns_the_first_ready_future() {
        let never = std::future::pending::<u8>();
        assert_eq!(block_on(race(never, async { 2u16 })), Either::Right(2));
        let now = async { 1u8 };
        assert_eq!(block_on(race(now, PendingOnce::new())), Either::Left(1));
    }

    #[test]
    fn parts_cover_the_range() {
        let mut next = 0;
        for p in 0..3 {
            let r = part(10, 3, p);
            assert_eq!(r.start, next);
            next = r.end;
        }
        assert_eq!(next, 10);
    }

    #[test]
    fn xorshift_is_deterministic() {
        let mut a = XorShift::new(1);
        let mut b = XorShift::new(1);
        for _ in 0..10 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }
}
