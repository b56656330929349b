//! No call leaks a file descriptor: opens whose futures are dropped after the kernel opened
//! the file, opens dropped mid-flight, an open blocked on a FIFO and cancelled, every failing
//! and every succeeding fs call, files dropped without `close`, `close` with an op in flight
//! (it waits for the op),
//! and the runtime itself once dropped. Descriptors are counted in `/proc/self/fd`.
//!
//! This binary holds a single test, so that no other test opens or closes descriptors while
//! it counts.

mod common;

use std::future::Future;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::pin::Pin;
use std::task::Poll;

use ringsteal_fs::{File, OpenOptions};
use ringsteal_rt::op;
use ringsteal_rt::{Runtime, RuntimeHandle};

use common::*;

fn open_fds() -> usize {
    // The directory stream's own descriptor is counted too; it is the same in every count.
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Polls `fut` once.
async fn poll_once<F: Future>(fut: Pin<&mut F>) -> Poll<F::Output> {
    let mut fut = Some(fut);
    std::future::poll_fn(|cx| Poll::Ready(fut.take().unwrap().poll(cx))).await
}

/// Yields until every shard has reaped all it owes.
async fn settle(handle: &RuntimeHandle) {
    while handle.stats().shards.iter().any(|s| s.ops_in_flight > 0) {
        ringsteal_rt::yield_now().await;
    }
}

/// Yields until this shard has completed more than `before` ops.
async fn until_completed(handle: &RuntimeHandle, shard: usize, before: u64) {
    while handle.stats().shards[shard].ops_completed <= before {
        ringsteal_rt::yield_now().await;
    }
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn no_call_leaks_a_descriptor() {
    watchdog("descriptor leaks", || {
        for shards in [1, 2] {
            let dir = TempDir::new("fd-leaks");
            let before_runtime = open_fds();
            let rt = Runtime::builder().shards(shards).build().unwrap();
            let handle = rt.handle();
            let baseline = open_fds();
            rt.block_on(phases(dir.path().to_path_buf(), handle, baseline));
            drop(rt);
            assert_eq!(
                open_fds(),
                before_runtime,
                "{shards} shards: the runtime left descriptors open after it was dropped"
            );
        }
    });
}

async fn phases(dir: std::path::PathBuf, handle: RuntimeHandle, baseline: usize) {
    let file = dir.join("file");
    std::fs::write(&file, b"contents").unwrap();
    let check = |phase: &str| {
        assert_eq!(open_fds(), baseline, "{phase}: descriptors leaked");
    };

    // Opens whose futures are dropped after the kernel opened the file (the completion was
    // reaped, the future never saw it).
    for _ in 0..20 {
        let before = handle.stats().shards[0].ops_completed;
        let mut open = std::pin::pin!(File::open(&file));
        assert!(poll_once(open.as_mut()).await.is_pending());
        until_completed(&handle, 0, before).await;
        let before = handle.stats().shards[0].ops_completed;
        let c = std::ffi::CString::new(file.as_os_str().as_bytes()).unwrap();
        let mut raw = std::pin::pin!(op::openat(None, c, libc::O_RDONLY, 0));
        assert!(poll_once(raw.as_mut()).await.is_pending());
        until_completed(&handle, 0, before).await;
    }
    check("opens dropped after the kernel opened the file");

    // Opens dropped at once, racing their cancel with the kernel's open.
    for _ in 0..200 {
        let mut open = std::pin::pin!(File::open(&file));
        let _ = poll_once(open.as_mut()).await;
    }
    settle(&handle).await;
    check("opens dropped mid-flight");

    // An open that blocks in the kernel (a FIFO with no writer), dropped: cancelled.
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    for _ in 0..3 {
        let mut open = std::pin::pin!(File::open(&fifo));
        assert!(poll_once(open.as_mut()).await.is_pending());
        ringsteal_rt::yield_now().await;
    }
    settle(&handle).await;
    check("FIFO opens cancelled while blocked");

    // Failing calls.
    let missing = dir.join("missing");
    let nul = dir.join("nul\0byte");
    for path in [&missing, &nul, &dir] {
        let _ = File::open(path).await.map(drop);
        let _ = File::create(path).await.map(drop);
        let _ = ringsteal_fs::read(path).await;
        let _ = ringsteal_fs::read_to_string(path).await;
        let _ = ringsteal_fs::write(path, b"x").await;
        let _ = ringsteal_fs::copy(path, dir.join("copy-dst")).await;
        let _ = ringsteal_fs::metadata(path).await;
        let _ = ringsteal_fs::read_dir(path).await.map(drop);
        let _ = ringsteal_fs::canonicalize(path).await;
        let _ = ringsteal_fs::remove_file(path).await;
    }
    let _ = OpenOptions::new()
        .read(true)
        .truncate(true)
        .open(&file)
        .await;
    let invalid = dir.join("invalid-utf8");
    std::fs::write(&invalid, b"\xff").unwrap();
    assert!(ringsteal_fs::read_to_string(&invalid).await.is_err());
    let ro = File::open(&file).await.unwrap();
    let (res, _) = ro.write_at(b"x".to_vec(), 0).await;
    assert!(res.is_err());
    drop(ro);
    settle(&handle).await;
    check("failing calls");

    // Succeeding calls, files closed and files dropped.
    for i in 0..10 {
        let f = dir.join(format!("f{i}"));
        ringsteal_fs::write(&f, b"data").await.unwrap();
        ringsteal_fs::copy(&f, dir.join(format!("c{i}")))
            .await
            .unwrap();
        assert_eq!(ringsteal_fs::read(&f).await.unwrap(), b"data");
        ringsteal_fs::metadata(&f).await.unwrap();
        ringsteal_fs::canonicalize(&f).await.unwrap();
        let mut entries = ringsteal_fs::read_dir(&dir).await.unwrap();
        while entries.next_entry().await.unwrap().is_some() {}
        drop(entries);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&f)
            .await
            .unwrap();
        file.set_len(2).await.unwrap();
        file.sync_all().await.unwrap();
        if i % 2 == 0 {
            file.close().await.unwrap();
        } else {
            drop(file);
        }
    }
    settle(&handle).await;
    check("succeeding calls");

    // close() while a read is in flight: it waits for the read, then closes.
    let (rx, mut tx) = pipe();
    let f = File::from_std(rx);
    let mut read = std::pin::pin!(f.read_at(Vec::with_capacity(8), u64::MAX));
    assert!(poll_once(read.as_mut()).await.is_pending());
    let mut closing = std::pin::pin!(f.close());
    assert!(
        poll_once(closing.as_mut()).await.is_pending(),
        "close waits for the read"
    );
    std::io::Write::write_all(&mut tx, b"x").unwrap();
    let (res, _) = read.await;
    assert_eq!(res.unwrap(), 1);
    closing.await.unwrap();
    drop(tx);
    settle(&handle).await;
    check("close with a read in flight");
}
