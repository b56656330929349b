//! Started tasks moving to an idle shard (`shard/move_started.rs`): a task spawned
//! `Stealable` that waits in its shard's run queue while another shard is idle may move
//! there; a task placed any other way, or any task with moving turned off, never does.
//!
//! The scene of every test: sixteen tasks all start on shard 1, one after the other (shard 0
//! is held in a blocking wait meanwhile, so it can neither steal nor be handed any of them).
//! Then they sleep until the same instants, round after round, so each round's timers fire
//! in one tick of shard 1 and put all sixteen in its run queue at once, while shard 0 sits
//! idle in `block_on`. Each task notes whether it ever runs on another shard than its first.

mod common;

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use ringsteal_rt::time::{sleep_until, Instant};
use ringsteal_rt::{current_shard, spawn_with, Builder, Placement};

const TASKS: u64 = 16;
/// Rounds of synchronised wakes a task waits through for a move at most (with moving on, the
/// first round that finds shard 0 idle moves some; with it off, every round is run).
const ROUNDS: u32 = 200;
const ROUND: Duration = Duration::from_millis(2);

/// What the scene saw: whether some task ran on another shard than its first, and the
/// runtime's count of moved tasks.
struct Seen {
    moved: bool,
    tasks_moved: u64,
}

/// Plays the scene with `placement` for the sixteen tasks (their first poll must be on
/// shard 1); a round after the first move ends it.
fn scene(builder: Builder, placement: Placement) -> Seen {
    let rt = builder.build().expect("runtime");
    let handle = rt.handle();
    let moved = Arc::new(AtomicBool::new(false));
    let moved_in = moved.clone();
    rt.block_on(async move {
        let (all_started, started) = std::sync::mpsc::channel();
        let parent = spawn_with(Placement::Pinned(1), async move {
            let signal = Signal::new();
            let epoch = Instant::now();
            let mut children = Vec::new();
            for i in 0..TASKS {
                let (child_signal, moved) = (signal.clone(), moved_in.clone());
                children.push(spawn_with(placement, async move {
                    let first = current_shard().expect("on a shard");
                    child_signal.add();
                    for round in 1..=ROUNDS {
                        sleep_until(epoch + ROUND * round).await;
                        if current_shard() != Some(first) {
                            moved.store(true, SeqCst);
                        }
                        if moved.load(SeqCst) {
                            break;
                        }
                    }
                    first
                }));
                // One at a time: a burst of two queued spawns would be handed to shard 0.
                signal.wait_for(i + 1).await;
            }
            all_started.send(()).unwrap();
            children
        });
        // Shard 0 blocks here (no await) until every task has started on shard 1.
        started.recv().unwrap();
        for child in parent.await.unwrap() {
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
    under_every_config("moving", 2, |config, builder| {
        let seen = scene(builder, Placement::Stealable);
        assert!(seen.moved, "{config:?}: no task ran on shard 0");
        assert!(seen.tasks_moved >= 1, "{config:?}: stats count no move");
    });
}

#[test]
fn no_task_moves_with_moving_turned_off() {
    under_every_config("moving off", 2, |config, builder| {
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
        // Keys that land on shard 1 of two.
        Placement::Sticky(sticky_key_for_shard_1()),
    ];
    for placement in placements {
        under_every_config("placed", 2, move |config, builder| {
            let seen = scene(builder, placement);
            assert!(!seen.moved, "{config:?} {placement:?}: a task moved");
            assert_eq!(seen.tasks_moved, 0, "{config:?} {placement:?}");
        });
    }
}

/// A `Sticky` key that lands on shard 1 of a two-shard runtime.
fn sticky_key_for_shard_1() -> u64 {
    let rt = Config::ALL[0].runtime(2);
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
