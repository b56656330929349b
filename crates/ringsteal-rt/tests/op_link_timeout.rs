//! Linked ops and deadlines: `op::copy_linked` submits a READ linked (`IOSQE_IO_LINK`) to a
//! WRITE of the same buffer, which the kernel runs back to back and skips after a short read;
//! `Op::with_timeout` links an `IORING_OP_LINK_TIMEOUT` behind an op, which then fails with
//! `ErrorKind::TimedOut` if it has not completed in time, and still gives its buffer back.
//!
//! Each behaviour runs on every shard of a one-shard and a two-shard runtime.

mod op_support;

use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use ringsteal_rt::op::{self, SharedFd};
use ringsteal_rt::RuntimeHandle;

use op_support::*;

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

/// A file with `contents`, opened read-write, in `dir`.
fn file_with(dir: &TempDir, name: &str, contents: &[u8]) -> (std::path::PathBuf, SharedFd) {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    let f = File::options().read(true).write(true).open(&path).unwrap();
    (path, SharedFd::new(f.into()))
}

/// Nothing left in flight on this shard after the test's ops (no op leaked a CQE).
fn assert_nothing_in_flight(shard: usize) {
    let s = &RuntimeHandle::current().stats().shards[shard];
    assert_eq!(s.ops_in_flight, 0, "shard {shard} still owes completions");
}

#[test]
fn copy_linked_copies_a_whole_chunk_with_one_linked_read_and_write() {
    for config in ALL_MODES {
        on_every_shard(config, |shard| async move {
            // Also with both requests forced into the kernel's worker pool.
            for force_async in [false, true] {
                let dir = TempDir::new("link-full");
                let data = pattern(8192);
                let (_, src) = file_with(&dir, "src", &data);
                let (dst_path, dst) = file_with(&dir, "dst", b"");
                let copy = op::copy_linked(&src, 1000, &dst, 50, Vec::with_capacity(4096), 4096);
                let copy = if force_async {
                    copy.force_async()
                } else {
                    copy
                };
                let (res, buf) = copy.await;
                assert_eq!(res.expect("copy_linked"), (4096, 4096), "{force_async}");
                assert_eq!(buf, &data[1000..5096], "the buffer holds what was read");
                let mut want = vec![0u8; 50];
                want.extend_from_slice(&data[1000..5096]);
                assert_eq!(std::fs::read(&dst_path).unwrap(), want);
                assert_nothing_in_flight(shard);
            }
        });
    }
}

#[test]
fn copy_linked_after_a_short_read_at_end_of_file_skips_the_write_and_returns_the_bytes_read() {
    for config in ALL_MODES {
        on_every_shard(config, |shard| async move {
            let dir = TempDir::new("link-short");
            let data = pattern(1000);
            let (_, src) = file_with(&dir, "src", &data);
            let (dst_path, dst) = file_with(&dir, "dst", b"");
            let (res, buf) =
                op::copy_linked(&src, 0, &dst, 0, Vec::with_capacity(4096), 4096).await;
            assert_eq!(
                res.expect("copy_linked"),
                (1000, 0),
                "read 1000, wrote nothing"
            );
            assert_eq!(buf, data, "the bytes read come back in the buffer");
            assert_eq!(
                std::fs::metadata(&dst_path).unwrap().len(),
                0,
                "the write ran"
            );
            assert_nothing_in_flight(shard);
        });
    }
}

#[test]
fn copy_linked_at_end_of_file_reads_and_writes_nothing() {
    for config in ALL_MODES {
        on_every_shard(config, |_| async move {
            let dir = TempDir::new("link-eof");
            let (_, src) = file_with(&dir, "src", b"abc");
            let (dst_path, dst) = file_with(&dir, "dst", b"keep");
            let (res, buf) = op::copy_linked(&src, 3, &dst, 0, Vec::with_capacity(64), 64).await;
            assert_eq!(res.expect("copy_linked"), (0, 0));
            assert!(buf.is_empty());
            assert_eq!(buf.capacity(), 64);
            assert_eq!(std::fs::read(&dst_path).unwrap(), b"keep");
        });
    }
}

#[test]
fn copy_linked_gives_the_buffer_back_when_the_read_fails() {
    for config in ALL_MODES {
        on_every_shard(config, |shard| async move {
            let dir = TempDir::new("link-rfail");
            let src_path = dir.join("src");
            std::fs::write(&src_path, b"data").unwrap();
            // Write-only: the read fails with EBADF, as std's read through such a file does.
            let src = File::options().write(true).open(&src_path).unwrap();
            let std_err = src.read_at(&mut [0u8; 4], 0).unwrap_err();
            let src = SharedFd::new(src.into());
            let (dst_path, dst) = file_with(&dir, "dst", b"keep");
            let (res, buf) = op::copy_linked(&src, 0, &dst, 0, vec![9u8; 3], 3).await;
            let err = res.expect_err("a read through a write-only descriptor");
            assert_eq!(err.kind(), std_err.kind());
            assert_eq!(err.raw_os_error(), std_err.raw_os_error());
            assert_eq!(buf, [9, 9, 9], "the buffer comes back untouched");
            assert_eq!(std::fs::read(&dst_path).unwrap(), b"keep", "the write ran");
            assert_nothing_in_flight(shard);
        });
    }
}

#[test]
fn copy_linked_reports_a_failed_write_and_gives_back_the_bytes_read() {
    for config in ALL_MODES {
        on_every_shard(config, |_| async move {
            let dir = TempDir::new("link-wfail");
            let (_, src) = file_with(&dir, "src", b"abcdef");
            let dst_path = dir.join("dst");
            std::fs::write(&dst_path, b"").unwrap();
            let dst = File::open(&dst_path).unwrap();
            let std_err = dst.write_at(b"abcd", 0).unwrap_err();
            let dst = SharedFd::new(dst.into());
            let (res, buf) = op::copy_linked(&src, 0, &dst, 0, Vec::with_capacity(4), 4).await;
            let err = res.expect_err("a write through a read-only descriptor");
            assert_eq!(err.kind(), std_err.kind());
            assert_eq!(err.raw_os_error(), std_err.raw_os_error());
            assert_eq!(buf, b"abcd");
        });
    }
}

#[test]
fn with_timeout_on_a_read_nobody_satisfies_fails_with_timed_out_and_gives_the_buffer_back() {
    for config in ALL_MODES {
        on_every_shard(config, |shard| async move {
            let dir = TempDir::new("timeout-idle");
            for (what, (rx, tx)) in [("pipe", pipe()), ("fifo", fifo(&dir, "f"))] {
                let rx = SharedFd::new(rx);
                let deadline = Duration::from_millis(30);
                let started = Instant::now();
                let (res, buf) = op::read_at(&rx, vec![1u8, 2, 3], u64::MAX)
                    .with_timeout(deadline)
                    .await;
                let took = started.elapsed();
                let err = res.expect_err("a read of an idle {what}");
                assert_eq!(err.kind(), ErrorKind::TimedOut, "{what}: {err}");
                assert!(took >= deadline, "{what}: timed out after {took:?}");
                assert_eq!(buf, [1, 2, 3], "{what}: the buffer comes back as it was");
                assert_nothing_in_flight(shard);
                // The timed-out read consumed nothing.
                write_fd(&tx, b"later");
                let (res, buf) = op::read_at(&rx, Vec::with_capacity(8), u64::MAX)
                    .with_timeout(OP_GUARD)
                    .await;
                assert_eq!(res.unwrap(), 5, "{what}");
                assert_eq!(buf, b"later");
            }
        });
    }
}

#[test]
fn with_timeout_on_a_read_that_completes_in_time_returns_the_data() {
    for config in ALL_MODES {
        on_every_shard(config, |shard| async move {
            // Data already there: the read completes at once.
            let (rx, tx) = pipe();
            let rx = SharedFd::new(rx);
            write_fd(&tx, b"ready");
            let (res, buf) = op::read_at(&rx, Vec::with_capacity(8), u64::MAX)
                .with_timeout(OP_GUARD)
                .await;
            assert_eq!(res.expect("read within the deadline"), 5);
            assert_eq!(buf, b"ready");

            // Data that arrives while the read waits, well before the deadline.
            let mut read = op::read_at(&rx, Vec::with_capacity(8), u64::MAX).with_timeout(OP_GUARD);
            submit(&mut read).await;
            let writer = std::thread::spawn(move || write_fd(&tx, b"soon"));
            let started = Instant::now();
            let (res, buf) = read.await;
            writer.join().unwrap();
            assert_eq!(res.expect("read within the deadline"), 4);
            assert_eq!(buf, b"soon");
            assert!(started.elapsed() < OP_GUARD);

            // A regular file.
            let dir = TempDir::new("timeout-file");
            let (_, file) = file_with(&dir, "f", b"file data");
            let (res, buf) = op::read_at(&file, Vec::with_capacity(64), 5)
                .with_timeout(OP_GUARD)
                .await;
            assert_eq!(res.unwrap(), 4);
            assert_eq!(buf, b"data");
            assert_nothing_in_flight(shard);
        });
    }
}

#[test]
fn with_timeout_bounds_a_linked_copy_whose_read_waits() {
    for config in ALL_MODES {
        on_every_shard(config, |shard| async move {
            let dir = TempDir::new("timeout-link");
            let (rx, _tx) = pipe();
            let rx = SharedFd::new(rx);
            let (dst_path, dst) = file_with(&dir, "dst", b"keep");
            let (res, buf) = op::copy_linked(&rx, u64::MAX, &dst, 0, Vec::with_capacity(16), 16)
                .with_timeout(Duration::from_millis(30))
                .await;
            let err = res.expect_err("a copy from an idle pipe");
            assert_eq!(err.kind(), ErrorKind::TimedOut, "{err}");
            assert_eq!(buf.capacity(), 16);
            assert_eq!(std::fs::read(&dst_path).unwrap(), b"keep", "the write ran");
            assert_nothing_in_flight(shard);
        });
    }
}

#[test]
fn with_timeout_on_a_linked_copy_that_completes_in_time_copies_the_chunk() {
    for config in ALL_MODES {
        on_every_shard(config, |shard| async move {
            let dir = TempDir::new("timeout-link-ok");
            let data = pattern(3000);
            let (_, src) = file_with(&dir, "src", &data);
            let (dst_path, dst) = file_with(&dir, "dst", b"");
            // A whole chunk: read, then (the timeout disarmed) the linked write.
            let (res, buf) = op::copy_linked(&src, 0, &dst, 0, Vec::with_capacity(2000), 2000)
                .with_timeout(OP_GUARD)
                .await;
            assert_eq!(res.expect("copy within the deadline"), (2000, 2000));
            assert_eq!(buf, &data[..2000]);
            // A short read at the end: the write is skipped, as without a deadline.
            let (res, buf) = op::copy_linked(&src, 2000, &dst, 2000, buf, 2000)
                .with_timeout(OP_GUARD)
                .await;
            assert_eq!(res.expect("short copy within the deadline"), (1000, 0));
            assert_eq!(&buf[..1000], &data[2000..]);
            assert_eq!(std::fs::read(&dst_path).unwrap(), &data[..2000]);
            assert_nothing_in_flight(shard);
        });
    }
}

#[test]
fn with_timeout_of_zero_times_out_a_read_that_would_wait_and_not_one_that_is_ready() {
    for config in ALL_MODES {
        on_every_shard(config, |shard| async move {
            let (rx, tx) = pipe();
            let rx = SharedFd::new(rx);
            let (res, buf) = op::read_at(&rx, Vec::with_capacity(8), u64::MAX)
                .with_timeout(Duration::ZERO)
                .await;
            assert_eq!(res.unwrap_err().kind(), ErrorKind::TimedOut);
            assert_eq!(buf.capacity(), 8);
            write_fd(&tx, b"now");
            let (res, buf) = op::read_at(&rx, buf, u64::MAX)
                .with_timeout(Duration::ZERO)
                .await;
            assert_eq!(res.expect("a read that completes at once"), 3);
            assert_eq!(buf, b"now");
            assert_nothing_in_flight(shard);
        });
    }
}

#[test]
fn a_timeout_added_after_the_first_poll_is_ignored() {
    for config in ALL_MODES {
        watchdog(&format!("{config:?}"), move || {
            config.build().block_on(async {
                let (rx, tx) = pipe();
                let rx = SharedFd::new(rx);
                let mut read = op::read_at(&rx, vec![0u8; 4], 0);
                assert!(poll_once(&mut read).await.is_pending());
                // Too late to link a timeout: the read runs without one and completes.
                let mut read = read.with_timeout(Duration::from_millis(1));
                assert!(poll_once(&mut read).await.is_pending());
                // Time for a timeout wrongly armed by that poll to fire (pacing only: the
                // read must still be waiting whatever this sleep's length).
                ringsteal_rt::time::sleep(Duration::from_millis(20)).await;
                write_fd(&tx, b"late");
                let (res, buf) = read.await;
                assert_eq!(res.unwrap(), 4);
                assert_eq!(&buf[..], b"late");
            });
        });
    }
}

#[test]
fn the_smallest_ring_still_takes_a_linked_copy_with_a_timeout() {
    // One SQ entry asked for: the ring gets at least the three slots the largest operation
    // links (read, write, link timeout), so it can submit every operation there is.
    let rt = ringsteal_rt::Runtime::builder()
        .shards(1)
        .ring_entries(1)
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = TempDir::new("link-small-ring");
        let data = pattern(4096);
        let (_, src) = file_with(&dir, "src", &data);
        let (dst_path, dst) = file_with(&dir, "dst", b"");
        let copy = op::copy_linked(&src, 0, &dst, 0, Vec::with_capacity(4096), 4096)
            .with_timeout(Duration::from_secs(10));
        let (res, _) = copy.await;
        assert_eq!(res.expect("copy_linked with a timeout"), (4096, 4096));
        assert_eq!(std::fs::read(&dst_path).unwrap(), data);
        op::nop()
            .with_timeout(Duration::from_secs(10))
            .await
            .expect("a nop with a timeout");
    });
}
