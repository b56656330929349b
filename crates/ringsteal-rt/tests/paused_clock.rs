//! The paused clock (`time::pause`, `advance`, `resume`, `Builder::start_paused`): hours of
//! timeouts and retries in milliseconds of real time, tokio's auto-advance, misuse reported as
//! errors. Every body runs under the hang guard: a clock that fails to advance hangs.

mod common;

use std::future::Future;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{blocked_in_io_uring_enter, hang_guard, HANG_LIMIT};
use ringsteal_rt::time::{self, interval, sleep, sleep_until, timeout, ClockError, Instant};
use ringsteal_rt::{BuildError, Runtime, WakeMechanism};

/// A single-shard runtime with its clock paused from the start, for each wake mechanism.
fn each_paused(name: &str, body: impl Fn(&Runtime) + Send + Sync + 'static) {
    let body = Arc::new(body);
    for wake in [WakeMechanism::Auto, WakeMechanism::EventFd] {
        let body = body.clone();
        hang_guard(&format!("{name} [{wake:?}]"), HANG_LIMIT, move || {
            let rt = Runtime::builder()
                .shards(1)
                .wake(wake)
                .start_paused(true)
                .build()
                .unwrap();
            body(&rt);
        });
    }
}

#[test]
fn a_retry_loop_with_hours_of_backoff_runs_in_milliseconds() {
    each_paused("retry", |rt| {
        let real = std::time::Instant::now();
        let attempts = rt.block_on(async {
            let start = Instant::now();
            let mut attempts = Vec::new();
            let mut backoff = Duration::from_secs(60);
            // A flaky call that fails until the clock says three hours have passed; each try
            // is bounded by a 30 s timeout, and the call itself takes 45 s when it fails.
            loop {
                let at = start.elapsed();
                attempts.push(at);
                let call = async {
                    if at < Duration::from_secs(3 * 3600) {
                        sleep(Duration::from_secs(45)).await;
                    }
                    "ok"
                };
                match timeout(Duration::from_secs(30), call).await {
                    Ok(reply) => break (reply, attempts),
                    Err(_) => {
                        sleep(backoff).await;
                        backoff = (backoff * 2).min(Duration::from_secs(3600));
                    }
                }
            }
        });
        let (reply, attempts) = attempts;
        assert_eq!(reply, "ok");
        // Each failed attempt: 30 s of timeout, then 1, 2, 4, 8, 16, 32, 60, 60... minutes.
        let mut expected = vec![Duration::ZERO];
        let mut backoff = 60;
        while *expected.last().unwrap() < Duration::from_secs(3 * 3600) {
            let next = *expected.last().unwrap() + Duration::from_secs(30 + backoff);
            expected.push(next);
            backoff = (backoff * 2).min(3600);
        }
        assert_eq!(
            attempts, expected,
            "every timer fired exactly at its deadline"
        );
        assert!(
            real.elapsed() < Duration::from_secs(10),
            "{:?} of virtual time took {:?} of real time",
            attempts.last().unwrap(),
            real.elapsed()
        );
    });
}

#[test]
fn timers_fire_in_deadline_order_on_a_paused_clock() {
    each_paused("order", |rt| {
        let order = rt.block_on(async {
            let order = Arc::new(Mutex::new(Vec::new()));
            let start = Instant::now();
            let tasks: Vec<_> = [50u64, 10, 40, 20, 30]
                .into_iter()
                .map(|secs| {
                    let order = order.clone();
                    ringsteal_rt::spawn(async move {
                        sleep_until(start + Duration::from_secs(secs)).await;
                        order.lock().unwrap().push((secs, start.elapsed()));
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
            Arc::try_unwrap(order).unwrap().into_inner().unwrap()
        });
        let expected: Vec<_> = [10, 20, 30, 40, 50]
            .into_iter()
            .map(|s| (s, Duration::from_secs(s)))
            .collect();
        assert_eq!(order, expected);
    });
}

#[test]
fn advance_fires_what_is_due_and_runs_the_woken_tasks_before_returning() {
    each_paused("advance", |rt| {
        rt.block_on(async {
            let start = Instant::now();
            let fired = Arc::new(AtomicU32::new(0));
            let mut tasks = Vec::new();
            for secs in [1u64, 2, 3] {
                let fired = fired.clone();
                tasks.push(ringsteal_rt::spawn(async move {
                    sleep(Duration::from_secs(secs)).await;
                    fired.fetch_add(1, SeqCst);
                }));
            }
            // Let the tasks register their timers.
            ringsteal_rt::yield_now().await;
            assert_eq!(fired.load(SeqCst), 0);
            time::advance(Duration::from_millis(1999)).await;
            assert_eq!(
                fired.load(SeqCst),
                1,
                "only the 1 s timer is due at 1.999 s"
            );
            assert_eq!(start.elapsed(), Duration::from_millis(1999));
            time::advance(Duration::from_millis(1)).await;
            assert_eq!(fired.load(SeqCst), 2, "the 2 s timer fires exactly at 2 s");
            time::advance(Duration::from_secs(10)).await;
            assert_eq!(fired.load(SeqCst), 3);
            assert_eq!(start.elapsed(), Duration::from_secs(12));
            for t in tasks {
                t.await.unwrap();
            }
        });
    });
}

#[test]
fn advance_runs_every_woken_task_even_more_than_a_tick_polls() {
    each_paused("advance with 200 timers", |rt| {
        rt.block_on(async {
            const TASKS: u32 = 200; // a tick polls at most 61
            let (registered, fired) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
            let mut tasks = Vec::new();
            for _ in 0..TASKS {
                let (registered, fired) = (registered.clone(), fired.clone());
                tasks.push(ringsteal_rt::spawn(async move {
                    let timer = sleep(Duration::from_secs(1));
                    registered.fetch_add(1, SeqCst);
                    timer.await;
                    fired.fetch_add(1, SeqCst);
                }));
            }
            while registered.load(SeqCst) < TASKS {
                ringsteal_rt::yield_now().await;
            }
            // The last ones have created their timers; one more turn and all are armed.
            ringsteal_rt::yield_now().await;
            assert_eq!(fired.load(SeqCst), 0);
            time::advance(Duration::from_secs(1)).await;
            assert_eq!(
                fired.load(SeqCst),
                TASKS,
                "advance returned before every woken task ran"
            );
            for t in tasks {
                t.await.unwrap();
            }
        });
    });
}

#[test]
fn the_paused_clock_stands_still_without_timers_and_for_every_thread_of_the_runtime() {
    each_paused("still", |rt| {
        rt.block_on(async {
            let frozen = Instant::now();
            // Real time passes on a blocking thread; the runtime's clock does not.
            let seen = ringsteal_rt::spawn_blocking(move || {
                std::thread::sleep(Duration::from_millis(5));
                Instant::now()
            })
            .await
            .unwrap();
            assert_eq!(
                seen, frozen,
                "a blocking thread of the runtime sees the paused clock"
            );
            ringsteal_rt::yield_now().await;
            assert_eq!(Instant::now(), frozen);
            // A thread of no runtime sees std's clock.
            let outside = std::thread::spawn(Instant::now).join().unwrap();
            assert!(outside > frozen);
        });
    });
}

#[test]
fn auto_advance_waits_for_a_blocking_closure() {
    each_paused("blocking", |rt| {
        rt.block_on(async {
            // A blocking closure that takes real time and then wakes a task: had the clock
            // jumped to the 1 h timeout meanwhile, the timeout would win.
            let (tx, rx) = std::sync::mpsc::channel::<()>();
            let work = ringsteal_rt::spawn_blocking(move || {
                rx.recv_timeout(Duration::from_millis(20)).ok();
                "done"
            });
            let result = timeout(Duration::from_secs(3600), work).await;
            drop(tx);
            assert_eq!(result.unwrap().unwrap(), "done");
        });
    });
}

#[test]
fn auto_advance_wakes_when_a_detached_blocking_closure_finishes() {
    each_paused("detached", |rt| {
        rt.block_on(async {
            let start = Instant::now();
            // Nobody awaits the closure: only its end can tell the parked shard to advance.
            drop(ringsteal_rt::spawn_blocking(|| {
                std::thread::sleep(Duration::from_millis(10))
            }));
            sleep(Duration::from_secs(600)).await;
            assert_eq!(start.elapsed(), Duration::from_secs(600));
        });
    });
}

#[test]
fn completions_already_in_the_ring_are_taken_before_the_clock_jumps() {
    each_paused("io", |rt| {
        rt.block_on(async {
            for _ in 0..50 {
                let res = timeout(Duration::from_secs(3600), ringsteal_rt::op::nop()).await;
                assert!(matches!(res, Ok(Ok(_))), "{res:?}");
            }
            // A read of a pipe that already holds data completes when submitted.
            let (r, w) = pipe();
            write_to(&w, b"ready");
            let fd = ringsteal_rt::op::SharedFd::new(r);
            let start = Instant::now();
            let read = timeout(
                Duration::from_secs(3600),
                ringsteal_rt::op::read_at(&fd, Vec::with_capacity(16), u64::MAX),
            )
            .await
            .expect("the read completed before the clock could move");
            let (n, buf) = read;
            assert_eq!(&buf[..n.unwrap()], b"ready");
            assert_eq!(start.elapsed(), Duration::ZERO);
        });
    });
}

#[test]
fn auto_advance_waits_for_file_requests_in_flight() {
    let path = std::env::temp_dir().join(format!("ringsteal-paused-file-{}", std::process::id()));
    std::fs::write(&path, vec![7u8; 8 << 20]).unwrap();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    let fd = ringsteal_rt::op::SharedFd::new(file.into());
    each_paused("file", move |rt| {
        let fd = fd.clone();
        rt.block_on(async move {
            let start = Instant::now();
            // Reads handed to the kernel's workers (as `fs::read` hands large ones) take real
            // time: had the clock jumped to the timeouts' deadlines meanwhile, they would win,
            // as they cannot against tokio's file calls (its blocking pool holds the clock).
            for chunk in 0..8u64 {
                let read = ringsteal_rt::op::read_at(&fd, Vec::with_capacity(1 << 20), chunk << 20)
                    .force_async();
                let (n, buf) = timeout(Duration::from_millis(1), read)
                    .await
                    .expect("a file read in flight holds the paused clock");
                assert_eq!(n.unwrap(), 1 << 20);
                assert!(buf.iter().all(|&b| b == 7));
            }
            let sync = timeout(
                Duration::from_millis(1),
                ringsteal_rt::op::fsync(&fd, false),
            );
            sync.await.expect("an fsync holds it too").unwrap();
            assert_eq!(start.elapsed(), Duration::ZERO);
            // Once nothing is in flight, time moves again.
            sleep(Duration::from_secs(5)).await;
            assert_eq!(start.elapsed(), Duration::from_secs(5));
        });
    });
}

/// A request holds the clock until it completes, not until its future looks: a read polled
/// once and set aside lets time move once the kernel is done with it.
#[test]
fn a_completed_file_read_whose_future_is_set_aside_lets_the_clock_move() {
    let path = std::env::temp_dir().join(format!("ringsteal-paused-aside-{}", std::process::id()));
    std::fs::write(&path, vec![5u8; 1 << 20]).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let fd = ringsteal_rt::op::SharedFd::new(file.into());
    each_paused("set aside", move |rt| {
        let fd = fd.clone();
        rt.block_on(async move {
            let mut read = Box::pin(
                ringsteal_rt::op::read_at(&fd, Vec::with_capacity(1 << 20), 0).force_async(),
            );
            std::future::poll_fn(|cx| {
                assert!(read.as_mut().poll(cx).is_pending(), "a worker reads it");
                std::task::Poll::Ready(())
            })
            .await;
            let start = Instant::now();
            // Not polled again until the hour has passed.
            let waited = timeout(Duration::from_secs(3600), std::future::pending::<()>()).await;
            assert!(waited.is_err());
            assert_eq!(start.elapsed(), Duration::from_secs(3600));
            let (n, _) = read.await;
            assert_eq!(n.unwrap(), 1 << 20);
        });
    });
}

#[test]
fn a_read_of_an_unmarked_pipe_at_an_offset_does_not_hold_the_clock() {
    each_paused("pipe at an offset", |rt| {
        rt.block_on(async {
            // io_uring ignores the offset of a pipe: this read waits for a writer that never
            // comes, so it must not hold the clock, or the timeout would never fire.
            let (r, _w) = pipe();
            let fd = ringsteal_rt::op::SharedFd::new(r);
            let start = Instant::now();
            let read = ringsteal_rt::op::read_at(&fd, Vec::with_capacity(8), 0);
            assert!(timeout(Duration::from_secs(1), read).await.is_err());
            assert_eq!(start.elapsed(), Duration::from_secs(1));
        });
    });
}

fn pipe() -> (OwnedFd, OwnedFd) {
    use std::os::fd::FromRawFd;
    let mut fds = [-1; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: pipe2 succeeded: both descriptors are open and owned by nothing else.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

fn write_to(w: &OwnedFd, data: &[u8]) {
    use std::io::Write;
    let mut f = std::fs::File::from(w.try_clone().unwrap());
    f.write_all(data).unwrap();
}

#[test]
fn an_interval_ticks_on_schedule_on_a_paused_clock() {
    each_paused("interval", |rt| {
        rt.block_on(async {
            let start = Instant::now();
            let mut every = interval(Duration::from_secs(90));
            for n in 0..10u32 {
                let at = every.tick().await;
                assert_eq!(at - start, Duration::from_secs(90) * n);
                assert_eq!(Instant::now(), at);
            }
        });
    });
}

#[test]
fn a_delay_interval_seen_a_few_ms_late_keeps_its_schedule_as_tokios_does() {
    // tokio applies the missed-tick behaviour only to a tick seen more than 5 ms late: ticks
    // at 10, 20, 30 ms here (tokio's own figures), where a 1 ms threshold gave 10, 23, 33.
    each_paused("delay interval threshold", |rt| {
        rt.block_on(async {
            let start = Instant::now();
            let mut every = interval(Duration::from_millis(10));
            every.set_missed_tick_behavior(time::MissedTickBehavior::Delay);
            every.tick().await;
            sleep(Duration::from_millis(13)).await;
            let mut at = Vec::new();
            for _ in 0..3 {
                at.push((every.tick().await - start).as_millis());
            }
            assert_eq!(at, [10, 20, 30]);
            // Seen more than 5 ms late, the schedule moves: a period after the late tick.
            sleep(Duration::from_millis(26)).await;
            let late = every.tick().await - start;
            let next = every.tick().await - start;
            assert_eq!((late.as_millis(), next.as_millis()), (40, 66));
        });
    });
}

#[test]
fn resume_runs_the_clock_at_the_real_rate_again() {
    each_paused("resume", |rt| {
        rt.block_on(async {
            let start = Instant::now();
            sleep(Duration::from_secs(3600)).await;
            time::resume();
            let real = std::time::Instant::now();
            sleep(Duration::from_millis(20)).await;
            assert!(
                real.elapsed() >= Duration::from_millis(20),
                "a sleep on a resumed clock takes real time"
            );
            let elapsed = start.elapsed();
            assert!(elapsed >= Duration::from_secs(3600) + Duration::from_millis(20));
            assert!(elapsed < Duration::from_secs(3600 + 30), "{elapsed:?}");
            // Paused again from where it was: no jump.
            time::pause();
            let frozen = Instant::now();
            assert!(frozen >= start + elapsed);
            time::advance(Duration::from_secs(5)).await;
            assert_eq!(Instant::now() - frozen, Duration::from_secs(5));
        });
    });
}

#[test]
fn misuse_is_an_error_that_says_what_to_do() {
    hang_guard("misuse", HANG_LIMIT, || {
        assert_eq!(time::try_pause(), Err(ClockError::NoRuntime));
        assert_eq!(time::try_resume(), Err(ClockError::NoRuntime));

        let two = Runtime::builder().shards(2).build().unwrap();
        two.block_on(async {
            let err = time::try_pause().unwrap_err();
            assert_eq!(err, ClockError::MultiShard { shards: 2 });
            assert!(err.to_string().contains("single-shard"), "{err}");
            assert!(err.to_string().contains(".shards(1)"), "{err}");
            assert_eq!(
                time::try_advance(Duration::from_secs(1)).await,
                Err(ClockError::NotPaused)
            );
        });
        drop(two);

        match Runtime::builder().shards(2).start_paused(true).build() {
            Err(BuildError::Config(msg)) => assert!(msg.contains("single shard"), "{msg}"),
            other => panic!("expected a configuration error, got {other:?}"),
        }
        // Without a shard count, a paused clock gets its one shard on any machine (the
        // default is one per CPU otherwise).
        let paused = Runtime::builder().start_paused(true).build().unwrap();
        assert_eq!(paused.handle().shards(), 1);
        drop(paused);

        let one = Runtime::builder().shards(1).build().unwrap();
        one.block_on(async {
            assert_eq!(time::try_resume(), Err(ClockError::NotPaused));
            time::try_pause().unwrap();
            assert_eq!(time::try_pause(), Err(ClockError::AlreadyPaused));
            assert_eq!(
                time::try_advance(Duration::MAX).await,
                Err(ClockError::Overflow)
            );
            time::try_resume().unwrap();
            assert_eq!(time::try_resume(), Err(ClockError::NotPaused));
        });
        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            one.block_on(async { time::advance(Duration::from_secs(1)).await })
        }))
        .unwrap_err();
        let msg = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("not paused"), "{msg}");
    });
}

#[test]
fn an_advance_that_leaves_no_room_for_deadlines_is_refused_and_timers_keep_working() {
    hang_guard("advance near the end of time", HANG_LIMIT, || {
        let rt = Runtime::builder().shards(1).build().unwrap();
        rt.block_on(async {
            time::try_pause().unwrap();
            // `Instant` is CLOCK_MONOTONIC in seconds as an i64: this advance fits, but leaves
            // a day before the largest `Instant`, where a sleep's "never" deadline (now plus
            // 30 years) could not be computed. It used to be accepted, and the next long
            // sleep panicked.
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: clock_gettime writes one timespec into a live local.
            let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
            assert_eq!(rc, 0);
            let to_the_end = i64::MAX as u64 - ts.tv_sec as u64 - 2;
            let almost = Duration::from_secs(to_the_end - 86_400);
            assert_eq!(time::try_advance(almost).await, Err(ClockError::Overflow));
            // A century is fine, and timers keep working after it.
            time::try_advance(Duration::from_secs(100 * 365 * 86_400))
                .await
                .unwrap();
            let mut forever = Box::pin(time::sleep(Duration::MAX));
            let pending = std::future::poll_fn(|cx| {
                std::task::Poll::Ready(forever.as_mut().poll(cx).is_pending())
            })
            .await;
            assert!(pending, "a sleep of Duration::MAX never ends");
            time::sleep(Duration::from_secs(1)).await; // auto-advanced
            time::try_resume().unwrap();
            time::sleep(Duration::from_millis(1)).await;
        });
    });
}

#[test]
fn the_pause_holds_across_block_on_calls() {
    each_paused("across", |rt| {
        let first = rt.block_on(async { Instant::now() });
        std::thread::sleep(Duration::from_millis(2));
        let second = rt.block_on(async {
            sleep(Duration::from_secs(30)).await;
            Instant::now()
        });
        assert_eq!(second - first, Duration::from_secs(30));
    });
}

/// A paused shard whose auto-advance is held back by a running blocking closure sleeps
/// without a timeout; `resume()` from that closure wakes it, so its timer then fires in
/// real time (as tokio's). (It slept on: the closure's end rings the shard only while the
/// clock is paused, which it no longer was.)
#[test]
fn resume_from_a_blocking_closure_lets_a_pending_timer_fire() {
    hang_guard("resume from blocking", HANG_LIMIT, || {
        let rt = ringsteal_rt::Runtime::builder()
            .shards(1)
            .start_paused(true)
            .build()
            .unwrap();
        let handle = rt.handle();
        rt.block_on(async move {
            // SAFETY: gettid has no preconditions.
            let shard_tid = unsafe { libc::gettid() };
            let (tx, rx) = std::sync::mpsc::channel::<std::time::Duration>();
            let blocking = ringsteal_rt::spawn_blocking(move || {
                // Wait until the shard has registered its timer and sleeps in the kernel.
                while handle.stats().total().timers_active == 0
                    || !blocked_in_io_uring_enter(shard_tid)
                {
                    std::thread::yield_now();
                }
                ringsteal_rt::time::resume();
                // Waits for the shard's 10 ms sleep to end. With the defect the shard sleeps
                // until this closure ends, which waits for it: a deadlock the hang guard
                // reports (no real-time bound here, so a loaded machine cannot fail it).
                rx.recv()
            });
            let real = std::time::Instant::now();
            let start = ringsteal_rt::time::Instant::now();
            ringsteal_rt::time::sleep(Duration::from_millis(10)).await;
            let took = real.elapsed();
            let _ = tx.send(took);
            let reply = blocking.await.unwrap();
            assert!(start.elapsed() >= Duration::from_millis(10));
            assert_eq!(reply, Ok(took), "the closure heard from the sleep's end");
        });
    });
}

/// An advance past the last tick the wheel counts (an `Instant` holds 600,000 years; the
/// wheel counts microseconds in a u64) fires the timers due and returns: it spun for ever.
#[test]
fn an_advance_past_the_wheels_last_tick_fires_what_is_due_and_returns() {
    const YEAR: u64 = 365 * 86_400;
    hang_guard("far advance", HANG_LIMIT, || {
        let rt = Runtime::builder()
            .shards(1)
            .start_paused(true)
            .build()
            .unwrap();
        rt.block_on(async {
            let day = ringsteal_rt::spawn(sleep(Duration::from_secs(86_400)));
            ringsteal_rt::yield_now().await; // the task registers its timer
            time::advance(Duration::from_secs(600_000 * YEAR)).await;
            assert!(day.is_finished());
        });
        // A deadline past what the wheel counts never fires, and is not waited for: a short
        // timer beside it fires on time.
        let rt = Runtime::builder()
            .shards(1)
            .start_paused(true)
            .build()
            .unwrap();
        rt.block_on(async {
            let never = ringsteal_rt::spawn(sleep(Duration::from_secs(2_000_000 * YEAR)));
            let start = Instant::now();
            sleep(Duration::from_secs(1)).await;
            assert_eq!(start.elapsed(), Duration::from_secs(1));
            assert!(!never.is_finished());
            never.abort();
        });
    });
}

#[test]
fn an_interval_restarts_at_once_after_a_delay_or_at_an_instant() {
    each_paused("interval resets", |rt| {
        rt.block_on(async {
            let period = Duration::from_secs(10);
            let mut ticks = interval(period);
            let start = ticks.tick().await; // at once
            ticks.reset_immediately();
            assert_eq!(ticks.tick().await, start, "due at once: no time passes");
            ticks.reset_after(Duration::from_secs(2));
            assert_eq!(ticks.tick().await - start, Duration::from_secs(2));
            assert_eq!(
                ticks.tick().await - start,
                Duration::from_secs(12),
                "a period on"
            );
            ticks.reset_at(start + Duration::from_secs(15));
            assert_eq!(ticks.tick().await - start, Duration::from_secs(15));
            ticks.reset();
            assert_eq!(ticks.tick().await - start, Duration::from_secs(25));
        });
    });
}

#[test]
fn a_timeout_of_duration_max_sets_no_timer_so_a_jumping_clock_never_elapses_it() {
    // A "no timeout" setting: tokio (since 1.54) sets no timer for a duration it cannot add
    // to now. With a deadline 30 years away instead, the paused clock's jump to the 40-year
    // sleep below passed it first, and the timeout elapsed.
    each_paused("timeout max", |rt| {
        rt.block_on(async {
            let years_40 = Duration::from_secs(40 * 365 * 24 * 3600);
            let long = ringsteal_rt::spawn(async move { sleep(years_40).await });
            let start = Instant::now();
            let joined = timeout(Duration::MAX, long).await;
            assert!(
                matches!(joined, Ok(Ok(()))),
                "elapsed after {:?}: {joined:?}",
                start.elapsed()
            );
            assert!(start.elapsed() >= years_40);
        });
    });
}
