//! Thousands of concurrent reads of one file: 4,000 tasks, spread over every shard (half
//! placed round-robin, half stealable), each read 4 KiB at its own offset of one shared
//! `File` at the same time, and each gets exactly the bytes std wrote there. The rings are
//! kept small (64 SQEs), so submissions overflow the SQ and are flushed early.

mod common;

use std::sync::Arc;

use ringsteal_fs::File;
use ringsteal_rt::{Placement, Runtime, WakeMechanism};

use common::*;

const TASKS: usize = 4000;
const CHUNK: usize = 4096;

fn run(config: Config, ring_entries: u32) {
    let what = format!("{config:?}, {ring_entries} SQEs");
    watchdog(&what.clone(), move || {
        let dir = TempDir::new("concurrent");
        let path = dir.join("big");
        let data = Arc::new(pattern(TASKS * CHUNK));
        std::fs::write(&path, &*data).unwrap();
        let rt = Runtime::builder()
            .shards(config.shards)
            .wake(config.wake)
            .defer_taskrun(config.defer_taskrun)
            .ring_entries(ring_entries)
            .build()
            .unwrap();
        let handle = rt.handle();
        let per_shard = rt.block_on(async move {
            let file = Arc::new(File::open(&path).await.unwrap());
            // A permutation of the chunks, so neighbouring tasks read far apart.
            let tasks: Vec<_> = (0..TASKS)
                .map(|i| {
                    let chunk = (i * 7919) % TASKS;
                    let (file, data) = (file.clone(), data.clone());
                    let placement = if i % 2 == 0 {
                        Placement::RoundRobin
                    } else {
                        Placement::Stealable
                    };
                    ringsteal_rt::spawn_with(placement, async move {
                        let pos = (chunk * CHUNK) as u64;
                        let (res, buf) = file.read_exact_at(Vec::with_capacity(CHUNK), pos).await;
                        res.unwrap_or_else(|e| panic!("chunk {chunk}: {e}"));
                        assert!(
                            buf == data[chunk * CHUNK..(chunk + 1) * CHUNK],
                            "chunk {chunk}: wrong bytes"
                        );
                        ringsteal_rt::current_shard().unwrap()
                    })
                })
                .collect();
            let mut per_shard = vec![0usize; config.shards];
            for t in tasks {
                per_shard[t.await.expect("a reading task")] += 1;
            }
            per_shard
        });
        assert_eq!(per_shard.iter().sum::<usize>(), TASKS);
        assert!(
            per_shard.iter().all(|&n| n > 0),
            "{what}: some shard ran no read: {per_shard:?}"
        );
        let stats = handle.stats();
        for (i, s) in stats.shards.iter().enumerate() {
            assert_eq!(
                s.ops_in_flight, 0,
                "{what}: shard {i} still owes completions"
            );
        }
        assert!(stats.total().ops_completed >= TASKS as u64);
    });
}

#[test]
fn four_thousand_concurrent_reads_on_one_shard_return_the_file_s_bytes() {
    run(Config::new(1), 64);
}

#[test]
fn four_thousand_concurrent_reads_spread_over_two_shards_return_the_file_s_bytes() {
    run(Config::new(2), 64);
    run(Config::new(2), 256);
}

#[test]
fn four_thousand_concurrent_reads_over_two_shards_with_eventfd_wakes_and_plain_rings() {
    let mut config = Config::new(2);
    config.wake = WakeMechanism::EventFd;
    config.defer_taskrun = false;
    run(config, 64);
}
