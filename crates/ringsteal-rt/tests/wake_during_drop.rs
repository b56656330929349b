//! A waker consumed (`wake()` by value) on a plain thread while the runtime is being dropped:
//! the wake must not touch the runtime's shared state after its task is queued, because the
//! drop may free the task, and with it the last reference to that state, at once. Best run
//! under `scripts/asan.sh`, which turns such a use-after-free into a failure.

mod common;

use std::future::poll_fn;
use std::sync::{Arc, Barrier, Mutex};
use std::task::{Poll, Waker};

use common::*;

const ROUNDS: usize = 100;

#[test]
fn a_plain_thread_wakes_a_task_while_its_runtime_is_dropped() {
    under_every_config("wake during drop", 1, |config, _| {
        for _ in 0..ROUNDS {
            let rt = config.runtime(1);
            let slot: Arc<Mutex<Option<Waker>>> = Arc::default();
            let parked = Signal::new();
            let (s, p) = (slot.clone(), parked.clone());
            rt.block_on(async move {
                // Parks for good, leaving its waker behind; dropped at shutdown.
                drop(ringsteal_rt::spawn(poll_fn(move |cx| {
                    *s.lock().unwrap() = Some(cx.waker().clone());
                    p.add();
                    Poll::<()>::Pending
                })));
                parked.wait_for(1).await;
            });
            let go = Arc::new(Barrier::new(2));
            let g = go.clone();
            let waker = slot
                .lock()
                .unwrap()
                .take()
                .expect("the task left its waker");
            let thread = std::thread::spawn(move || {
                g.wait();
                waker.wake();
            });
            go.wait();
            drop(rt);
            thread.join().expect("the waking thread");
        }
    });
}
