//! A shard whose loop keeps panicking (a runtime bug, simulated with the test switch
//! `RemoteShard::loop_panics`) shuts the whole runtime down, rather than stop alone and leave
//! the spawns and messages sent to it waiting for ever (ADR-0019).

use std::sync::atomic::Ordering::SeqCst;
use std::sync::mpsc;
use std::time::Duration;

use super::thread::MAX_RESTARTS;
use crate::{spawn_with, Placement, Runtime, SpawnError};

#[test]
fn a_shard_loop_that_keeps_panicking_shuts_the_runtime_down_instead_of_stranding_work() {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let rt = Runtime::builder().shards(2).build().unwrap();
        let shared = rt.shared();
        let handle = rt.handle();
        let waiting = rt.block_on(async {
            // A task on shard 1 that waits for ever: its JoinHandle must still resolve.
            let waiting = spawn_with(Placement::Pinned(1), std::future::pending::<()>());
            shared.shards[1].loop_panics.store(MAX_RESTARTS + 1, SeqCst);
            shared.notify(1);
            waiting.await
        });
        let spawned = handle.try_spawn_with(Placement::Pinned(1), async {});
        let sent = handle.send_msg(1, 7);
        drop(rt);
        tx.send((waiting.map_err(|e| e.is_cancelled()), spawned.err(), sent))
            .unwrap();
    });
    let (waiting, spawned, sent) = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("HUNG: a task on the failed shard never resolved");
    assert_eq!(waiting, Err(true), "the waiting task is cancelled");
    assert_eq!(
        spawned,
        Some(SpawnError::ShuttingDown),
        "a spawn onto the failed shard"
    );
    assert_eq!(
        sent,
        Err(SpawnError::ShuttingDown),
        "a message to the failed shard"
    );
}
