//! [`ItemQueue`]: the results a stream of completions has delivered and its consumer has not
//! taken yet, in the order the kernel posted them.
//!
//! Who touches it: the driver of the shard the request was submitted on pushes (one item
//! per CQE with `IORING_CQE_F_MORE`); the consumer (the stream, on any thread) pops, and
//! closes the queue when it goes away. A closed queue refuses pushes, handing the item back
//! so the driver releases what it carries (closes the descriptor, returns the buffer) at
//! once; closing hands back what was queued, for the consumer to release the same way.
//!
//! A consumer may instead close the queue *into a sink*: then what was queued, and every
//! later push, goes to the sink under the queue's lock, so the sink sees every item the
//! consumer did not take, in CQE order, whichever thread delivers it. The sink lives until
//! the queue is finished (the cell's last reference): that is how a receive stream keeps
//! the bytes of a request it abandoned, and holds its stream's read lane until the
//! request's last completion.
//!
//! May not: know what an item is. Kernel-free, so it runs under Miri.

use std::collections::VecDeque;
use std::task::Waker;

use crate::loom::sync::Mutex;
use crate::util::contain_panic;

/// Where a closed queue's items go: called in order, under the queue's lock; any waker the
/// item's release causes goes into the vector (the driver wakes them after its reap).
pub(crate) type Sink<T> = Box<dyn FnMut(T, &mut Vec<Waker>) + Send>;

/// What became of a pushed item.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Pushed<T> {
    /// Queued for the consumer.
    Queued,
    /// The consumer is gone; its sink took the item.
    Sunk,
    /// The consumer is gone and left no sink: the caller releases the item.
    Refused(T),
}

/// A FIFO of delivered items with a "consumer gone" flag.
pub(crate) struct ItemQueue<T> {
    inner: Mutex<Inner<T>>,
}

struct Inner<T> {
    items: VecDeque<T>,
    closed: bool,
    sink: Option<Sink<T>>,
}

impl<T> ItemQueue<T> {
    pub(crate) fn new() -> Self {
        Self {
            inner: Mutex::new(Inner {
                items: VecDeque::new(),
                closed: false,
                sink: None,
            }),
        }
    }

    /// Queues `item` behind the others, or, if the consumer is gone, gives it to its sink or
    /// hands it back. (The driver pushes through [`push_or_merge`](Self::push_or_merge).)
    #[cfg(test)]
    pub(crate) fn push(&self, item: T, wakers: &mut Vec<Waker>) -> Pushed<T> {
        self.push_or_merge(item, |_, item| Some(item), wakers)
    }

    /// As [`push`](Self::push), but first offers `item` to `merge` with the newest queued
    /// item: `merge` folds it in and returns `None` (the queue does not grow), or returns it
    /// to be queued behind. For items where two in a row say no more than one (readiness
    /// reports), so that a consumer that does not drain them for a while holds one, not one
    /// per completion.
    pub(crate) fn push_or_merge(
        &self,
        item: T,
        merge: impl FnOnce(&mut T, T) -> Option<T>,
        wakers: &mut Vec<Waker>,
    ) -> Pushed<T> {
        let mut inner = self.inner.lock();
        if !inner.closed {
            let item = match inner.items.back_mut() {
                Some(newest) => merge(newest, item),
                None => Some(item),
            };
            if let Some(item) = item {
                inner.items.push_back(item);
            }
            return Pushed::Queued;
        }
        match &mut inner.sink {
            Some(sink) => {
                // The sink may be user code (`RecvStream::abandon_into`), called on the
                // driver's reaping path: a panic in it must not unwind through the reap
                // (which would lose the rest of the batch's completions; ADR-0019). The
                // item went down with the panic; the sink is let go of, and later items are
                // handed back to be released.
                if !contain_panic(|| sink(item, wakers)) {
                    let failed = inner.sink.take();
                    contain_panic(move || drop(failed));
                }
                Pushed::Sunk
            }
            None => Pushed::Refused(item),
        }
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

    /// The consumer is gone: what was queued, then every later push, goes to `sink`.
    ///
    /// A panic in the sink (user code: `RecvStream::abandon_into`) is contained, as in a
    /// push: the item goes down with it, the sink is let go of, and what is left stays
    /// queued for the queue's end to release, so the consumer's drop still cancels the
    /// request and gives up its reference.
    pub(crate) fn close_into(&self, mut sink: Sink<T>, wakers: &mut Vec<Waker>) {
        let mut inner = self.inner.lock();
        inner.closed = true;
        let mut items = std::mem::take(&mut inner.items);
        while let Some(item) = items.pop_front() {
            if !contain_panic(|| sink(item, wakers)) {
                contain_panic(move || drop(sink));
                inner.items = items;
                return;
            }
        }
        inner.sink = Some(sink);
    }

    /// The queue's end (its cell is being freed): what is still queued and the sink, if the
    /// consumer left one (the caller gives it the request's last item, then drops it).
    pub(crate) fn finish(self) -> (VecDeque<T>, Option<Sink<T>>) {
        let inner = self.inner.into_inner();
        (inner.items, inner.sink)
    }

    /// Items queued.
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().items.len()
    }
}

impl<T> std::fmt::Debug for ItemQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.inner.lock();
        f.debug_struct("ItemQueue")
            .field("items", &inner.items.len())
            .field("closed", &inner.closed)
            .field("sink", &inner.sink.is_some())
            .finish()
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
            assert_eq!(q.push(i, &mut Vec::new()), Pushed::Queued);
        }
        let out: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(out, (0..100).collect::<Vec<_>>());
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn merged_items_fold_into_the_newest_and_the_rest_queue_behind() {
        let q = ItemQueue::new();
        let mut wakers = Vec::new();
        // Odd numbers fold into an odd newest item; anything else queues.
        let merge = |newest: &mut u32, item: u32| {
            if *newest % 2 == 1 && item % 2 == 1 {
                *newest += item;
                None
            } else {
                Some(item)
            }
        };
        for i in [1, 3, 2, 5, 7] {
            assert_eq!(q.push_or_merge(i, merge, &mut wakers), Pushed::Queued);
        }
        assert_eq!(q.len(), 3);
        assert_eq!(
            [q.pop(), q.pop(), q.pop(), q.pop()],
            [Some(4), Some(2), Some(12), None]
        );
        // A closed queue refuses, merged or not.
        q.close();
        assert_eq!(q.push_or_merge(1, merge, &mut wakers), Pushed::Refused(1));
    }

    #[test]
    fn a_closed_queue_hands_back_what_it_held_and_refuses_more() {
        let q = ItemQueue::new();
        let w = &mut Vec::new();
        assert_eq!(q.push(String::from("a"), w), Pushed::Queued);
        assert_eq!(q.push(String::from("b"), w), Pushed::Queued);
        let held: Vec<_> = q.close().into_iter().collect();
        assert_eq!(held, ["a", "b"]);
        assert_eq!(
            q.push(String::from("c"), w),
            Pushed::Refused(String::from("c"))
        );
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
                    if let Pushed::Refused(i) = q.push(i, &mut Vec::new()) {
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

    #[test]
    fn a_queue_closed_into_a_sink_gives_it_every_untaken_item_in_order_until_finished() {
        let q = ItemQueue::new();
        let w = &mut Vec::new();
        for i in 0..3 {
            assert_eq!(q.push(i, w), Pushed::Queued);
        }
        assert_eq!(q.pop(), Some(0));
        let sunk = Arc::new(Mutex::new(Vec::new()));
        let s = sunk.clone();
        q.close_into(Box::new(move |i, _| s.lock().push(i)), w);
        assert_eq!(*sunk.lock(), [1, 2], "what was queued, in order");
        assert_eq!(q.push(3, w), Pushed::Sunk);
        let (left, sink) = q.finish();
        assert!(left.is_empty());
        let mut sink = sink.expect("the sink outlives the close");
        sink(4, w);
        drop(sink);
        assert_eq!(*sunk.lock(), [1, 2, 3, 4]);
        assert_eq!(Arc::strong_count(&sunk), 1, "the sink was dropped");
    }

    #[test]
    fn a_sink_that_panics_while_closing_leaves_the_rest_queued_for_release() {
        let q = ItemQueue::new();
        let w = &mut Vec::new();
        for i in 0..4 {
            assert_eq!(q.push(i, w), Pushed::Queued);
        }
        let sunk = Arc::new(Mutex::new(Vec::new()));
        let s = sunk.clone();
        // Takes 0, panics on 1 (which goes down with it).
        q.close_into(
            Box::new(move |i, _| {
                assert!(i != 1, "a sink that panics");
                s.lock().push(i);
            }),
            w,
        );
        assert_eq!(*sunk.lock(), [0]);
        assert_eq!(Arc::strong_count(&sunk), 1, "the sink was let go of");
        assert_eq!(q.push(4, w), Pushed::Refused(4), "closed, and no sink now");
        let (left, sink) = q.finish();
        assert_eq!(left, [2, 3], "left for the queue's end to release");
        assert!(sink.is_none());
    }

    #[test]
    fn a_producer_and_a_consumer_closing_into_a_sink_keep_the_push_order() {
        // The consumer pops some, then closes into a sink while the producer still pushes:
        // popped items then sunk items are exactly the push order.
        let q = Arc::new(ItemQueue::new());
        let n = if cfg!(miri) { 50 } else { 10_000 };
        let producer = {
            let q = q.clone();
            std::thread::spawn(move || {
                for i in 0..n {
                    assert_ne!(q.push(i, &mut Vec::new()), Pushed::Refused(i));
                }
            })
        };
        let mut popped = Vec::new();
        while popped.len() < n / 3 {
            match q.pop() {
                Some(i) => popped.push(i),
                None => std::thread::yield_now(),
            }
        }
        let sunk = Arc::new(std::sync::Mutex::new(Vec::new()));
        let s = sunk.clone();
        q.close_into(
            Box::new(move |i, _| s.lock().unwrap().push(i)),
            &mut Vec::new(),
        );
        producer.join().unwrap();
        let all: Vec<_> = popped
            .into_iter()
            .chain(sunk.lock().unwrap().drain(..))
            .collect();
        assert_eq!(all, (0..n).collect::<Vec<_>>());
    }
}
