//! `File` through the I/O traits (`AsyncReadOwned`, `AsyncWriteOwned`), reading and writing
//! at the file position, against what std and tokio do: `io::copy` into a file opened for
//! appending, from and into files the kernel will not splice, a write after a read that was
//! abandoned (on a file, and on a FIFO, which has no position), a read after a write that
//! was abandoned, and a `read_exact` dropped half-way.
//!
//! Every test runs on each shard of a one-shard and a two-shard runtime.

mod common;

use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use common::*;
use ringsteal_fs::{File, OpenOptions};
use ringsteal_rt::io::{AsyncReadOwned, AsyncWriteOwned};

#[test]
fn io_copy_into_a_file_opened_for_appending_appends_like_std() {
    on_every_shard("cursor-append-copy", |ctx| async move {
        // A regular file as the source: the case `copy` would splice, which the kernel
        // refuses into an O_APPEND file.
        let src = ctx.dir.join("src");
        std::fs::write(&src, b"new line\n").unwrap();
        let (ours, theirs) = (ctx.dir.join("log"), ctx.dir.join("log-std"));
        for log in [&ours, &theirs] {
            std::fs::write(log, b"old line\n").unwrap();
        }

        let mut s = std::fs::File::open(&src).unwrap();
        let mut d = std::fs::OpenOptions::new()
            .append(true)
            .open(&theirs)
            .unwrap();
        let n_std = std::io::copy(&mut s, &mut d).unwrap();

        let mut s = File::open(&src).await.unwrap();
        let mut d = OpenOptions::new().append(true).open(&ours).await.unwrap();
        let n = ringsteal_rt::io::copy(&mut s, &mut d).await.unwrap();
        assert_eq!(n, n_std);
        assert_eq!(
            std::fs::read(&ours).unwrap(),
            std::fs::read(&theirs).unwrap()
        );
        assert_eq!(std::fs::read(&ours).unwrap(), b"old line\nnew line\n");
    });
}

#[test]
fn io_copy_from_a_file_the_kernel_will_not_splice_from_copies_through_a_buffer() {
    on_every_shard("cursor-copy-proc", |ctx| async move {
        // A regular file by `fstat` whose splice the kernel refuses (`EINVAL`): what `copy`
        // would splice. (Its text changes as the process runs, so only its shape is checked.)
        let mut s = File::open("/proc/self/status").await.unwrap();
        let out = ctx.dir.join("status");
        let mut d = File::create(&out).await.unwrap();
        let n = ringsteal_rt::io::copy(&mut s, &mut d).await.unwrap();
        let copied = std::fs::read_to_string(&out).unwrap();
        assert_eq!(n, copied.len() as u64);
        assert!(copied.starts_with("Name:\t"), "{copied}");
        assert!(copied.contains(&format!("\nPid:\t{}\n", std::process::id())));
    });
}

#[test]
fn io_copy_into_a_file_the_kernel_will_not_splice_into_writes_what_its_pipe_held() {
    on_every_shard("cursor-copy-comm", |ctx| async move {
        // This thread's name, written through `/proc`: a regular file by `fstat`, which the
        // kernel refuses to splice into (`EINVAL`) after the copy has spliced the source's
        // bytes into its pipe. (The body stays on its shard's thread throughout.)
        // SAFETY: gettid takes nothing and cannot fail.
        let tid = unsafe { libc::gettid() };
        let comm = format!("/proc/self/task/{tid}/comm");
        let before = std::fs::read(&comm).unwrap();
        let src = ctx.dir.join("name");
        std::fs::write(&src, b"copied-name").unwrap();
        let mut s = File::open(&src).await.unwrap();
        let mut d = File::from_std(std::fs::OpenOptions::new().write(true).open(&comm).unwrap());
        let n = ringsteal_rt::io::copy(&mut s, &mut d).await;
        let after = std::fs::read(&comm).unwrap();
        std::fs::write(&comm, &before).unwrap();
        assert_eq!(n.unwrap(), 11);
        assert_eq!(after, b"copied-name\n");
    });
}

#[test]
fn a_read_after_an_abandoned_write_starts_where_the_write_ended_like_tokio() {
    on_every_shard("cursor-write-then-read", |ctx| async move {
        let path = ctx.dir.join("f");
        let f = open_empty(&path).await;
        // A write that outlives its future: the kernel goes on writing after the timeout.
        let late = ringsteal_rt::time::timeout(
            std::time::Duration::from_micros(100),
            (&f).write_all(vec![0xAB; 32 << 20]),
        )
        .await;
        // The read waits for it (tokio's and std's `File` run one at a time), so it starts
        // where the write ended, at the end of the file: had it run beside the write, it
        // would have read the write's bytes from position 0, and its move of the position
        // been lost to the write's.
        let (res, got) = (&f).read(Vec::with_capacity(16)).await;
        assert_eq!(res.unwrap(), 0, "the read ran beside the write: {got:02x?}");
        let pos = f.stream_position().await.unwrap();
        assert_eq!(pos, std::fs::metadata(&path).unwrap().len());
        if late.is_ok() {
            assert_eq!(pos, 32 << 20);
        }

        // A copy from the file's position (spliced: a regular file) waits for it the same way.
        let mut g = open_empty(&ctx.dir.join("g")).await;
        let _ = ringsteal_rt::time::timeout(
            std::time::Duration::from_micros(100),
            g.write_all(vec![0xCD; 32 << 20]),
        )
        .await;
        let out = ctx.dir.join("out");
        let mut to = File::create(&out).await.unwrap();
        let n = ringsteal_rt::io::copy(&mut g, &mut to).await.unwrap();
        assert_eq!(n, 0, "the copy ran beside the write");
        assert_eq!(std::fs::metadata(&out).unwrap().len(), 0);
    });
}

/// `path` opened for reading and writing, created or emptied.
async fn open_empty(path: &std::path::Path) -> File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .await
        .unwrap()
}

/// Polls `fut` once (its request is submitted), with a waker that does nothing.
fn poll_once<F: Future>(fut: Pin<&mut F>) -> Poll<F::Output> {
    struct Ignore;
    impl Wake for Ignore {
        fn wake(self: Arc<Self>) {}
    }
    fut.poll(&mut Context::from_waker(&Waker::from(Arc::new(Ignore))))
}

/// A read of up to `len` bytes at `f`'s position polled once and dropped, once it has
/// read: returns the read lane, which keeps what it read.
async fn drop_a_read_that_keeps(f: &File, len: usize) -> ringsteal_rt::io::Lane {
    let mut reader = f;
    poll_once_and_drop(reader.read(Vec::with_capacity(len)));
    let lane = f.splice_source().unwrap().lane().clone();
    drop(lane.acquire().await);
    assert!(lane.has_leftover(), "the abandoned read kept nothing");
    lane
}

/// Polls `fut` once, then drops it: a `select!` or `timeout` loser.
fn poll_once_and_drop<F: Future>(fut: F) {
    let _ = poll_once(pin!(fut));
}

#[test]
fn a_write_after_an_abandoned_read_goes_where_the_next_read_would_have_read_like_tokio() {
    on_every_shard("cursor-read-then-write", |ctx| async move {
        let path = ctx.dir.join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .await
            .unwrap();
        // The abandoned read holds the read lane until it completes; it reads "0123" (a read
        // of a cached file completes as it is submitted on ext4, xfs, btrfs and tmpfs), which
        // the next read would return. Where a filesystem hands buffered reads to a kernel
        // worker, the drop's cancel can win instead, reading nothing and moving no position:
        // then abandon another one, until one has kept its bytes.
        let lane = f.splice_source().unwrap().lane().clone();
        let mut tries = 0;
        loop {
            poll_once_and_drop(f.read(Vec::with_capacity(4)));
            drop(lane.acquire().await);
            if lane.has_leftover() {
                break;
            }
            tries += 1;
            assert!(tries < 1000, "no abandoned read ever kept its bytes");
        }

        // The write goes at the position the reader sees, 0 (tokio's File seeks back over
        // its unread read-ahead the same way), and the reads go on after it.
        let (res, _) = f.write_all(b"XY".to_vec()).await;
        res.unwrap();
        let (res, got) = f.read_to_end(Vec::new()).await;
        res.unwrap();
        assert_eq!(
            String::from_utf8_lossy(&std::fs::read(&path).unwrap()),
            "XY23456789"
        );
        assert_eq!(String::from_utf8_lossy(&got), "23456789");

        // `write_all_at` and `read_exact_at` at u64::MAX are at the same position.
        let (res, _) = f.write_all_at(b"ab".to_vec(), 0).await;
        res.unwrap();
        let f = File::open(&path).await.unwrap();
        poll_once_and_drop((&f).read(Vec::with_capacity(4)));
        let (res, got) = f.read_exact_at(Vec::with_capacity(3), u64::MAX).await;
        res.unwrap();
        assert_eq!(
            got, b"ab2",
            "read_exact_at(u64::MAX) skipped the kept bytes"
        );
    });
}

#[test]
fn a_write_to_a_fifo_neither_waits_for_its_reads_nor_drops_what_they_kept() {
    on_every_shard("cursor-fifo", |ctx| async move {
        // A FIFO opened for reading and writing: one descriptor, no shared position.
        let path = ctx.dir.join("fifo");
        let cpath = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(cpath.as_ptr(), 0o600) }, 0);
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .await
            .unwrap();

        // A read waits for data; a write does not wait for it, and feeds it.
        let mut reader = &f;
        let mut read = pin!(reader.read(Vec::with_capacity(8)));
        assert!(poll_once(read.as_mut()).is_pending());
        let (res, _) = (&f).write_all(b"hi".to_vec()).await;
        res.unwrap();
        let (res, got) = read.await;
        assert_eq!(&got[..res.unwrap()], b"hi");

        // An abandoned read's bytes stay for the next read, after a write as before it.
        let (res, _) = (&f).write_all(b"abc".to_vec()).await;
        res.unwrap();
        drop_a_read_that_keeps(&f, 8).await;
        let (res, _) = (&f).write_all(b"de".to_vec()).await;
        res.unwrap();
        let (res, got) = (&f).read_exact(Vec::with_capacity(5)).await;
        res.unwrap();
        assert_eq!(String::from_utf8_lossy(&got), "abcde");
    });
}

/// An eventfd's `lseek` succeeds and moves nothing: it has no shared position either, so as
/// on a FIFO a write neither waits for a read (which here waits for that very write) nor
/// throws away what an abandoned read kept.
#[test]
fn a_write_to_an_eventfd_neither_waits_for_its_reads_nor_drops_what_they_kept() {
    on_every_shard("cursor-eventfd", |_ctx| async move {
        // SAFETY: plain eventfd; a non-negative result is a new descriptor, ours alone.
        let fd = unsafe { libc::eventfd(5, libc::EFD_CLOEXEC) };
        assert!(fd >= 0);
        // SAFETY: as above.
        let owned = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        let f = File::from_std(std::fs::File::from(owned));

        // An abandoned read takes the counter (5) and keeps it.
        drop_a_read_that_keeps(&f, 8).await;
        let (res, _) = (&f).write_all(1u64.to_ne_bytes().to_vec()).await;
        res.unwrap();
        let (res, got) = (&f).read(Vec::with_capacity(8)).await;
        assert_eq!(res.unwrap(), 8);
        assert_eq!(
            u64::from_ne_bytes(got[..8].try_into().unwrap()),
            5,
            "thrown away"
        );

        // A read that waits (the counter is 1 until read, then 0) does not hold up the
        // write it waits for.
        let (res, _) = (&f).read(Vec::with_capacity(8)).await;
        assert_eq!(res.unwrap(), 8);
        let mut reader = &f;
        let mut read = pin!(reader.read(Vec::with_capacity(8)));
        assert!(poll_once(read.as_mut()).is_pending());
        let (res, _) = (&f).write_all(7u64.to_ne_bytes().to_vec()).await;
        res.unwrap();
        let (res, got) = read.await;
        assert_eq!(res.unwrap(), 8);
        assert_eq!(u64::from_ne_bytes(got[..8].try_into().unwrap()), 7);
    });
}

/// A waker that records that it was woken.
#[derive(Default)]
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

/// Bytes queued in a pipe (`FIONREAD` on its write end).
fn queued(tx: &std::fs::File) -> i32 {
    use std::os::fd::AsRawFd;
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int.
    let rc = unsafe { libc::ioctl(tx.as_raw_fd(), libc::FIONREAD, &mut n) };
    assert_eq!(rc, 0);
    n
}

#[test]
fn a_read_exact_dropped_half_way_gives_every_byte_it_took_to_the_next_read() {
    use std::io::Write;
    on_every_shard("cursor-read-exact-drop", |_ctx| async move {
        // A pipe returns short reads: the read_exact takes "abc" in its first part and waits
        // in its second for the rest.
        let (rx, mut tx) = pipe();
        let mut f = File::from_std(rx);
        tx.write_all(b"abc").unwrap();
        {
            let mut read_exact = pin!(f.read_exact(Vec::with_capacity(6)));
            // The first poll submits the first part; its completion wakes the task (the
            // waker's flag); the second poll takes "abc" and submits the second part.
            let woken = Arc::new(Flag::default());
            let waker = Waker::from(woken.clone());
            let mut cx = Context::from_waker(&waker);
            assert!(read_exact.as_mut().poll(&mut cx).is_pending());
            while !woken.0.load(Ordering::Acquire) {
                ringsteal_rt::yield_now().await;
            }
            assert!(read_exact.as_mut().poll(&mut cx).is_pending());
            assert_eq!(queued(&tx), 0, "the first part took the pipe's bytes");
        }
        tx.write_all(b"def").unwrap();
        drop(tx);
        let (res, got) = f.read_to_end(Vec::new()).await;
        res.unwrap();
        assert_eq!(String::from_utf8_lossy(&got), "abcdef");
    });
}

/// `set_len` after a read that was dropped once it had read: the bytes it kept are given
/// back first, as tokio's `set_len` discards its read-ahead, so the next read sees the file
/// as `set_len` left it (before, it returned the kept bytes, cut off from the file; a review
/// found it).
#[test]
fn set_len_gives_back_what_a_dropped_read_kept() {
    on_every_shard("cursor-set-len", |ctx| async move {
        let path = ctx.dir.join("f");
        std::fs::write(&path, b"abcdefgh").unwrap();
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .await
            .unwrap();
        let lane = drop_a_read_that_keeps(&f, 4).await;
        f.set_len(2).await.unwrap();
        assert!(!lane.has_leftover(), "the kept bytes are given back");
        // The position was moved back over them: the next read starts at 0 and finds what
        // set_len left.
        let (res, got) = (&f).read(Vec::with_capacity(8)).await;
        assert_eq!(&got[..res.unwrap()], b"ab");
        assert_eq!(std::fs::read(&path).unwrap(), b"ab");
    });
}
