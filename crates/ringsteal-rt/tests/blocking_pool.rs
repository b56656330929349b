//! The blocking pool: closures run on threads named `<thread_name>-blocking-N`, never more at
//! once than `max_blocking_threads`, on threads that are reused and retire when idle.

mod common;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use ringsteal_rt::RuntimeHandle;

fn thread_name() -> String {
    std::thread::current().name().unwrap_or("").to_string()
}

#[test]
fn blocking_closures_run_on_threads_named_after_the_runtime() {
    let rt = Config::MsgRing
        .builder(2)
        .thread_name("poolspec")
        .build()
        .unwrap();
    let names = rt.block_on(async {
        let mut names = Vec::new();
        for _ in 0..4 {
            names.push(ringsteal_rt::spawn_blocking(thread_name).await.unwrap());
        }
        names
    });
    for name in names {
        let n = name
            .strip_prefix("poolspec-blocking-")
            .unwrap_or_else(|| panic!("blocking thread named {name:?}"));
        assert!(n.parse::<usize>().is_ok_and(|n| n >= 1), "{name:?}");
    }
}

#[test]
fn a_thread_name_fn_names_shards_and_blocking_threads_and_a_bad_name_falls_back() {
    // Names in the order asked for: a good one, a panic, one with a NUL byte, then good ones.
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    quiet_intentional_panics();
    let rt = Config::MsgRing
        .builder(3)
        .thread_name("fallback")
        .thread_name_fn(move || match counter.fetch_add(1, SeqCst) {
            1 => panic!("{INTENTIONAL}: a thread_name_fn that panics"),
            2 => "bad\0name".to_string(),
            n => format!("named-{n}"),
        })
        .build()
        .unwrap();
    assert_eq!(asked.load(SeqCst), 2, "one call per shard thread, at build");
    let (shard_names, blocking) = rt.block_on(async {
        let mut shards = Vec::new();
        for shard in 1..3 {
            let name = ringsteal_rt::spawn_with(ringsteal_rt::Placement::Pinned(shard), async {
                thread_name()
            });
            shards.push(name.await.unwrap());
        }
        // Two at once, so that two threads are made.
        let gate = Arc::new(std::sync::Barrier::new(2));
        let names: Vec<_> = (0..2)
            .map(|_| {
                let gate = gate.clone();
                ringsteal_rt::spawn_blocking(move || {
                    gate.wait();
                    thread_name()
                })
            })
            .collect();
        let mut blocking = BTreeSet::new();
        for name in names {
            blocking.insert(name.await.unwrap());
        }
        (shards, blocking)
    });
    assert_eq!(
        shard_names,
        ["named-0", "fallback-2"],
        "shard 2's name panicked"
    );
    let want: BTreeSet<String> = ["fallback-blocking-1", "named-3"].map(String::from).into();
    assert_eq!(
        blocking, want,
        "the first blocking thread's name had a NUL byte"
    );
    assert_eq!(asked.load(SeqCst), 4);
}

/// The pool state a batch of closures saw.
#[derive(Default)]
struct Gauge {
    running: AtomicUsize,
    max_running: AtomicUsize,
    completed: AtomicUsize,
    /// Closures allowed to finish (each running closure takes one, then returns).
    permits: AtomicUsize,
    names: Mutex<BTreeSet<String>>,
}

impl Gauge {
    fn closure(self: &Arc<Self>) -> impl FnOnce() + Send + 'static {
        let g = self.clone();
        move || {
            let now = g.running.fetch_add(1, SeqCst) + 1;
            g.max_running.fetch_max(now, SeqCst);
            g.names.lock().unwrap().insert(thread_name());
            // Hold the thread until the test hands out a permit.
            loop {
                let p = g.permits.load(SeqCst);
                if p > 0 && g.permits.compare_exchange(p, p - 1, SeqCst, SeqCst).is_ok() {
                    break;
                }
                std::hint::spin_loop();
            }
            g.running.fetch_sub(1, SeqCst);
            g.completed.fetch_add(1, SeqCst);
        }
    }
}

/// Spawns `n` gauge closures, then lets them finish one at a time, each time only once the
/// pool is saturated (`max` running, or all that are left).
async fn run_batch(gauge: &Arc<Gauge>, n: usize, max: usize) {
    let base = gauge.completed.load(SeqCst);
    let handles: Vec<_> = (0..n)
        .map(|_| RuntimeHandle::current().spawn_blocking(gauge.closure()))
        .collect();
    for k in 0..n {
        let busy = max.min(n - k);
        yield_until(|| gauge.running.load(SeqCst) == busy).await;
        assert!(gauge.max_running.load(SeqCst) <= max);
        gauge.permits.fetch_add(1, SeqCst);
        yield_until(|| gauge.completed.load(SeqCst) == base + k + 1).await;
    }
    for h in handles {
        h.await.unwrap();
    }
}

#[test]
fn no_more_than_max_blocking_threads_closures_run_at_once_and_all_of_them_run() {
    let limit = HANG_LIMIT;
    hang_guard("blocking limit", limit, || {
        let rt = Config::MsgRing
            .builder(2)
            .max_blocking_threads(2)
            .build()
            .unwrap();
        let gauge = Arc::new(Gauge::default());
        let g = gauge.clone();
        rt.block_on(async move { run_batch(&g, 20, 2).await });
        assert_eq!(gauge.completed.load(SeqCst), 20);
        assert_eq!(
            gauge.max_running.load(SeqCst),
            2,
            "the pool should use, and never exceed, its two threads"
        );
        let names = gauge.names.lock().unwrap().clone();
        assert!(
            names.len() <= 2,
            "20 closures on 2 threads ran on {names:?}"
        );
        // A second batch reuses the same (kept-alive) threads.
        let g = gauge.clone();
        rt.block_on(async move { run_batch(&g, 20, 2).await });
        assert_eq!(gauge.completed.load(SeqCst), 40);
        assert_eq!(
            *gauge.names.lock().unwrap(),
            names,
            "threads were not reused"
        );
        let stats = rt.handle().stats();
        assert_eq!(stats.blocking_spawned, 40);
        assert!(stats.blocking_threads <= 2, "{stats:?}");
    });
}

#[test]
fn idle_blocking_threads_retire_after_their_keep_alive() {
    hang_guard("keep alive", HANG_LIMIT, || {
        let rt = Config::MsgRing
            .builder(1)
            .blocking_keep_alive(Duration::from_millis(20))
            .build()
            .unwrap();
        let handle = rt.handle();
        rt.block_on(async move {
            // The closure waits for the test to have seen its thread: once it returns, the
            // thread's 20 ms may pass before this task runs again on a loaded machine.
            let (seen_tx, seen_rx) = std::sync::mpsc::channel::<()>();
            let job = ringsteal_rt::spawn_blocking(move || seen_rx.recv().unwrap());
            while handle.stats().blocking_threads != 1 {
                ringsteal_rt::yield_now().await;
            }
            seen_tx.send(()).unwrap();
            job.await.unwrap();
            // Poll the gauge; the hang guard bounds the wait.
            while handle.stats().blocking_threads != 0 {
                ringsteal_rt::time::sleep(Duration::from_millis(5)).await;
            }
            // The pool starts a new thread for new work.
            let name = ringsteal_rt::spawn_blocking(thread_name).await.unwrap();
            assert!(name.contains("-blocking-"), "{name}");
        });
    });
}

#[test]
fn a_closure_spawned_while_the_last_thread_retires_gets_a_thread_of_its_own() {
    // At the limit of one thread, the only thread retires (its keep-alive passed) and runs
    // its stop hook, held here until the test lets it go: a closure spawned meanwhile must
    // start a new thread, not wait in the queue for one that will never look at it again.
    hang_guard("spawn while retiring", HANG_LIMIT, || {
        let stopping = Arc::new(AtomicUsize::new(0));
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let release_rx = Arc::new(Mutex::new(release_rx));
        let rt = {
            let stopping = stopping.clone();
            Config::MsgRing
                .builder(1)
                .max_blocking_threads(1)
                .blocking_keep_alive(Duration::from_millis(1))
                .on_thread_stop(move || {
                    if thread_name().contains("-blocking-") {
                        stopping.fetch_add(1, SeqCst);
                        let _ = release_rx.lock().unwrap().recv();
                    }
                })
                .build()
                .unwrap()
        };
        rt.block_on(async {
            assert_eq!(ringsteal_rt::spawn_blocking(|| 1).await.unwrap(), 1);
            // The hang guard bounds this wait for the thread to retire.
            while stopping.load(SeqCst) == 0 {
                ringsteal_rt::yield_now().await;
            }
            let second = ringsteal_rt::spawn_blocking(|| 2);
            let got = ringsteal_rt::time::timeout(Duration::from_secs(20), second).await;
            // Let every stop hook go before asserting, so the runtime's drop is not held.
            drop(release_tx);
            assert_eq!(
                got.expect("the closure waited for the retiring thread")
                    .unwrap(),
                2
            );
        });
    });
}

#[test]
fn blocking_closures_can_be_spawned_from_every_kind_of_thread() {
    with_every_runtime("blocking from anywhere", 2, |_, rt| {
        let handle = rt.handle();
        let from_thread = std::thread::spawn(move || handle.spawn_blocking(|| 1))
            .join()
            .unwrap();
        rt.block_on(async move {
            let from_main = ringsteal_rt::spawn_blocking(|| 2);
            let from_task = ringsteal_rt::spawn_with(ringsteal_rt::Placement::Pinned(1), async {
                ringsteal_rt::spawn_blocking(|| 3).await.unwrap()
            });
            let nested = ringsteal_rt::spawn_blocking(|| ringsteal_rt::spawn_blocking(|| 4));
            assert_eq!(from_thread.await.unwrap(), 1);
            assert_eq!(from_main.await.unwrap(), 2);
            assert_eq!(from_task.await.unwrap(), 3);
            assert_eq!(nested.await.unwrap().await.unwrap(), 4);
        });
    });
}

/// Back-to-back spawns must each get their own thread: an idle thread that one spawn has
/// claimed (and woken) is not idle for the next. Each round has `r` idle threads and spawns
/// `r + 1` closures that can only finish together; if two spawns share one idle thread, no
/// thread is started for the last one and the round deadlocks (here: times out and reports).
#[test]
fn back_to_back_spawns_never_share_one_idle_thread() {
    use std::sync::Condvar;
    hang_guard("back-to-back spawns", HANG_LIMIT, || {
        let rt = Config::MsgRing.builder(1).build().unwrap();
        rt.block_on(async {
            for r in 0..24usize {
                let all = r + 1;
                let meet = Arc::new((Mutex::new(0usize), Condvar::new()));
                let handles: Vec<_> = (0..all)
                    .map(|_| {
                        let meet = meet.clone();
                        ringsteal_rt::spawn_blocking(move || {
                            let (count, cv) = &*meet;
                            let mut n = count.lock().unwrap();
                            *n += 1;
                            cv.notify_all();
                            // Bounded, so a broken pool fails the test instead of hanging it.
                            let (n, _) = cv
                                .wait_timeout_while(n, Duration::from_secs(10), |n| *n < all)
                                .unwrap();
                            *n == all
                        })
                    })
                    .collect();
                for h in handles {
                    assert!(
                        h.await.unwrap(),
                        "round {r}: {all} closures spawned back to back did not all run at \
                         once (two were given the same idle thread)"
                    );
                }
            }
        });
    });
}

/// The CPUs the calling thread may run on.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set),
            0
        );
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// With `pin_shards(true)` each shard runs on one CPU, and a thread inherits the mask of the
/// thread that starts it: the pool's threads, started by whichever shard spawns first, take
/// the building thread's mask instead, so blocking closures are not confined to a shard's
/// CPU (skipped with fewer than 2 CPUs, where it cannot show).
#[test]
fn blocking_threads_started_by_a_pinned_shard_run_on_every_cpu_of_the_builder() {
    let builder_cpus = allowed_cpus();
    if builder_cpus.len() < 2 {
        eprintln!("skipped: needs 2 CPUs");
        return;
    }
    hang_guard("pinned shards' blocking threads", HANG_LIMIT, move || {
        let rt = ringsteal_rt::Runtime::builder()
            .shards(2)
            .pin_shards(true)
            .build()
            .unwrap();
        let seen = rt.block_on(async {
            let from_shard0 = ringsteal_rt::spawn_blocking(allowed_cpus).await.unwrap();
            let from_shard1 = ringsteal_rt::spawn_with(ringsteal_rt::Placement::Pinned(1), async {
                // Two at once: at least one new thread, started by shard 1.
                let x = ringsteal_rt::spawn_blocking(allowed_cpus);
                let y = ringsteal_rt::spawn_blocking(allowed_cpus);
                [x.await.unwrap(), y.await.unwrap()]
            })
            .await
            .unwrap();
            [from_shard0, from_shard1[0].clone(), from_shard1[1].clone()]
        });
        for cpus in seen {
            assert_eq!(cpus, builder_cpus, "a blocking thread was confined");
        }
    });
}
