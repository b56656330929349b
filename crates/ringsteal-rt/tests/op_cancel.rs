//! Cancellation: dropping an op that is in flight submits `IORING_OP_ASYNC_CANCEL` on the op's
//! own ring and leaves its buffer to the driver, which frees it only once the kernel has
//! posted the op's completion; wherever the op is dropped (its shard, another shard, a thread
//! that is no shard at all), the cancel reaches the right ring and the buffer is freed there.
//!
//! The reads target pipes and FIFOs that nobody writes to, so they can only end by
//! cancellation. Each buffer is a `TrackedBuf`, whose `Drop` records the thread and shard it
//! ran on and the shards' `ops_completed` counters at that moment, and writes a byte into a
//! notification pipe that the test awaits with an op (no sleeping, no polling loop).
//!
//! Every behaviour runs under one and two shards, and under the eventfd and
//! no-`DEFER_TASKRUN` fallbacks.

mod op_support;

use std::os::fd::OwnedFd;

use ringsteal_rt::op::{self, SharedFd};
use ringsteal_rt::{Placement, RuntimeHandle};

use op_support::*;

/// A descriptor to read from that nobody writes to, and its write end (kept open so the read
/// waits instead of seeing end of file).
#[derive(Clone, Copy, Debug)]
enum Source {
    Pipe,
    Fifo,
}

impl Source {
    fn open(self, dir: &TempDir) -> (SharedFd, OwnedFd) {
        let (rx, tx) = match self {
            Source::Pipe => pipe(),
            Source::Fifo => fifo(dir, "fifo"),
        };
        (SharedFd::new(rx), tx)
    }
}

/// Waits (as an op, on the current shard) for `n` bytes from `probe`'s notification pipe:
/// one per buffer dropped.
async fn await_drops(notify: &SharedFd, n: usize) {
    let mut got = 0;
    while got < n {
        let (res, _) = op::read_at(notify, Vec::with_capacity(n - got), u64::MAX)
            .with_timeout(OP_GUARD)
            .await;
        got += res.expect("waiting for the buffer to be dropped");
    }
}

/// After a cancelled read: data written now is read whole by a new read (the cancelled read
/// consumed nothing).
async fn check_nothing_consumed(rx: &SharedFd, tx: &OwnedFd) {
    write_fd(tx, b"fresh");
    let (res, buf) = op::read_at(rx, Vec::with_capacity(16), u64::MAX)
        .with_timeout(OP_GUARD)
        .await;
    assert_eq!(res.expect("read after the cancel"), 5);
    assert_eq!(buf, b"fresh");
}

async fn dropped_on_its_own_shard(shard: usize, source: Source) {
    let handle = RuntimeHandle::current();
    let dir = TempDir::new("cancel-own");
    let (rx, tx) = source.open(&dir);
    let (probe, notify) = Probe::with_notify(handle.clone());

    let mut read = op::read_at(&rx, probe.buf(0, 64), u64::MAX);
    submit(&mut read).await;
    let before = handle.stats().shards[shard].clone();
    drop(read);
    assert_eq!(
        probe.drops(),
        0,
        "{source:?}: the buffer was freed by the drop itself, while the kernel still owned it"
    );
    assert_eq!(
        handle.stats().shards[shard].ops_cancelled,
        before.ops_cancelled + 1,
        "{source:?}: the drop was not counted as a cancel"
    );

    await_drops(&notify, 1).await;
    let records = probe.records();
    assert_eq!(records.len(), 1, "{source:?}: dropped more than once");
    let rec = &records[0];
    assert_eq!(
        rec.shard,
        Some(shard),
        "{source:?}: freed off the op's shard"
    );
    assert!(
        rec.ops_completed[shard] > before.ops_completed,
        "{source:?}: the buffer was freed before the read's completion was reaped \
         (ops_completed {} at the drop, {} before the cancel)",
        rec.ops_completed[shard],
        before.ops_completed
    );
    check_nothing_consumed(&rx, &tx).await;
}

#[test]
fn dropping_an_in_flight_pipe_read_cancels_it_and_frees_the_buffer_only_after_its_completion() {
    for config in ALL_MODES {
        on_every_shard(config, |shard| {
            dropped_on_its_own_shard(shard, Source::Pipe)
        });
    }
}

#[test]
fn dropping_an_in_flight_fifo_read_cancels_it_and_frees_the_buffer_only_after_its_completion() {
    for config in ALL_MODES {
        on_every_shard(config, |shard| {
            dropped_on_its_own_shard(shard, Source::Fifo)
        });
    }
}

#[test]
fn a_read_dropped_on_a_plain_thread_is_still_cancelled_on_its_shard_and_freed_there() {
    for config in ALL_MODES {
        on_every_shard(config, |shard| async move {
            let handle = RuntimeHandle::current();
            let dir = TempDir::new("cancel-thread");
            for source in [Source::Pipe, Source::Fifo] {
                let (rx, tx) = source.open(&dir);
                let (probe, notify) = Probe::with_notify(handle.clone());
                let mut read = op::read_at(&rx, probe.buf(0, 64), u64::MAX);
                submit(&mut read).await;
                let before = handle.stats().shards[shard].clone();

                // The op moves to a thread that is no shard and is dropped there, while this
                // shard waits in the kernel for the notification.
                let dropper = std::thread::spawn(move || {
                    drop(read);
                    std::thread::current().id()
                });
                await_drops(&notify, 1).await;
                let dropper = dropper.join().expect("the dropping thread");

                let records = probe.records();
                assert_eq!(records.len(), 1, "{source:?}: dropped more than once");
                let rec = &records[0];
                // Freed by the op's shard when the last completion arrives, or by the dropping
                // thread if both completions were already reaped when it let go of its
                // reference: either way, after the kernel was done (checked next).
                assert!(
                    rec.shard == Some(shard) || rec.thread == dropper,
                    "{source:?}: freed by a thread that neither owns the ring nor dropped the op"
                );
                assert!(
                    rec.ops_completed[shard] > before.ops_completed,
                    "{source:?}: freed before the read's completion was reaped"
                );
                assert_eq!(
                    handle.stats().shards[shard].ops_cancelled,
                    before.ops_cancelled + 1,
                    "{source:?}: the drop was not counted as a cancel"
                );
                check_nothing_consumed(&rx, &tx).await;
            }
        });
    }
}

#[test]
fn a_read_dropped_by_a_task_on_another_shard_is_cancelled_on_its_own_shard() {
    for config in TWO_SHARD_MODES {
        on_every_shard(config, |shard| async move {
            let handle = RuntimeHandle::current();
            let other = 1 - shard;
            let (rx, tx) = Source::Pipe.open(&TempDir::new("cancel-shard"));
            let (probe, notify) = Probe::with_notify(handle.clone());
            let mut read = op::read_at(&rx, probe.buf(0, 64), u64::MAX);
            submit(&mut read).await;
            let before = handle.stats().shards[shard].clone();

            let dropped_on = ringsteal_rt::spawn_with(Placement::Pinned(other), async move {
                drop(read);
                ringsteal_rt::current_shard()
            });
            assert_eq!(dropped_on.await.unwrap(), Some(other));
            await_drops(&notify, 1).await;

            let records = probe.records();
            assert_eq!(records.len(), 1, "dropped more than once");
            let rec = &records[0];
            // Freed by the op's shard at the last completion, or by the dropping shard if the
            // op's shard had reaped both completions before the drop released its reference.
            assert!(rec.shard == Some(shard) || rec.shard == Some(other));
            assert!(
                rec.ops_completed[shard] > before.ops_completed,
                "freed before the read's completion was reaped"
            );
            assert_eq!(
                handle.stats().shards[shard].ops_cancelled,
                before.ops_cancelled + 1
            );
            check_nothing_consumed(&rx, &tx).await;
        });
    }
}

#[test]
fn dropping_a_read_that_completed_but_was_not_awaited_frees_the_buffer_at_once_without_a_cancel() {
    for config in ALL_MODES {
        on_every_shard(config, |shard| async move {
            let handle = RuntimeHandle::current();
            let (rx, tx) = Source::Pipe.open(&TempDir::new("cancel-done"));
            let probe = Probe::new(handle.clone());
            let mut read = op::read_at(&rx, probe.buf(0, 64), u64::MAX);
            submit(&mut read).await;
            let before = handle.stats().shards[shard].clone();

            write_fd(&tx, b"data");
            // The shard reaps the completion while this task yields (the op is not polled).
            while handle.stats().shards[shard].ops_completed == before.ops_completed {
                ringsteal_rt::yield_now().await;
            }
            assert_eq!(probe.drops(), 0);
            drop(read);
            assert_eq!(
                probe.drops(),
                1,
                "a completed op keeps its buffer after its future is gone"
            );
            assert_eq!(
                handle.stats().shards[shard].ops_cancelled,
                before.ops_cancelled,
                "a completed op was cancelled"
            );
            // The data went into the dropped buffer: the pipe is empty again.
            check_nothing_consumed(&rx, &tx).await;
        });
    }
}

#[test]
fn an_op_dropped_before_its_first_poll_submits_nothing_and_drops_its_buffer_at_once() {
    for config in ONE_AND_TWO_SHARDS {
        on_every_shard(config, |shard| async move {
            let handle = RuntimeHandle::current();
            let (rx, tx) = Source::Pipe.open(&TempDir::new("cancel-unpolled"));
            let probe = Probe::new(handle.clone());
            let before = handle.stats().shards[shard].clone();
            let read = op::read_at(&rx, probe.buf(0, 64), u64::MAX);
            drop(read);
            assert_eq!(probe.drops(), 1);
            let after = handle.stats().shards[shard].clone();
            assert_eq!(after.ops_cancelled, before.ops_cancelled);
            assert_eq!(after.ops_in_flight, before.ops_in_flight);
            check_nothing_consumed(&rx, &tx).await;
        });
    }
}

#[test]
fn many_reads_dropped_at_once_are_all_cancelled_and_each_buffer_freed_once() {
    const READS: usize = 100;
    for config in ALL_MODES {
        on_every_shard(config, |shard| async move {
            let handle = RuntimeHandle::current();
            let (rx, tx) = Source::Pipe.open(&TempDir::new("cancel-many"));
            let (probe, notify) = Probe::with_notify(handle.clone());
            let mut reads: Vec<_> = (0..READS)
                .map(|i| op::read_at(&rx, probe.buf(i, 8), u64::MAX))
                .collect();
            for read in reads.iter_mut() {
                assert!(poll_once(read).await.is_pending());
            }
            ringsteal_rt::yield_now().await;
            let before = handle.stats().shards[shard].clone();
            drop(reads);
            await_drops(&notify, READS).await;

            let records = probe.records();
            let mut labels: Vec<_> = records.iter().map(|r| r.label).collect();
            labels.sort_unstable();
            assert_eq!(
                labels,
                (0..READS).collect::<Vec<_>>(),
                "each buffer dropped once"
            );
            assert!(records.iter().all(|r| r.shard == Some(shard)));
            // The k-th buffer freed comes after at least k reads completed.
            for (k, r) in records.iter().enumerate() {
                assert!(
                    r.ops_completed[shard] > before.ops_completed + k as u64,
                    "buffer {} (freed {}th) was freed before its read's completion was reaped",
                    r.label,
                    k + 1
                );
            }
            assert_eq!(
                handle.stats().shards[shard].ops_cancelled,
                before.ops_cancelled + READS as u64
            );
            check_nothing_consumed(&rx, &tx).await;
        });
    }
}

#[test]
fn dropping_an_op_of_several_sqes_cancels_all_of_them_before_freeing_its_buffer() {
    for config in ALL_MODES {
        on_every_shard(config, |shard| async move {
            let handle = RuntimeHandle::current();
            let dir = TempDir::new("cancel-linked");
            let dst_path = dir.join("dst");
            std::fs::write(&dst_path, b"keep").unwrap();
            let dst = SharedFd::new(
                std::fs::File::options()
                    .write(true)
                    .open(&dst_path)
                    .unwrap()
                    .into(),
            );
            let (rx, tx) = Source::Pipe.open(&dir);
            let (probe, notify) = Probe::with_notify(handle.clone());
            // A read with a (far) deadline: read + link timeout.
            let mut timed = op::read_at(&rx, probe.buf(0, 16), u64::MAX).with_timeout(OP_GUARD);
            // A linked copy from the idle pipe: read + write.
            let mut linked = op::copy_linked(&rx, u64::MAX, &dst, 0, probe.buf(1, 16), 16);
            // Both: read + link timeout + write.
            let mut both = op::copy_linked(&rx, u64::MAX, &dst, 0, probe.buf(2, 16), 16)
                .with_timeout(OP_GUARD);
            assert!(poll_once(&mut timed).await.is_pending());
            assert!(poll_once(&mut linked).await.is_pending());
            assert!(poll_once(&mut both).await.is_pending());
            ringsteal_rt::yield_now().await;
            let before = handle.stats().shards[shard].clone();
            drop((timed, linked, both));
            assert_eq!(probe.drops(), 0, "a buffer was freed by the drop itself");
            await_drops(&notify, 3).await;

            let records = probe.records();
            for (k, r) in records.iter().enumerate() {
                assert!(
                    r.ops_completed[shard] > before.ops_completed + k as u64,
                    "buffer {} was freed before its op's completions were all reaped",
                    r.label
                );
            }
            // Every SQE of the three ops, and their cancels, has completed (the cells were
            // freed), and so has the notification read: nothing is owed.
            assert_eq!(handle.stats().shards[shard].ops_in_flight, 0);
            assert_eq!(
                handle.stats().shards[shard].ops_cancelled,
                before.ops_cancelled + 3
            );
            assert_eq!(std::fs::read(&dst_path).unwrap(), b"keep", "a write ran");
            check_nothing_consumed(&rx, &tx).await;
        });
    }
}
