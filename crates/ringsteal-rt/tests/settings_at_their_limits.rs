//! Builder settings at the edges of what they accept: "no limit" durations
//! (`Duration::MAX`), which must not overflow a deadline anywhere (the runtime's drop, a
//! shard's shutdown, an idle blocking thread's wait), a thread name the OS cannot take, and
//! thread hooks (`on_thread_start`/`_stop`), one of which panics.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use ringsteal_rt::{BuildError, Placement, Runtime, RuntimeHandle};

#[test]
fn a_thread_name_with_a_nul_byte_is_a_build_error() {
    for shards in [1, 2] {
        let Err(err) = Runtime::builder()
            .shards(shards)
            .thread_name("bad\0name")
            .build()
        else {
            panic!("a thread name with a NUL byte was accepted");
        };
        assert!(matches!(err, BuildError::Config(_)), "{err}");
        assert!(err.to_string().contains("NUL"), "{err}");
    }
}

#[test]
fn no_io_workers_at_all_is_a_build_error_and_one_is_enough() {
    let Err(err) = Runtime::builder().shards(1).max_io_workers(0).build() else {
        panic!("max_io_workers(0) was accepted");
    };
    assert!(matches!(err, BuildError::Config(_)), "{err}");
    assert!(err.to_string().contains("max_io_workers"), "{err}");
    let rt = Runtime::builder()
        .shards(2)
        .max_io_workers(1)
        .build()
        .unwrap();
    rt.block_on(async { ringsteal_rt::op::nop().await.unwrap() });
}

#[test]
fn a_thread_stack_too_small_to_start_a_shard_is_a_build_error_not_an_abort() {
    // std raises 0 to the system's minimum (16 KiB) instead of refusing it, and a shard of a
    // debug build overflowed that as it started: an abort, not the documented error.
    for bytes in [0, 16 << 10, (64 << 10) - 1] {
        let Err(err) = Runtime::builder()
            .shards(2)
            .thread_stack_size(bytes)
            .build()
        else {
            panic!("a stack of {bytes} bytes was accepted");
        };
        assert!(matches!(err, BuildError::Config(_)), "{err}");
        assert!(err.to_string().contains("thread_stack_size"), "{err}");
    }
    let rt = Runtime::builder()
        .shards(2)
        .thread_stack_size(64 << 10)
        .build()
        .unwrap();
    let on = rt.block_on(async {
        ringsteal_rt::spawn_with(Placement::Pinned(1), async {
            ringsteal_rt::current_shard()
        })
        .await
    });
    assert_eq!(on.unwrap(), Some(1));
}

#[test]
fn an_unlimited_shutdown_timeout_shuts_every_shard_down() {
    struct SetOnDrop(Arc<AtomicBool>);
    impl Drop for SetOnDrop {
        fn drop(&mut self) {
            self.0.store(true, SeqCst);
        }
    }
    let rt = Runtime::builder()
        .shards(2)
        .shutdown_timeout(Duration::MAX)
        .build()
        .unwrap();
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = SetOnDrop(dropped.clone());
    let pinned = rt.handle().spawn_with(Placement::Pinned(1), async move {
        let _flag = flag;
        std::future::pending::<()>().await
    });
    // Once this has run on shard 1, so has the pinned task's first poll (FIFO there).
    rt.block_on(rt.handle().spawn_with(Placement::Pinned(1), async {}))
        .unwrap();
    drop(rt);
    assert!(
        dropped.load(SeqCst),
        "the pinned task was not dropped by the shutdown"
    );
    assert!(pinned.is_finished());
}

#[test]
fn an_unlimited_blocking_keep_alive_keeps_idle_threads_serving() {
    let rt = Runtime::builder()
        .shards(1)
        .max_blocking_threads(1)
        .blocking_keep_alive(Duration::MAX)
        .build()
        .unwrap();
    rt.block_on(async {
        // The one pool thread goes idle between closures, with a deadline of "never".
        for i in 0..20 {
            let got = ringsteal_rt::time::timeout(
                Duration::from_secs(20),
                ringsteal_rt::spawn_blocking(move || i),
            )
            .await
            .expect("a blocking closure never ran")
            .unwrap();
            assert_eq!(got, i);
            for _ in 0..i {
                ringsteal_rt::yield_now().await;
            }
        }
    });
    drop(rt);
}

#[test]
fn thread_hooks_run_on_every_thread_the_runtime_starts_and_a_panicking_one_is_contained() {
    use std::sync::atomic::AtomicUsize;
    use std::sync::Mutex;

    let started = Arc::new(Mutex::new(Vec::new()));
    let stopped = Arc::new(AtomicUsize::new(0));
    let (s, t) = (started.clone(), stopped.clone());
    let rt = Runtime::builder()
        .shards(2)
        .thread_name("hooked")
        .on_thread_start(move || {
            let name = std::thread::current().name().unwrap_or("").to_string();
            // As in tokio, the hooks run inside the runtime: a handle is there to take.
            assert!(RuntimeHandle::try_current().is_some(), "{name}: no runtime");
            s.lock().unwrap().push(name);
        })
        .on_thread_stop(move || {
            assert!(RuntimeHandle::try_current().is_some(), "stop: no runtime");
            t.fetch_add(1, SeqCst);
        })
        .build()
        .unwrap();
    // Shard 1's thread started before `build` returned; shard 0 is this thread: no hook.
    assert_eq!(*started.lock().unwrap(), ["hooked-1"]);
    rt.block_on(async { ringsteal_rt::spawn_blocking(|| ()).await.unwrap() });
    let names = started.lock().unwrap().clone();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names[1].starts_with("hooked-blocking"), "{names:?}");
    assert_eq!(stopped.load(SeqCst), 0);
    drop(rt);
    assert_eq!(
        stopped.load(SeqCst),
        2,
        "each started thread stopped, hook run"
    );

    // A hook that panics: every thread goes on, and the runtime works.
    let rt = Runtime::builder()
        .shards(2)
        .on_thread_start(|| panic!("a hook that fails"))
        .build()
        .unwrap();
    let on = rt.block_on(async {
        let blocking = ringsteal_rt::spawn_blocking(|| 7).await.unwrap();
        let shard = ringsteal_rt::spawn_with(Placement::Pinned(1), async {
            ringsteal_rt::current_shard()
        })
        .await
        .unwrap();
        (blocking, shard)
    });
    assert_eq!(on, (7, Some(1)));
}

/// `on_thread_park` / `on_thread_unpark`, as tokio's: an idle shard runs the park hook, then
/// the unpark hook when it wakes, strictly alternating on each thread (shard 0 included while
/// it serves `block_on`); a task a park hook spawns runs (the shard looks for work after the
/// hook); a panicking hook is contained.
#[test]
fn park_hooks_alternate_on_each_shard_and_work_they_make_is_seen() {
    use std::collections::HashMap;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Mutex;

    // Per thread: parked now?, parks, unparks; and any out-of-order call.
    type Log = Mutex<HashMap<String, (bool, usize, usize)>>;
    let log: Arc<Log> = Arc::default();
    let disorder = Arc::new(AtomicUsize::new(0));
    let (l1, d1, l2, d2) = (log.clone(), disorder.clone(), log.clone(), disorder.clone());
    let name = || std::thread::current().name().unwrap_or("main").to_string();
    let spawned_from_hook = Arc::new(AtomicBool::new(false));
    let ran = Arc::new(AtomicBool::new(false));
    let (spawn_once, r) = (spawned_from_hook.clone(), ran.clone());
    let rt = Runtime::builder()
        .shards(2)
        .thread_name("parking")
        .on_thread_park(move || {
            let mut log = l1.lock().unwrap();
            let entry = log.entry(name()).or_default();
            if entry.0 {
                d1.fetch_add(1, SeqCst);
            }
            entry.0 = true;
            entry.1 += 1;
            drop(log);
            // Once, from shard 1's park: a local task, which only this shard can run and
            // whose spawn rings no doorbell.
            if ringsteal_rt::current_shard() == Some(1) && !spawn_once.swap(true, SeqCst) {
                let r = r.clone();
                drop(ringsteal_rt::spawn_local(
                    async move { r.store(true, SeqCst) },
                ));
            }
        })
        .on_thread_unpark(move || {
            let mut log = l2.lock().unwrap();
            let entry = log.entry(name()).or_default();
            if !entry.0 {
                d2.fetch_add(1, SeqCst);
            }
            entry.0 = false;
            entry.2 += 1;
        })
        .build()
        .unwrap();
    rt.block_on(async {
        // Both shards go idle while these sleep.
        let other = ringsteal_rt::spawn_with(Placement::Pinned(1), async {
            for _ in 0..5 {
                ringsteal_rt::time::sleep(Duration::from_millis(2)).await;
            }
        });
        for _ in 0..5 {
            ringsteal_rt::time::sleep(Duration::from_millis(2)).await;
        }
        other.await.unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !ran.load(SeqCst) {
            assert!(
                std::time::Instant::now() < deadline,
                "the hook's task never ran"
            );
            ringsteal_rt::time::sleep(Duration::from_millis(1)).await;
        }
    });
    drop(rt);
    assert_eq!(
        disorder.load(SeqCst),
        0,
        "a park or unpark hook out of turn"
    );
    let log = log.lock().unwrap();
    // Shard 0 is this thread.
    let here = name();
    for thread in [here.as_str(), "parking-1"] {
        let (parked, parks, unparks) = log.get(thread).copied().unwrap_or_default();
        assert!(parks >= 1, "{thread} never parked: {log:?}");
        assert!(
            !parked && parks == unparks,
            "{thread}: {parks} parks, {unparks} unparks"
        );
    }
    assert!(spawned_from_hook.load(SeqCst));

    // A hook that panics: the shards go on.
    let rt = Runtime::builder()
        .shards(2)
        .on_thread_park(|| panic!("a park hook that fails"))
        .build()
        .unwrap();
    let shard = rt.block_on(async {
        ringsteal_rt::time::sleep(Duration::from_millis(2)).await;
        ringsteal_rt::spawn_with(Placement::Pinned(1), async {
            ringsteal_rt::current_shard()
        })
        .await
        .unwrap()
    });
    assert_eq!(shard, Some(1));
}
