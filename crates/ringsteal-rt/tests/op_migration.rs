//! Ops that move: an op is submitted to the ring of the shard that first polls it, and it
//! may then move to another task, another shard or a plain thread and be awaited there. Its
//! completion still arrives on the ring it was submitted to, and that shard wakes whoever
//! awaits it now: no lost completion, no buffer freed or read twice.

mod op_support;

use std::future::Future;

use ringsteal_rt::op::{self, Op, ReadAt, SharedFd};
use ringsteal_rt::{Placement, RuntimeHandle};

use op_support::*;

#[test]
fn ops_are_send() {
    fn send<T: Send>() {}
    send::<Op<ReadAt<Vec<u8>>>>();
    fn future_is_send<F: Future + Send>(_: &F) {}
    let (rx, _tx) = pipe();
    future_is_send(&op::read_at(&SharedFd::new(rx), Vec::new(), 0));
}

#[test]
fn an_op_submitted_on_one_shard_completes_when_awaited_by_a_task_on_another() {
    for config in TWO_SHARD_MODES {
        on_every_shard(config, |shard| async move {
            let other = 1 - shard;
            let (rx, tx) = pipe();
            let rx = SharedFd::new(rx);
            let mut read = op::read_at(&rx, Vec::with_capacity(32), u64::MAX);
            submit(&mut read).await;

            let awaited = ringsteal_rt::spawn_with(Placement::Pinned(other), async move {
                // Register this task's waker with the op before the data exists, so the
                // completion (reaped by the submitting shard) must wake a task on this one.
                assert!(poll_once(&mut read).await.is_pending());
                let writer = std::thread::spawn(move || write_fd(&tx, b"moved"));
                let (res, buf) = read.await;
                writer.join().unwrap();
                (
                    res.map_err(|e| e.to_string()),
                    buf,
                    ringsteal_rt::current_shard(),
                )
            });
            let (res, buf, on) = awaited.await.expect("the awaiting task");
            assert_eq!(on, Some(other));
            assert_eq!(res, Ok(5));
            assert_eq!(buf, b"moved");
        });
    }
}

#[test]
fn an_op_that_completes_while_moving_between_shards_yields_its_result_once_awaited() {
    for config in TWO_SHARD_MODES {
        on_every_shard(config, |shard| async move {
            let handle = RuntimeHandle::current();
            let other = 1 - shard;
            let (rx, tx) = pipe();
            let rx = SharedFd::new(rx);
            let mut read = op::read_at(&rx, Vec::with_capacity(32), u64::MAX);
            submit(&mut read).await;
            let completed = handle.stats().shards[shard].ops_completed;
            write_fd(&tx, b"early");
            // Let this shard reap the completion before the op moves.
            while handle.stats().shards[shard].ops_completed == completed {
                ringsteal_rt::yield_now().await;
            }
            let awaited = ringsteal_rt::spawn_with(Placement::Pinned(other), read);
            let (res, buf) = awaited.await.expect("the awaiting task");
            assert_eq!(res.expect("the moved read"), 5);
            assert_eq!(buf, b"early");
        });
    }
}

#[test]
fn an_op_submitted_on_a_shard_can_be_awaited_on_a_plain_thread() {
    for config in ALL_MODES {
        on_every_shard(config, |shard| async move {
            let (rx, tx) = pipe();
            let rx = SharedFd::new(rx);
            let (done_rx, done_tx) = pipe();
            let done_rx = SharedFd::new(done_rx);
            let mut read = op::read_at(&rx, Vec::with_capacity(32), u64::MAX);
            submit(&mut read).await;

            // The plain thread polls the op with its own waker, then the data arrives; the
            // shard reaps the completion and wakes the plain thread.
            let awaiter = std::thread::spawn(move || {
                let mut read = read;
                let waker = thread_waker();
                let mut cx = std::task::Context::from_waker(&waker);
                assert!(std::pin::Pin::new(&mut read).poll(&mut cx).is_pending());
                write_fd(&tx, b"plain");
                let out = block_on_plain(read);
                write_fd(&done_tx, b"!");
                out
            });
            // This shard keeps running (its ring owes the read's completion) while waiting.
            let (res, _) = op::read_at(&done_rx, Vec::with_capacity(1), u64::MAX)
                .with_timeout(OP_GUARD)
                .await;
            assert_eq!(res.expect("waiting for the plain thread"), 1);
            let (res, buf) = awaiter.join().expect("the plain thread");
            assert_eq!(res.expect("the read awaited off-shard"), 5, "shard {shard}");
            assert_eq!(buf, b"plain");
        });
    }
}

#[test]
fn many_ops_submitted_on_one_shard_and_awaited_on_another_all_complete() {
    const OPS: usize = 64;
    for config in TWO_SHARD_MODES {
        on_every_shard(config, |shard| async move {
            let other = 1 - shard;
            let mut pipes = Vec::new();
            let mut reads = Vec::new();
            for _ in 0..OPS {
                let (rx, tx) = pipe();
                let rx = SharedFd::new(rx);
                let mut read = op::read_at(&rx, Vec::with_capacity(8), u64::MAX);
                assert!(poll_once(&mut read).await.is_pending());
                reads.push(read);
                pipes.push((rx, tx));
            }
            ringsteal_rt::yield_now().await;
            let awaited = ringsteal_rt::spawn_with(Placement::Pinned(other), async move {
                let mut got = Vec::new();
                for read in reads {
                    let (res, buf) = read.await;
                    got.push((res.map_err(|e| e.to_string()), buf));
                }
                got
            });
            let writer = std::thread::spawn(move || {
                for (i, (_, tx)) in pipes.iter().enumerate() {
                    write_fd(tx, format!("op{i}").as_bytes());
                }
                pipes
            });
            let got = awaited.await.expect("the awaiting task");
            drop(writer.join().unwrap());
            for (i, (res, buf)) in got.into_iter().enumerate() {
                let want = format!("op{i}");
                assert_eq!(res, Ok(want.len()));
                assert_eq!(buf, want.as_bytes());
            }
        });
    }
}
