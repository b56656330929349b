//! [`ItemQueue`]: the results a stream of completions has delivered and its consumer has not
//! taken yet, in the order the kernel posted them.
//!
//! Who touches it: the driver of the shard the request was submitted on pushes (one item
//! per CQE with `IORING_CQE_F_MORE`); the consumer (the stream, on any thread) pops, and
//! closes the queue when it goes away. A closed queue refuses pushes, handing the item back
//! so the driver releases what it carries (closes the descriptor, returns the buffer) at
//! once; closing hands back what was queued, for the consumer to release the same way.
//!
//! May not: know what an item is. Kernel-free, so it runs under Miri.

use std::collections::VecDeque;

use parking_lot::Mutex;

/// A FIFO of delivered items with a "consumer gone" flag.
#[derive(Debug)]
pub(crate) struct ItemQueue<T> {
    inner: Mutex<Inner<T>>,
}

#[derive(Debug)]
struct Inner<T> {
    items: VecDeque<T>,
    closed: bool,
}

impl<T> ItemQueue<T> {
    pub(crate) fn new() -> Self {
        Self {
            inner: Mutex::new(Inner {
                items: VecDeque::new(),
                closed: false,
            }),
        }
    }

    /// Queues `item` behind the others, or hands it back if the consumer is gone.
    pub(crate) fn push(&self, item: T) -> Result<(), T> {
        let mut inner = self.inner.lock();
        if inner.closed {
            return Err(item);
        }
        inner.items.push_back(item);
        Ok(())
    }

    /// The oldest item.
    pub(crate) fn pop(&self) -> Option<T> {
        self.inner.lock().items.pop_front()
    }

    /// The consumer is gone: refuses every later push and hands back what was queued.
    pub(crate) fn close(&self) -> VecDeque<T> {
        let mut inner = self.inner.lock();
        inner.closed = true;
        std::mem::take(&mut inner.items)
    }

    /// Items queued.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().items.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn items_come_out_in_the_order_they_went_in() {
        let q = ItemQueue::new();
        for i in 0..100 {
            q.push(i).unwrap();
        }
        let out: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(out, (0..100).collect::<Vec<_>>());
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn a_closed_queue_hands_back_what_it_held_and_refuses_more() {
        let q = ItemQueue::new();
        q.push(String::from("a")).unwrap();
        q.push(String::from("b")).unwrap();
        let held: Vec<_> = q.close().into_iter().collect();
        assert_eq!(held, ["a", "b"]);
        assert_eq!(q.push(String::from("c")), Err(String::from("c")));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn a_producer_and_a_closing_consumer_on_two_threads_lose_and_duplicate_nothing() {
        // Every item ends in exactly one place: popped, handed back by `close`, or refused.
        let q = Arc::new(ItemQueue::new());
        let n = if cfg!(miri) { 50 } else { 10_000 };
        let producer = {
            let q = q.clone();
            std::thread::spawn(move || {
                let mut refused = Vec::new();
                for i in 0..n {
                    if let Err(i) = q.push(i) {
                        refused.push(i);
                    }
                }
                refused
            })
        };
        let mut popped = Vec::new();
        while popped.len() < n / 2 {
            if let Some(i) = q.pop() {
                popped.push(i);
            } else {
                std::thread::yield_now();
            }
        }
        let closed: Vec<_> = q.close().into_iter().collect();
        let refused = producer.join().unwrap();
        let mut all: Vec<_> = popped
            .iter()
            .chain(&closed)
            .chain(&refused)
            .copied()
            .collect();
        // Order across the three groups is the push order too.
        assert!(
            all.windows(2).all(|w| w[0] < w[1]),
            "reordered or duplicated"
        );
        all.dedup();
        assert_eq!(all.len(), n);
    }
}
