//! Whole-file reads of large files: read in concurrent chunks off the shard's thread, equal to
//! std's result, and the shard keeps running its other tasks meanwhile.

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use common::{on_every_shard, pattern, watchdog, Config, TempDir};

/// Larger than the size from which `fs::read` reads in chunks (16 MiB), and not a multiple of
/// the chunk size.
const LARGE: usize = (40 << 20) + 12_345;

#[test]
fn a_large_file_reads_back_equal_to_std() {
    on_every_shard("large read", |ctx| async move {
        let path = ctx.dir.join("large");
        std::fs::write(&path, pattern(LARGE)).unwrap();
        let ours = ringsteal_fs::read(&path).await.unwrap();
        assert_eq!(ours.len(), LARGE);
        assert!(
            ours == std::fs::read(&path).unwrap(),
            "contents differ from std's"
        );
    });
}

#[test]
fn a_large_file_that_grows_between_statx_and_read_is_read_to_its_end() {
    on_every_shard("large read, growing", |ctx| async move {
        let path = ctx.dir.join("growing");
        std::fs::write(&path, pattern(LARGE)).unwrap();
        let read = ringsteal_fs::read(&path);
        // Grows before the read starts (the future has not been polled yet): the chunks cover
        // the old size, the tail loop reads the rest.
        let mut more = pattern(LARGE + 4096);
        more.drain(..LARGE);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        use std::io::Write;
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(&more)
            .unwrap();
        let ours = read.await.unwrap();
        assert!(ours == std::fs::read(&path).unwrap());
    });
}

#[test]
fn a_large_read_leaves_its_shard_free_for_other_tasks() {
    // A cached file read inline would hold the shard inside io_uring_enter for the whole copy.
    // The chunked read runs in the kernel's workers: a neighbour task on the same shard keeps
    // being polled while it is in flight.
    watchdog("large read, responsive shard", || {
        let rt = Config::new(1).build();
        let dir = TempDir::new("responsive");
        let path = dir.join("large");
        std::fs::write(&path, pattern(LARGE)).unwrap();
        let _ = std::fs::read(&path).unwrap(); // cached, so an inline read would copy at once
        rt.block_on(async move {
            let ticks = Rc::new(RefCell::new(Vec::with_capacity(1 << 16)));
            let done = Rc::new(Cell::new(false));
            let ticker = {
                let (ticks, done) = (ticks.clone(), done.clone());
                ringsteal_rt::spawn_local(async move {
                    while !done.get() {
                        ticks.borrow_mut().push(Instant::now());
                        ringsteal_rt::yield_now().await;
                    }
                })
            };
            ringsteal_rt::yield_now().await; // the ticker is running
            let start = Instant::now();
            let data = ringsteal_fs::read(&path).await.unwrap();
            let end = Instant::now();
            done.set(true);
            ticker.await.unwrap();
            assert_eq!(data.len(), LARGE);
            // The longest stretch the shard could not poll its neighbour during the read. Held
            // inline, that is most of the copy; off the shard, a scheduler time slice at most.
            let mut last = start;
            let mut longest = Duration::ZERO;
            for &t in ticks.borrow().iter().filter(|&&t| t > start && t < end) {
                longest = longest.max(t - last);
                last = t;
            }
            longest = longest.max(end - last);
            let took = end - start;
            assert!(
                longest < took / 2,
                "the shard was held for {longest:?} of a {took:?} read"
            );
        });
    });
}
