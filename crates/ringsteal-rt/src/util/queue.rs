//! Taking from crossbeam queues. `Steal::Retry` means the attempt lost a race with another
//! thread and must be repeated; every caller only cares whether something was taken.

use crossbeam_deque::{Injector, Steal};

/// Repeats `attempt` (a `steal`, `steal_batch_and_pop`, ...) while it says `Retry`: the item
/// taken, or `None` if the queue was empty.
pub(crate) fn retry_steal<T>(mut attempt: impl FnMut() -> Steal<T>) -> Option<T> {
    loop {
        match attempt() {
            Steal::Success(t) => return Some(t),
            Steal::Empty => return None,
            Steal::Retry => std::hint::spin_loop(),
        }
    }
}

/// Takes everything in `queue`, handing each item to `f`; returns how many were taken.
pub(crate) fn drain_queue<T>(queue: &Injector<T>, mut f: impl FnMut(T)) -> usize {
    let mut taken = 0;
    while let Some(t) = retry_steal(|| queue.steal()) {
        f(t);
        taken += 1;
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draining_takes_every_item_in_order() {
        let q = Injector::new();
        for i in 0..100 {
            q.push(i);
        }
        let mut got = Vec::new();
        assert_eq!(drain_queue(&q, |i| got.push(i)), 100);
        assert_eq!(got, (0..100).collect::<Vec<_>>());
        assert!(q.is_empty());
    }

    #[test]
    fn a_retry_is_repeated_until_the_attempt_settles() {
        let mut attempts = [Steal::Retry, Steal::Retry, Steal::Success(7)].into_iter();
        assert_eq!(retry_steal(|| attempts.next().unwrap()), Some(7));
        let mut attempts = [Steal::Retry, Steal::<u8>::Empty].into_iter();
        assert_eq!(retry_steal(|| attempts.next().unwrap()), None);
    }
}
