//! Two ways to wait for several futures from one task, small enough to read in a minute:
//! [`join_all`] (every future, concurrently) and [`race`] (the first of two; the other is
//! dropped, which for a ringsteal operation cancels it in the kernel).
//!
//! Owns: polling a set of futures. May not: spawn (everything here runs inside the calling
//! task, on its shard).

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::task::Poll;

/// Runs every future to completion, concurrently, inside the calling task, and returns the
/// outputs in order. Each poll of the task polls the futures not yet done; a ringsteal
/// operation is submitted on its first poll, so `n` operations made this way are all in
/// flight at once.
///
/// ```
/// use ringsteal_examples::future::join_all;
///
/// let rt = ringsteal::Runtime::builder().shards(1).build().unwrap();
/// let squares = rt.block_on(join_all((1..=4u32).map(|i| async move { i * i })));
/// assert_eq!(squares, [1, 4, 9, 16]);
/// ```
pub async fn join_all<F: Future>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    let mut left = futures.len();
    poll_fn(|cx| {
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                if let Poll::Ready(out) = future.as_mut().poll(cx) {
                    *output = Some(out);
                    left -= 1;
                }
            }
        }
        if left == 0 {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    outputs.into_iter().map(|o| o.expect("all done")).collect()
}

/// The output of [`race`]: which future finished first.
#[derive(Debug, PartialEq, Eq)]
pub enum Either<A, B> {
    /// The first future finished first.
    Left(A),
    /// The second future finished first.
    Right(B),
}

/// Waits for the first of two futures and drops the other. `a` is polled first, so if both
/// are ready at once, `a` wins.
///
/// ```
/// use std::time::Duration;
/// use ringsteal_examples::future::{race, Either};
///
/// let rt = ringsteal::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let slow = ringsteal::time::sleep(Duration::from_secs(60));
///     let fast = async { 7 };
///     assert_eq!(race(slow, fast).await, Either::Right(7));
/// });
/// ```
pub async fn race<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
    let mut a = pin!(a);
    let mut b = pin!(b);
    poll_fn(|cx| {
        if let Poll::Ready(out) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::Left(out));
        }
        b.as_mut().poll(cx).map(Either::Right)
    })
    .await
}
