//! File I/O under a paused clock: a read or write of a regular file in flight holds
//! auto-advance, as tokio's file calls do (they run on its blocking pool, which holds it), so
//! a timeout around it does not fire while the kernel is still reading. A pipe's read does
//! not hold it (it may wait for a peer for ever): time still moves past it.

mod common;

use std::os::fd::AsRawFd;
use std::time::Duration;

use common::*;
use ringsteal_fs::{File, OpenOptions};
use ringsteal_rt::io::{AsyncReadOwned, AsyncWriteOwned};
use ringsteal_rt::time::{sleep, timeout, Instant};
use ringsteal_rt::Runtime;

fn paused() -> Runtime {
    Runtime::builder()
        .shards(1)
        .start_paused(true)
        .build()
        .unwrap()
}

/// Writes `len` bytes to `path` and evicts them from the page cache, so that reading them
/// back waits for the disk (on a file system with a page cache of its own, as ext4 and xfs
/// have; on tmpfs the pages stay and the reads complete at once).
fn uncached_file(path: &std::path::Path, len: usize) -> Vec<u8> {
    let data: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
    std::fs::write(path, &data).unwrap();
    let f = std::fs::File::open(path).unwrap();
    f.sync_all().unwrap();
    // SAFETY: plain advice on an open descriptor; no memory passes.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    data
}

#[test]
fn a_read_at_the_file_position_holds_the_paused_clock() {
    let dir = TempDir::new("paused-read");
    watchdog("paused-read", move || {
        let path = dir.join("uncached");
        let rt = paused();
        for round in 0..3 {
            let data = uncached_file(&path, 4 << 20);
            let got = rt.block_on(async {
                let start = Instant::now();
                let mut file = File::open(&path).await.unwrap();
                let (res, got) = timeout(Duration::from_millis(1), file.read_to_end(Vec::new()))
                    .await
                    .unwrap_or_else(|_| panic!("round {round}: the clock jumped past a read"));
                assert_eq!(res.unwrap(), data.len());
                assert_eq!(start.elapsed(), Duration::ZERO);
                got
            });
            assert!(got == data, "round {round}: the bytes read back differ");
        }
    });
}

#[test]
fn a_positional_read_and_a_copy_of_files_hold_the_paused_clock() {
    let dir = TempDir::new("paused-copy");
    watchdog("paused-copy", move || {
        let (from, to) = (dir.join("from"), dir.join("to"));
        let rt = paused();
        let data = uncached_file(&from, 4 << 20);
        rt.block_on(async {
            let start = Instant::now();
            let file = File::open(&from).await.unwrap();
            let read = file.read_at(Vec::with_capacity(1 << 20), 3 << 20);
            let (res, got) = timeout(Duration::from_millis(1), read)
                .await
                .expect("the clock jumped past a read at an offset");
            assert_eq!(res.unwrap(), 1 << 20);
            assert!(got[..] == data[3 << 20..]);
            drop(file);
            // Evicted again, so the copy's reads wait for the disk.
            uncached_file(&from, 4 << 20);
            let copied = timeout(Duration::from_millis(1), ringsteal_fs::copy(&from, &to))
                .await
                .expect("the clock jumped past a copy");
            assert_eq!(copied.unwrap(), 4 << 20);
            assert_eq!(start.elapsed(), Duration::ZERO);
        });
        assert!(std::fs::read(&to).unwrap() == data);
    });
}

#[test]
fn a_write_and_its_sync_hold_the_paused_clock() {
    let dir = TempDir::new("paused-write");
    watchdog("paused-write", move || {
        let path = dir.join("written");
        let rt = paused();
        rt.block_on(async {
            let start = Instant::now();
            let mut file = OpenOptions::new()
                .write(true)
                .create(true)
                .open(&path)
                .await
                .unwrap();
            let data = vec![9u8; 4 << 20];
            let written = timeout(Duration::from_millis(1), async {
                let (res, _) = file.write_all(data).await;
                res.unwrap();
                file.sync_all().await.unwrap();
            });
            written
                .await
                .expect("the clock jumped past a write or its sync");
            assert_eq!(start.elapsed(), Duration::ZERO);
        });
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 4 << 20);
    });
}

#[test]
fn a_read_of_a_silent_fifo_does_not_hold_the_paused_clock() {
    let dir = TempDir::new("paused-fifo");
    watchdog("paused-fifo", move || {
        let path = dir.join("fifo");
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string; mkfifo passes no other memory.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // A writer that writes one byte (a read-only open returns once the FIFO is
        // readable) and is kept open, so the second read waits rather than ending.
        let mut writer = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut writer, b"x").unwrap();
        let rt = paused();
        rt.block_on(async {
            let start = Instant::now();
            let mut fifo = File::open(&path).await.unwrap();
            let (n, first) = fifo.read(Vec::with_capacity(8)).await;
            assert_eq!((n.unwrap(), &first[..]), (1, &b"x"[..]));
            let read = timeout(Duration::from_secs(3600), fifo.read(Vec::with_capacity(8)));
            assert!(read.await.is_err(), "nobody writes: the timeout fires");
            assert_eq!(start.elapsed(), Duration::from_secs(3600));
            sleep(Duration::from_secs(1)).await;
        });
        drop(writer);
    });
}
