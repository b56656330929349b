//! Tasks: join handles deliver outputs, abort cancels idle, unstarted and running tasks,
//! `is_finished` and `abort_handle` work, dropping a handle detaches, and `JoinError` tells
//! cancellation from panics.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use common::*;
use ringsteal_rt::{current_shard, spawn_with, Placement};

#[test]
fn a_join_handle_yields_the_output_of_its_task() {
    with_every_runtime("join output", 2, |_, rt| {
        rt.block_on(async {
            let s = ringsteal_rt::spawn(async { String::from("hello") });
            assert_eq!(s.await.unwrap(), "hello");
            let v = spawn_with(Placement::Pinned(1), async {
                ringsteal_rt::yield_now().await;
                vec![1u8; 1000]
            });
            assert_eq!(v.await.unwrap(), vec![1u8; 1000]);
            let unit = spawn_with(Placement::RoundRobin, async {});
            unit.await.unwrap();
            // A handle awaited after its task finished still yields the output.
            let early = spawn_with(Placement::Pinned(1), async { 7u64 });
            yield_until(|| early.is_finished()).await;
            assert_eq!(early.await.unwrap(), 7);
        });
    });
}

#[test]
fn aborting_an_idle_task_cancels_it_and_drops_its_future() {
    with_every_runtime("abort idle", 2, |_, rt| {
        rt.block_on(async {
            let ledger = DropLedger::default();
            let guard = ledger.guard();
            let started = Arc::new(AtomicBool::new(false));
            let never = Signal::new();
            let (s, n) = (started.clone(), never.clone());
            let handle = spawn_with(Placement::Pinned(1), async move {
                let _guard = guard;
                s.store(true, SeqCst);
                n.wait_for(1).await;
                unreachable!("the signal is never given");
            });
            yield_until(|| started.load(SeqCst)).await;
            assert!(!handle.is_finished());
            handle.abort();
            let err = handle.await.unwrap_err();
            assert!(err.is_cancelled() && !err.is_panic(), "{err:?}");
            ledger.assert_each_dropped_once();
        });
    });
}

#[test]
fn aborting_a_task_before_it_starts_means_it_never_runs() {
    with_every_runtime("abort unstarted", 2, |_, rt| {
        rt.block_on(async {
            let ledger = DropLedger::default();
            let ran = Arc::new(AtomicUsize::new(0));
            // Shard 1 spins and shard 0 is busy running this future: nothing spawned below
            // can start before it is aborted.
            let release = Arc::new(AtomicBool::new(false));
            let spinning = Arc::new(AtomicBool::new(false));
            let (r, sp) = (release.clone(), spinning.clone());
            let spinner = spawn_with(Placement::Pinned(1), async move {
                sp.store(true, SeqCst);
                spin_until(|| r.load(SeqCst));
            });
            yield_until(|| spinning.load(SeqCst)).await;
            let mut handles = Vec::new();
            for p in [
                Placement::Pinned(0),
                Placement::Pinned(1),
                Placement::Stealable,
                Placement::StealablePreferred(1),
            ] {
                let (guard, ran) = (ledger.guard(), ran.clone());
                let h = spawn_with(p, async move {
                    let _guard = guard;
                    ran.fetch_add(1, SeqCst);
                });
                h.abort();
                handles.push(h);
            }
            release.store(true, SeqCst);
            spinner.await.unwrap();
            for h in handles {
                assert!(h.await.unwrap_err().is_cancelled());
            }
            assert_eq!(
                ran.load(SeqCst),
                0,
                "an aborted task that had not started ran"
            );
            ledger.assert_each_dropped_once();
        });
    });
}

#[test]
fn aborting_a_running_task_drops_it_at_its_next_await() {
    with_every_runtime("abort running", 2, |_, rt| {
        rt.block_on(async {
            let ledger = DropLedger::default();
            let guard = ledger.guard();
            let running = Arc::new(AtomicBool::new(false));
            let aborted = Arc::new(AtomicBool::new(false));
            let past_await = Arc::new(AtomicBool::new(false));
            let finished_poll = Arc::new(AtomicBool::new(false));
            let (r, a, p, f) = (
                running.clone(),
                aborted.clone(),
                past_await.clone(),
                finished_poll.clone(),
            );
            let handle = spawn_with(Placement::Pinned(1), async move {
                let _guard = guard;
                r.store(true, SeqCst);
                // Still inside this poll when abort() is called.
                spin_until(|| a.load(SeqCst));
                f.store(true, SeqCst);
                ringsteal_rt::yield_now().await;
                p.store(true, SeqCst);
            });
            yield_until(|| running.load(SeqCst)).await;
            handle.abort();
            aborted.store(true, SeqCst);
            let err = handle.await.unwrap_err();
            assert!(err.is_cancelled(), "{err:?}");
            assert!(
                finished_poll.load(SeqCst),
                "the poll in progress completes first"
            );
            assert!(
                !past_await.load(SeqCst),
                "the task ran past its await after abort"
            );
            ledger.assert_each_dropped_once();
        });
    });
}

#[test]
fn an_abort_handle_cancels_without_the_join_handle() {
    with_every_runtime("abort handle", 2, |_, rt| {
        rt.block_on(async {
            let ledger = DropLedger::default();
            let guard = ledger.guard();
            let handle = spawn_with(Placement::Pinned(1), async move {
                let _guard = guard;
                std::future::pending::<()>().await;
            });
            let abort = handle.abort_handle();
            let clone = abort.clone();
            drop(handle);
            assert!(!abort.is_finished());
            // Abort from a plain thread.
            std::thread::spawn(move || clone.abort()).join().unwrap();
            yield_until(|| abort.is_finished()).await;
            yield_until(|| ledger.dropped() == 1).await;
            ledger.assert_each_dropped_once();
            // Aborting again, or a finished task, is harmless.
            abort.abort();
            let done = ringsteal_rt::spawn(async { 5 });
            let late = done.abort_handle();
            yield_until(|| late.is_finished()).await;
            late.abort();
            assert_eq!(
                done.await.unwrap(),
                5,
                "abort after completion keeps the output"
            );
        });
    });
}

#[test]
fn is_finished_turns_true_once_the_task_completes() {
    with_every_runtime("is_finished", 2, |_, rt| {
        rt.block_on(async {
            let go = Signal::new();
            let g = go.clone();
            let handle = spawn_with(Placement::Pinned(1), async move {
                g.wait_for(1).await;
                3
            });
            for _ in 0..10 {
                ringsteal_rt::yield_now().await;
                assert!(!handle.is_finished());
            }
            go.add();
            yield_until(|| handle.is_finished()).await;
            assert_eq!(handle.await.unwrap(), 3);
        });
    });
}

#[test]
fn dropping_a_join_handle_detaches_the_task_which_still_runs_to_completion() {
    with_every_runtime("detach", 2, |_, rt| {
        rt.block_on(async {
            let ledger = DropLedger::default();
            let go = Signal::new();
            let finished = Signal::new();
            for p in [
                Placement::Pinned(0),
                Placement::Pinned(1),
                Placement::Stealable,
                Placement::RoundRobin,
            ] {
                let (guard, g, f) = (ledger.guard(), go.clone(), finished.clone());
                drop(spawn_with(p, async move {
                    let _guard = guard;
                    g.wait_for(1).await;
                    ringsteal_rt::yield_now().await;
                    f.add();
                    String::from("output nobody reads")
                }));
            }
            go.add();
            finished.wait_for(4).await;
            yield_until(|| ledger.dropped() == 4).await;
            ledger.assert_each_dropped_once();
        });
    });
}

#[test]
fn join_errors_tell_cancellation_from_panics_and_carry_the_payload() {
    quiet_intentional_panics();
    let rt = Config::MsgRing.runtime(2);
    rt.block_on(async {
        let cancelled = ringsteal_rt::spawn(std::future::pending::<()>());
        cancelled.abort();
        let err = cancelled.await.unwrap_err();
        assert!(err.is_cancelled() && !err.is_panic());
        assert_eq!(err.to_string(), format!("task {} was cancelled", err.id()));
        let err = err.try_into_panic().unwrap_err();
        let msg = catch_unwind(AssertUnwindSafe(|| err.into_panic()))
            .map(drop)
            .unwrap_err();
        assert!(msg
            .downcast_ref::<String>()
            .is_some_and(|m| m.contains("cancelled")));

        let static_str = spawn_with(Placement::Pinned(1), async {
            if current_shard().is_some() {
                panic!("INTENTIONAL test panic: a static message");
            }
        });
        let err = static_str.await.unwrap_err();
        assert!(err.is_panic() && !err.is_cancelled());
        assert!(err.to_string().contains("a static message"), "{err}");
        let payload = err.into_panic();
        assert_eq!(
            *payload.downcast_ref::<&str>().unwrap(),
            "INTENTIONAL test panic: a static message"
        );

        let formatted = ringsteal_rt::spawn(async {
            let n = 42;
            if n == 42 {
                panic!("{} with {n}", common::INTENTIONAL);
            }
        });
        let payload = formatted.await.unwrap_err().into_panic();
        assert_eq!(
            payload.downcast_ref::<String>().unwrap(),
            "INTENTIONAL test panic with 42"
        );

        let any = ringsteal_rt::spawn(async {
            std::panic::panic_any(7u32);
        });
        let err = any.await.unwrap_err();
        assert_eq!(err.to_string(), format!("task {} panicked", err.id()));
        assert_eq!(*err.into_panic().downcast::<u32>().unwrap(), 7);
    });
}
