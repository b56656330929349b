//! Started tasks moving to an idle shard (`shard/move_started.rs`): a task spawned
//! `Stealable` that waits in its shard's run queue while another shard is idle may move
//! there; a task placed any other way, or any task with moving turned off, never does.
//!
//! The scene of every test: a runtime of three shards; sixteen tasks all start on shard 1,
//! one after the other (shard 0 is held in a blocking wait meanwhile, so it can neither
//! steal nor be handed any of them, and shard 2 sleeps: a lone queued spawn wakes no one).
//! Then they sleep until the same instants, round after round, so each round's timers fire
//! in one tick of shard 1 and put all sixteen in its run queue at once, while shard 2 (and
//! shard 0, in `block_on`) sits idle. Each task notes whether it ever runs on another shard
//! than its first.

mod common;

use std::future::Future;
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use common::*;
use ringsteal_rt::op::{self, SharedFd};
use ringsteal_rt::time::{sleep_until, Instant};
use ringsteal_rt::{current_shard, spawn_with, Builder, Placement};

const TASKS: u64 = 16;
/// Rounds of synchronised wakes a task waits through for a move at most (with moving on, the
/// first round that finds an idle shard moves some; with it off, every round is run).
const ROUNDS: u32 = 200;
const ROUND: Duration = Duration::from_millis(2);

/// What the scene saw: whether some task ran on another shard than its first, and the
/// runtime's count of moved tasks.
struct Seen {
    moved: bool,
    tasks_moved: u64,
}

/// What each task does besides sleeping through the rounds.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Reads {
    /// Nothing.
    None,
    /// Submits a read on a socket before the first round (on shard 1's ring) and keeps it
    /// in flight through the rounds; after them, writes to the socket's peer and awaits the
    /// read, which must complete with those bytes wherever the task runs by then.
    Completed,
    /// As `Completed`, but the runtime is dropped with every task still in its rounds and
    /// its read in flight (`ROUNDS` long each: the scene returns at the first move).
    Abandoned,
}

/// Plays the scene with `placement` for the sixteen tasks (their first poll must be on
/// shard 1); a round after the first move ends it.
fn scene(builder: Builder, placement: Placement) -> Seen {
    scene_with(builder, placement, Reads::None)
}

/// Polls `fut` once, with the calling task's waker.
async fn poll_once<F: Future + Unpin>(fut: &mut F) -> Poll<F::Output> {
    std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut *fut).poll(cx))).await
}

fn scene_with(builder: Builder, placement: Placement, reads: Reads) -> Seen {
    let rt = builder.build().expect("runtime");
    let handle = rt.handle();
    let moved = Arc::new(AtomicBool::new(false));
    let moved_in = moved.clone();
    let moved_main = moved.clone();
    rt.block_on(async move {
        let moved = moved_main;
        let (all_started, started) = std::sync::mpsc::channel();
        let parent = spawn_with(Placement::Pinned(1), async move {
            let signal = Signal::new();
            let epoch = Instant::now();
            let mut children = Vec::new();
            for i in 0..TASKS {
                let (child_signal, moved) = (signal.clone(), moved_in.clone());
                children.push(spawn_with(placement, async move {
                    let first = current_shard().expect("on a shard");
                    let (mut peer, ours) = UnixStream::pair().unwrap();
                    let ours = SharedFd::new(ours.into());
                    let mut read = op::read_at(&ours, Vec::with_capacity(16), u64::MAX);
                    if reads != Reads::None {
                        assert!(poll_once(&mut read).await.is_pending());
                    }
                    child_signal.add();
                    for round in 1..=ROUNDS {
                        sleep_until(epoch + ROUND * round).await;
                        if reads != Reads::None {
                            // The read's waker is now this poll's, on whatever shard.
                            assert!(poll_once(&mut read).await.is_pending());
                        }
                        if current_shard() != Some(first) {
                            moved.store(true, SeqCst);
                        }
                        if moved.load(SeqCst) && reads != Reads::Abandoned {
                            break;
                        }
                    }
                    if reads == Reads::Completed {
                        peer.write_all(&i.to_le_bytes()).unwrap();
                        let (res, buf) = read.await;
                        assert_eq!(res.unwrap(), 8);
                        assert_eq!(buf, i.to_le_bytes());
                    }
                    first
                }));
                // One at a time: a burst of two queued spawns would be handed to an idle
                // shard.
                signal.wait_for(i + 1).await;
            }
            all_started.send(()).unwrap();
            children
        });
        // Shard 0 blocks here (no await) until every task has started on shard 1.
        started.recv().unwrap();
        let children = parent.await.unwrap();
        if reads == Reads::Abandoned {
            yield_until_moved(&moved).await;
            return; // the runtime is dropped with every task in its rounds
        }
        for child in children {
            assert_eq!(child.await.unwrap(), 1, "every task started on shard 1");
        }
    });
    Seen {
        moved: moved.load(SeqCst),
        tasks_moved: handle.stats().total().tasks_moved,
    }
}

#[test]
fn started_stealable_tasks_move_to_an_idle_shard() {
    under_every_config("moving", 3, |config, builder| {
        let seen = scene(builder, Placement::Stealable);
        assert!(seen.moved, "{config:?}: no task ran on another shard");
        assert!(seen.tasks_moved >= 1, "{config:?}: stats count no move");
    });
}

#[test]
fn a_moved_task_gets_the_completion_of_a_read_it_submitted_before_the_move() {
    under_every_config("moving reads", 3, |config, builder| {
        let seen = scene_with(builder, Placement::Stealable, Reads::Completed);
        assert!(seen.moved, "{config:?}: no task ran on another shard");
    });
}

#[test]
fn a_runtime_dropped_with_moved_tasks_holding_reads_in_flight_frees_them_in_order() {
    // Under ASan (`scripts/asan.sh`) this is the check that no read's buffer is freed while
    // the kernel may write it: the tasks hold reads on shard 1's ring, some now queued or
    // polled on another shard, when shutdown cancels them.
    under_every_config("moving shutdown", 3, |config, builder| {
        let seen = scene_with(builder, Placement::Stealable, Reads::Abandoned);
        assert!(seen.moved, "{config:?}: no task ran on another shard");
    });
}

/// Waits until a task has been seen on another shard, looking once a round.
async fn yield_until_moved(moved: &AtomicBool) {
    while !moved.load(SeqCst) {
        ringsteal_rt::time::sleep(ROUND).await;
    }
}

#[test]
fn stealable_tasks_on_shard_0_keep_running_after_block_on_returns() {
    // Shard 0 runs only inside `block_on`. As it leaves, it moves every movable task it
    // holds (started there, or moved there while it idled) to the other shards.
    under_every_config("leaving block_on", 2, |config, builder| {
        let rt = builder.build().expect("runtime");
        let ticks: Arc<Vec<AtomicU64>> = Arc::new((0..8).map(|_| AtomicU64::new(0)).collect());
        let stop = Arc::new(AtomicBool::new(false));
        let mut handles = Vec::new();
        rt.block_on(async {
            let signal = Signal::new();
            let epoch = Instant::now();
            for i in 0..8 {
                let (ticker_signal, ticks, stop) = (signal.clone(), ticks.clone(), stop.clone());
                handles.push(ringsteal_rt::spawn(async move {
                    ticker_signal.add();
                    let mut round = 1;
                    while !stop.load(SeqCst) {
                        ticks[i].fetch_add(1, SeqCst);
                        sleep_until(epoch + ROUND * round).await;
                        round += 1;
                    }
                }));
                // One at a time, so each starts here on shard 0 (a lone queued spawn wakes
                // no other shard), unless one moves meanwhile.
                signal.wait_for(i as u64 + 1).await;
            }
        });
        // Outside block_on now: every ticker must go on ticking (the hang guard fails the
        // test if one is stuck on shard 0). Looked at once a round.
        let seen: Vec<u64> = ticks.iter().map(|t| t.load(SeqCst)).collect();
        while !ticks
            .iter()
            .zip(&seen)
            .all(|(t, s)| t.load(SeqCst) >= s + 3)
        {
            std::thread::sleep(ROUND);
        }
        assert!(rt.handle().stats().total().tasks_moved >= 1, "{config:?}");
        stop.store(true, SeqCst);
        rt.block_on(async {
            for h in handles {
                h.await.unwrap();
            }
        });
    });
}

#[test]
fn a_runtime_dropped_right_after_block_on_hands_nothing_on() {
    // `block_on_then_drop` (what `#[ringsteal::main]` runs): shard 0 leaves for good, so it
    // does not wake its movable tasks and move them to other shards only for the shutdown
    // to cancel them there.
    under_every_config("leaving for good", 2, |config, builder| {
        let rt = builder.build().expect("runtime");
        let handle = rt.handle();
        let polls: Arc<Vec<AtomicU64>> = Arc::new((0..8).map(|_| AtomicU64::new(0)).collect());
        let started_on_0 = Arc::new(AtomicU64::new(0));
        let (polls_in, started_in) = (polls.clone(), started_on_0.clone());
        let moved_inside = rt.block_on_then_drop(async move {
            let signal = Signal::new();
            for i in 0..8 {
                let (task_signal, polls, started) =
                    (signal.clone(), polls_in.clone(), started_in.clone());
                ringsteal_rt::spawn(async move {
                    if current_shard() == Some(0) {
                        started.fetch_add(1, SeqCst);
                    }
                    task_signal.add();
                    std::future::poll_fn(|_| {
                        polls[i].fetch_add(1, SeqCst);
                        Poll::<()>::Pending
                    })
                    .await;
                });
                // One at a time, so each starts here on shard 0 (see the test above).
                signal.wait_for(i as u64 + 1).await;
            }
            ringsteal_rt::RuntimeHandle::current()
                .stats()
                .total()
                .tasks_moved
        });
        assert!(
            started_on_0.load(SeqCst) >= 1,
            "{config:?}: no task started on shard 0, so nothing could have been handed on"
        );
        assert_eq!(
            handle.stats().total().tasks_moved,
            moved_inside,
            "{config:?}: tasks moved as block_on returned"
        );
        for (i, p) in polls.iter().enumerate() {
            assert_eq!(p.load(SeqCst), 1, "{config:?}: task {i} was polled again");
        }
    });
}

#[test]
fn no_task_moves_with_moving_turned_off() {
    under_every_config("moving off", 3, |config, builder| {
        let seen = scene(builder.move_started_tasks(false), Placement::Stealable);
        assert!(!seen.moved, "{config:?}: a task moved");
        assert_eq!(seen.tasks_moved, 0, "{config:?}");
    });
}

#[test]
fn tasks_placed_any_other_way_never_move() {
    let placements = [
        Placement::Pinned(1),
        Placement::StealablePreferred(1),
        Placement::Sticky(sticky_key_for_shard_1()),
    ];
    for placement in placements {
        under_every_config("placed", 3, move |config, builder| {
            let seen = scene(builder, placement);
            assert!(!seen.moved, "{config:?} {placement:?}: a task moved");
            assert_eq!(seen.tasks_moved, 0, "{config:?} {placement:?}");
        });
    }
}

/// A `Sticky` key that lands on shard 1 of a three-shard runtime.
fn sticky_key_for_shard_1() -> u64 {
    let rt = Config::ALL[0].runtime(3);
    rt.block_on(async {
        for key in 0.. {
            if spawn_with(Placement::Sticky(key), async { current_shard() })
                .await
                .unwrap()
                == Some(1)
            {
                return key;
            }
        }
        unreachable!()
    })
}
