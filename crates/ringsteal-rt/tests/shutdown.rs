//! Shutdown: dropping the runtime (or `shutdown_timeout`) with work pending on every shard
//! returns promptly, drops every future exactly once, resolves surviving join handles as
//! cancelled, and refuses later spawns without panicking.

mod common;

use std::future::pending;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use ringsteal_rt::{spawn_with, JoinHandle, Placement, Runtime, RuntimeHandle, SpawnError};

/// How long a drop with nothing in the kernel may take. Generous for a loaded machine; a
/// healthy shutdown takes milliseconds.
const PROMPT: Duration = Duration::from_secs(5);

/// Fills a 3-shard runtime with every kind of pending work. Returns join handles that will
/// outlive it.
fn fill_with_pending_work(
    rt: &Runtime,
    ledger: &DropLedger,
    never: &Arc<Signal>,
) -> Vec<JoinHandle<()>> {
    let started = Arc::new(AtomicUsize::new(0));
    let (l, n, st) = (ledger.clone(), never.clone(), started.clone());
    let mut kept = rt.block_on(async move {
        let mut kept = Vec::new();
        let mut expect = 0;
        for s in 0..3 {
            // A pending future, a sleeping task and a task waiting for a wake that never
            // comes, on every shard.
            let (g, st2) = (l.guard(), st.clone());
            kept.push(spawn_with(Placement::Pinned(s), async move {
                let _g = g;
                st2.fetch_add(1, SeqCst);
                pending::<()>().await;
            }));
            let (g, st2) = (l.guard(), st.clone());
            drop(spawn_with(Placement::Pinned(s), async move {
                let _g = g;
                st2.fetch_add(1, SeqCst);
                ringsteal_rt::time::sleep(Duration::from_secs(3600)).await;
            }));
            let (g, st2, n2) = (l.guard(), st.clone(), n.clone());
            drop(spawn_with(Placement::Pinned(s), async move {
                let _g = g;
                st2.fetch_add(1, SeqCst);
                n2.wait_for(1).await;
            }));
            expect += 3;
        }
        // Tasks waiting on each other across shards: 1 awaits 2, which awaits 0.
        let (g, st2) = (l.guard(), st.clone());
        let on0 = spawn_with(Placement::Pinned(0), async move {
            let _g = g;
            st2.fetch_add(1, SeqCst);
            pending::<()>().await;
        });
        let (g, st2) = (l.guard(), st.clone());
        let on2 = spawn_with(Placement::Pinned(2), async move {
            let _g = g;
            st2.fetch_add(1, SeqCst);
            let _ = on0.await;
        });
        let (g, st2) = (l.guard(), st.clone());
        kept.push(spawn_with(Placement::Pinned(1), async move {
            let _g = g;
            st2.fetch_add(1, SeqCst);
            let _ = on2.await;
        }));
        expect += 3;
        // A local (!Send) task on shard 0.
        let (g, st2) = (l.guard(), st.clone());
        let rc = Rc::new(g);
        drop(ringsteal_rt::spawn_local(async move {
            let _rc = rc;
            st2.fetch_add(1, SeqCst);
            pending::<()>().await;
        }));
        expect += 1;
        yield_until(|| st.load(SeqCst) == expect).await;
        // Queued, not started: shard 0 is busy here until the future returns.
        for p in [
            Placement::Pinned(0),
            Placement::Stealable,
            Placement::StealablePreferred(1),
            Placement::RoundRobin,
        ] {
            for _ in 0..5 {
                let g = l.guard();
                kept.push(spawn_with(p, async move {
                    let _g = g;
                    pending::<()>().await;
                }));
            }
        }
        kept
    });
    // From a plain thread while shard 0 is outside block_on: queued for shard 0, which will
    // never run again, and stealable work the others take.
    let handle = rt.handle();
    let l = ledger.clone();
    let more = std::thread::spawn(move || {
        let mut more = Vec::new();
        for p in [Placement::Pinned(0), Placement::Stealable] {
            for _ in 0..5 {
                let g = l.guard();
                more.push(handle.spawn_with(p, async move {
                    let _g = g;
                    pending::<()>().await;
                }));
            }
        }
        more
    })
    .join()
    .unwrap();
    kept.extend(more);
    kept
}

fn assert_all_cancelled(handles: Vec<JoinHandle<()>>) {
    let other = Config::MsgRing.runtime(1);
    other.block_on(async move {
        for h in handles {
            assert!(h.is_finished());
            let err = h.await.unwrap_err();
            assert!(err.is_cancelled(), "{err:?}");
        }
    });
}

#[test]
fn dropping_the_runtime_with_work_pending_on_every_shard_drops_each_future_once() {
    with_every_runtime("drop with pending work", 3, |config, rt| {
        let ledger = DropLedger::default();
        let never = Signal::new();
        let kept = fill_with_pending_work(&rt, &ledger, &never);
        assert!(ledger.created() > 40);
        let start = Instant::now();
        drop(rt);
        let took = start.elapsed();
        println!("{config:?}: dropping a runtime with pending work took {took:?}");
        assert!(took < PROMPT, "{config:?}: drop took {took:?}");
        ledger.assert_each_dropped_once();
        // Wakes that arrive after the runtime is gone find finished tasks: harmless.
        never.add();
        // Join handles that outlived the runtime resolve as cancelled, in another runtime.
        assert_all_cancelled(kept);
    });
}

#[test]
fn shutdown_timeout_with_work_pending_returns_promptly() {
    with_every_runtime("shutdown_timeout", 3, |config, rt| {
        let ledger = DropLedger::default();
        let never = Signal::new();
        let kept = fill_with_pending_work(&rt, &ledger, &never);
        let start = Instant::now();
        rt.shutdown_timeout(Duration::from_millis(500));
        let took = start.elapsed();
        assert!(took < PROMPT, "{config:?}: shutdown_timeout took {took:?}");
        ledger.assert_each_dropped_once();
        assert_all_cancelled(kept);
    });
}

#[test]
fn shutdown_timeout_bounds_the_wait_for_a_blocking_closure_that_does_not_return() {
    hang_guard("stuck blocking closure", HANG_LIMIT, || {
        let rt = Config::MsgRing.runtime(2);
        let release = Arc::new(AtomicBool::new(false));
        let running = Arc::new(AtomicBool::new(false));
        let (r, run) = (release.clone(), running.clone());
        let stuck = rt.handle().spawn_blocking(move || {
            run.store(true, SeqCst);
            spin_until(|| r.load(SeqCst));
        });
        spin_until(|| running.load(SeqCst));
        let start = Instant::now();
        rt.shutdown_timeout(Duration::from_millis(200));
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(150) && took < PROMPT,
            "shutdown_timeout(200 ms) took {took:?}"
        );
        release.store(true, SeqCst);
        // The closure finishes on its detached thread and its handle still resolves.
        let other = Config::MsgRing.runtime(1);
        other.block_on(stuck).unwrap();
    });
}

/// Spawns in every way from wherever it is dropped, and records what it got.
struct SpawnOnDrop {
    ledger: DropLedger,
    got: Arc<Mutex<Vec<JoinHandle<()>>>>,
    errors: Arc<Mutex<Vec<SpawnError>>>,
}

impl Drop for SpawnOnDrop {
    fn drop(&mut self) {
        let Some(handle) = RuntimeHandle::try_current() else {
            return;
        };
        let guard = |l: &DropLedger| {
            let g = l.guard();
            async move {
                let _g = g;
            }
        };
        let mut got = self.got.lock().unwrap();
        got.push(handle.spawn(guard(&self.ledger)));
        got.push(handle.spawn_with(Placement::Pinned(1), guard(&self.ledger)));
        got.push(handle.spawn_with(Placement::RoundRobin, guard(&self.ledger)));
        let g = self.ledger.guard();
        got.push(handle.spawn_local_on(0, move || async move {
            let _g = g;
        }));
        got.push(handle.spawn_blocking(|| ()));
        if ringsteal_rt::current_shard().is_some() {
            got.push(ringsteal_rt::spawn_local(guard(&self.ledger)));
        }
        let mut errors = self.errors.lock().unwrap();
        if let Err(e) = handle.try_spawn_with(Placement::Pinned(0), guard(&self.ledger)) {
            errors.push(e);
        }
        if let Err(e) = handle.send_msg(0, 1) {
            errors.push(e);
        }
    }
}

#[test]
fn spawning_after_shutdown_begins_does_not_panic_and_yields_cancelled_handles() {
    with_every_runtime("spawn during shutdown", 2, |_, rt| {
        let ledger = DropLedger::default();
        let got = Arc::new(Mutex::new(Vec::new()));
        let errors = Arc::new(Mutex::new(Vec::new()));
        let handle = rt.handle();
        let started = Signal::new();
        rt.block_on(async {
            for s in 0..2 {
                let bomb = SpawnOnDrop {
                    ledger: ledger.clone(),
                    got: got.clone(),
                    errors: errors.clone(),
                };
                let st = started.clone();
                drop(spawn_with(Placement::Pinned(s), async move {
                    let _bomb = bomb;
                    st.add();
                    pending::<()>().await;
                }));
            }
            started.wait_for(2).await;
        });
        drop(rt);
        // Both tasks were dropped by shutdown and spawned from their destructors.
        let errors = std::mem::take(&mut *errors.lock().unwrap());
        assert_eq!(errors, vec![SpawnError::ShuttingDown; 4], "{errors:?}");
        // After the runtime is gone, from a plain thread, through a surviving handle.
        let l = ledger.clone();
        let late = std::thread::spawn(move || {
            let g = l.guard();
            let a = handle.spawn(async move {
                let _g = g;
            });
            let g = l.guard();
            let b = handle.spawn_with(Placement::Pinned(0), async move {
                let _g = g;
            });
            let c = handle.spawn_blocking(|| ());
            assert_eq!(handle.send_msg(1, 0), Err(SpawnError::ShuttingDown));
            assert_eq!(handle.stats().shards.len(), 2);
            vec![a, b, c]
        })
        .join()
        .unwrap();
        let mut all = std::mem::take(&mut *got.lock().unwrap());
        // Each destructor ran on its shard during that shard's shutdown: six spawns each.
        assert_eq!(all.len(), 2 * 6);
        all.extend(late);
        ledger.assert_each_dropped_once();
        assert_all_cancelled(all);
    });
}
