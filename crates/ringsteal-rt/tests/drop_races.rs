//! Plain threads racing the runtime's drop. A waker consumed (`wake()` by value) must not
//! touch the runtime's shared state after its task is queued, because the drop may free the
//! task, and with it the last reference to that state, at once. A spawn or wake that lands in
//! a queue after the shards and the final sweep have passed it must not be left there (the
//! task and the runtime would keep each other alive, and its `JoinHandle` never resolve).
//! Best run under `scripts/asan.sh` too, which turns a use-after-free or a leak into a failure.

mod common;

use std::future::poll_fn;
use std::sync::{Arc, Barrier, Mutex};
use std::task::{Poll, Waker};

use common::*;
use ringsteal_rt::{Placement, SpawnError};

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

#[test]
fn every_spawn_racing_the_runtime_drop_resolves_and_is_dropped_once() {
    under_every_config("spawn during drop", 2, |config, _| {
        for _ in 0..ROUNDS / 2 {
            let rt = config.runtime(2);
            let handle = rt.handle();
            let ledger = DropLedger::default();
            let l = ledger.clone();
            let go = Arc::new(Barrier::new(2));
            let g = go.clone();
            let spawner = std::thread::spawn(move || {
                let places = [
                    Placement::Stealable,
                    Placement::Pinned(1),
                    Placement::StealablePreferred(1),
                    Placement::Pinned(0),
                ];
                let mut joins = Vec::new();
                g.wait();
                for i in 0.. {
                    let guard = l.guard();
                    let fut = async move { drop(guard) };
                    match handle.try_spawn_with(places[i % places.len()], fut) {
                        Ok(j) => joins.push(j),
                        Err(SpawnError::ShuttingDown) => break,
                        Err(e) => panic!("{e}"),
                    }
                }
                // Each resolves: run, or cancelled by the shutdown (the hang guard bounds it).
                for j in joins {
                    let _ = block_on_plain(j);
                }
            });
            go.wait();
            drop(rt);
            spawner.join().expect("the spawning thread");
            ledger.assert_each_dropped_once();
        }
    });
}
