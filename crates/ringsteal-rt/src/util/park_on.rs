//! Blocks a plain thread until a future completes: the thread parks between polls and the
//! future's waker unparks it. For futures that do no I/O of their own on this thread (a
//! `JoinHandle` of a task the runtime runs).
//!
//! May not: be used on a shard thread (it would stop the shard).

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

/// Unparks the blocked thread; `woken` makes a wake before the park count.
struct Unpark {
    thread: Thread,
    woken: AtomicBool,
}

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

/// Polls `future` on this thread until it is ready, parking in between.
pub(crate) fn park_on<F: Future>(future: F) -> F::Output {
    let unpark = Arc::new(Unpark {
        thread: std::thread::current(),
        woken: AtomicBool::new(false),
    });
    let waker = Waker::from(unpark.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        // A spurious unpark only costs a poll; a wake between the poll and here is kept in
        // `woken` (and in the park token).
        while !unpark.woken.swap(false, Ordering::Acquire) {
            std::thread::park();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_future_woken_from_another_thread_completes() {
        let (tx, rx) = std::sync::mpsc::channel::<Waker>();
        let mut sent = false;
        let ready = Arc::new(AtomicBool::new(false));
        let flag = ready.clone();
        let waker_thread = std::thread::spawn(move || {
            let waker = rx.recv().unwrap();
            flag.store(true, Ordering::Release);
            waker.wake();
        });
        let out = park_on(std::future::poll_fn(|cx| {
            if ready.load(Ordering::Acquire) {
                return Poll::Ready(7);
            }
            if !sent {
                tx.send(cx.waker().clone()).unwrap();
                sent = true;
            }
            Poll::Pending
        }));
        assert_eq!(out, 7);
        waker_thread.join().unwrap();
    }
}
