//! Shutdown with ops in flight: dropping the runtime cancels every op still in flight on every
//! shard and waits for the kernel to complete them before anything the kernel could write is
//! freed. It returns promptly (cancelled reads complete at once; nothing waits for the
//! shutdown timeout), and every buffer is dropped exactly once, after its completion.
//!
//! The reads target pipes whose write ends the test keeps open, so only a cancel ends them.

mod op_support;

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use ringsteal_rt::op::{self, SharedFd};
use ringsteal_rt::Placement;

use op_support::*;

/// Dropping the runtime must take less than this (its shutdown timeout is 20 s, see
/// `Config::build`; cancelled reads complete in microseconds).
const PROMPT: Duration = Duration::from_secs(5);

const READS_PER_SHARD: usize = 16;

#[test]
fn dropping_the_runtime_with_reads_in_flight_on_every_shard_returns_promptly_and_frees_each_buffer_once_after_its_completion(
) {
    for config in ALL_MODES {
        watchdog(&format!("{config:?}"), move || {
            let rt = config.build();
            let handle = rt.handle();
            let probe = Probe::new(handle.clone());
            let pipes: Vec<(SharedFd, OwnedFd)> = (0..config.shards)
                .map(|_| {
                    let (rx, tx) = pipe();
                    (SharedFd::new(rx), tx)
                })
                .collect();

            rt.block_on(async {
                for (shard, (rx, _)) in pipes.iter().enumerate() {
                    for i in 0..READS_PER_SHARD {
                        let buf = probe.buf(shard * READS_PER_SHARD + i, 16);
                        let rx = rx.clone();
                        ringsteal_rt::spawn_with(Placement::Pinned(shard), async move {
                            let (res, _buf) = op::read_at(&rx, buf, u64::MAX).await;
                            panic!("a read of an idle pipe completed: {res:?}");
                        });
                    }
                }
                // Until every shard has submitted its reads (a hang guard bounds this).
                while !handle
                    .stats()
                    .shards
                    .iter()
                    .all(|s| s.ops_in_flight >= READS_PER_SHARD as u64)
                {
                    ringsteal_rt::yield_now().await;
                }
                ringsteal_rt::yield_now().await;
            });

            let before = handle.stats();
            assert_eq!(probe.drops(), 0);
            let started = Instant::now();
            drop(rt);
            let took = started.elapsed();
            assert!(
                took < PROMPT,
                "{config:?}: dropping the runtime took {took:?}"
            );

            let records = probe.records();
            let mut labels: Vec<_> = records.iter().map(|r| r.label).collect();
            labels.sort_unstable();
            assert_eq!(
                labels,
                (0..config.shards * READS_PER_SHARD).collect::<Vec<_>>(),
                "{config:?}: every buffer dropped exactly once"
            );
            for shard in 0..config.shards {
                let mine: Vec<_> = records
                    .iter()
                    .filter(|r| r.label / READS_PER_SHARD == shard)
                    .collect();
                for (k, r) in mine.iter().enumerate() {
                    assert_eq!(
                        r.shard,
                        Some(shard),
                        "{config:?}: buffer {} freed off its shard",
                        r.label
                    );
                    assert!(
                        r.ops_completed[shard] > before.shards[shard].ops_completed + k as u64,
                        "{config:?}: buffer {} (the {}th freed on shard {shard}) was freed \
                         before its read's completion was reaped",
                        r.label,
                        k + 1
                    );
                }
            }
            let after = handle.stats();
            for (shard, s) in after.shards.iter().enumerate() {
                assert_eq!(
                    s.ops_in_flight, 0,
                    "{config:?}: shard {shard} still owes CQEs"
                );
            }
            drop(pipes);
        });
    }
}

#[test]
fn an_op_that_outlives_its_runtime_fails_and_gives_its_buffer_back() {
    for config in ONE_AND_TWO_SHARDS {
        watchdog(&format!("{config:?}"), move || {
            let rt = config.build();
            let probe = Probe::new(rt.handle());
            let (rx, _tx) = pipe();
            let rx = SharedFd::new(rx);
            // The in-flight op itself is what block_on hands out.
            #[allow(clippy::async_yields_async)]
            let read = rt.block_on(async {
                let mut read = op::read_at(&rx, probe.buf(7, 16), u64::MAX);
                submit(&mut read).await;
                read
            });
            let started = Instant::now();
            drop(rt);
            assert!(started.elapsed() < PROMPT);
            assert_eq!(
                probe.drops(),
                0,
                "the runtime freed a buffer its op still owns"
            );

            let (res, buf) = block_on_plain(read);
            let err = res.expect_err("a read cancelled at shutdown");
            assert_eq!(err.raw_os_error(), Some(libc::ECANCELED), "{err}");
            assert_eq!(buf.data.capacity(), 16);
            assert_eq!(probe.drops(), 0);
            drop(buf);
            assert_eq!(probe.drops(), 1);
        });
    }
}

#[test]
fn a_read_dropped_on_a_plain_thread_while_its_shard_is_not_running_is_freed_once_at_shutdown() {
    for config in ONE_AND_TWO_SHARDS {
        watchdog(&format!("{config:?}"), move || {
            let rt = config.build();
            let handle = rt.handle();
            let probe = Probe::new(handle.clone());
            let (rx, _tx) = pipe();
            let rx = SharedFd::new(rx);
            // Submitted on shard 0, which runs only inside block_on.
            // The in-flight op itself is what block_on hands out.
            #[allow(clippy::async_yields_async)]
            let read = rt.block_on(async {
                let mut read = op::read_at(&rx, probe.buf(1, 16), u64::MAX);
                submit(&mut read).await;
                read
            });
            let before = handle.stats();
            std::thread::spawn(move || drop(read)).join().unwrap();
            assert_eq!(
                probe.drops(),
                0,
                "freed while shard 0 (not running) owes its CQE"
            );
            assert_eq!(
                handle.stats().shards[0].ops_cancelled,
                before.shards[0].ops_cancelled + 1
            );
            let started = Instant::now();
            drop(rt);
            assert!(started.elapsed() < PROMPT);
            let records = probe.records();
            assert_eq!(records.len(), 1);
            assert!(records[0].ops_completed[0] > before.shards[0].ops_completed);
        });
    }
}
