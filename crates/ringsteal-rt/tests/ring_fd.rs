//! Each shard registers its ring's descriptor with its own thread, so that its enters skip
//! the kernel's descriptor lookup. A shard whose thread has no free slot left works the same
//! through the descriptor, and a runtime gives its slots back when it is dropped.

mod op_support;

use ringsteal_rt::op;
use ringsteal_uring::Ring;

use op_support::*;

/// Slots per thread in the kernel's table of registered rings (`IO_RINGFD_REG_MAX`).
const SLOTS: usize = 16;

/// `SLOTS` rings registered with the calling thread, which then has none free.
fn take_every_slot() -> Vec<Ring> {
    (0..SLOTS)
        .map(|i| {
            let mut ring = Ring::new(2).unwrap();
            // SAFETY: this thread is the only one that uses the ring, and it drops it.
            unsafe { ring.register_ring_fd() }.unwrap_or_else(|e| panic!("slot {i}: {e}"));
            ring
        })
        .collect()
}

/// Reads a scratch file through an op on every shard of a runtime built on this thread.
fn read_on_every_shard(config: Config) {
    let dir = TempDir::new("ring-fd");
    let path = dir.join("file");
    std::fs::write(&path, b"registered or not").unwrap();
    let rt = config.build();
    let handle = rt.handle();
    rt.block_on(async move {
        let tasks: Vec<_> = (0..config.shards)
            .map(|shard| {
                let path = path.clone();
                handle.spawn_local_on(shard, move || async move {
                    let fd = shared(std::fs::File::open(&path).unwrap().into());
                    for _ in 0..3 {
                        let (res, buf) = op::read_at(&fd, Vec::with_capacity(64), 3).await;
                        assert_eq!(res.unwrap(), 14);
                        assert_eq!(&buf[..], b"istered or not");
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
}

#[test]
fn a_shard_whose_thread_has_no_free_slot_enters_by_its_descriptor() {
    for config in ALL_MODES {
        watchdog(&format!("{config:?}"), move || {
            // Shard 0 runs on this thread, whose every slot is taken.
            let held = take_every_slot();
            read_on_every_shard(config);
            drop(held);
        });
    }
}

#[test]
fn a_dropped_runtime_gives_its_thread_slot_back() {
    watchdog("runtimes one after another", || {
        for _ in 0..SLOTS + 4 {
            read_on_every_shard(Config::new(1));
        }
        // Had shard 0 kept its slot, the runtimes above would have used them all up.
        drop(take_every_slot());
    });
}
