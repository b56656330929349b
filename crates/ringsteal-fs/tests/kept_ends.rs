//! A file's read lane keeps a dropped read's bytes but not the end of file it met: a file
//! goes on after its end (it grows, it is seeked, a FIFO's next writer comes), so the next
//! read, or a copy out of the file, asks the kernel again. And a copy out of a file into a
//! buffering writer flushes only when its read really waits, so the writer still batches.

mod common;

use std::future::Future;
use std::io::Write;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Wake, Waker};

use common::*;
use ringsteal_fs::{File, OpenOptions};
use ringsteal_rt::io::{AsyncReadOwned, AsyncWriteOwned, BufWriter};

/// Polls `fut` once and drops it: a read abandoned as a `select!` would.
fn poll_once_and_drop<F: Future>(fut: F) {
    struct Ignore;
    impl Wake for Ignore {
        fn wake(self: Arc<Self>) {}
    }
    let waker = Waker::from(Arc::new(Ignore));
    let _ = pin!(fut).poll(&mut Context::from_waker(&waker));
}

/// Drops reads of `f` (at its end) until one of them has completed before its drop: the
/// lane then holds whatever such a read keeps. The hang guard bounds the loop.
async fn drop_reads_at_the_end(f: &File) {
    let lane = f
        .splice_source()
        .expect("a file has a descriptor")
        .lane()
        .clone();
    let before = ops_completed();
    let mut reader = f;
    loop {
        poll_once_and_drop(reader.read(Vec::with_capacity(4)));
        // The lane is free once the dropped read's completion (or its cancel's) is in.
        drop(lane.acquire().await);
        if ops_completed() > before {
            return;
        }
    }
}

/// The completed ops of the current runtime, all shards.
fn ops_completed() -> u64 {
    ringsteal_rt::RuntimeHandle::current()
        .stats()
        .total()
        .ops_completed
}

#[test]
fn a_copy_after_a_rewind_or_growth_copies_what_a_dropped_read_at_the_end_did_not_see() {
    on_every_shard("kept end, file", |ctx| async move {
        let src = ctx.dir.join("src");
        std::fs::write(&src, b"hello world").unwrap();
        let mut f = File::open(&src).await.unwrap();
        let (res, _) = f.read_to_end(Vec::new()).await;
        assert_eq!(res.unwrap(), 11);
        drop_reads_at_the_end(&f).await;
        // Grown behind the reader's back: a read returns the new bytes.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&src)
            .unwrap()
            .write_all(b"!")
            .unwrap();
        let (res, buf) = f.read(Vec::with_capacity(8)).await;
        assert_eq!((res.unwrap(), &buf[..]), (1, &b"!"[..]));
        drop_reads_at_the_end(&f).await;
        // Rewound: a copy (spliced, file to file) takes the whole file.
        f.rewind().await.unwrap();
        let dst = ctx.dir.join("dst");
        let mut out = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&dst)
            .await
            .unwrap();
        let n = ringsteal_rt::io::copy(&mut f, &mut out).await.unwrap();
        assert_eq!(n, 12);
        assert_eq!(std::fs::read(&dst).unwrap(), b"hello world!");
    });
}

#[test]
fn a_fifos_next_writer_is_read_after_a_dropped_read_met_the_end() {
    on_every_shard("kept end, fifo", |ctx| async move {
        let path = ctx.dir.join("fifo");
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a NUL-terminated path that lives across the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let first = {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut w = std::fs::OpenOptions::new().write(true).open(path).unwrap();
                w.write_all(b"a").unwrap();
            })
        };
        let mut f = File::open(&path).await.unwrap();
        first.join().unwrap();
        let (res, buf) = f.read(Vec::with_capacity(8)).await;
        assert_eq!((res.unwrap(), &buf[..]), (1, &b"a"[..]));
        // No writer now: dropped reads meet the end.
        drop_reads_at_the_end(&f).await;
        let mut next = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        next.write_all(b"b").unwrap();
        let (res, buf) = f.read(Vec::with_capacity(8)).await;
        assert_eq!(
            (res.unwrap(), &buf[..]),
            (1, &b"b"[..]),
            "the end a dropped read met was served though the next writer's byte waits"
        );
    });
}

/// Counts the writes a `BufWriter` passes on.
struct Counting(Arc<AtomicUsize>);

impl AsyncWriteOwned for Counting {
    async fn write<B: ringsteal_rt::buf::IoBuf>(&mut self, buf: B) -> (std::io::Result<usize>, B) {
        self.0.fetch_add(1, SeqCst);
        (Ok(buf.bytes_init()), buf)
    }

    async fn shutdown(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_copy_from_a_file_into_a_large_buf_writer_still_batches() {
    on_every_shard("copy batches", |ctx| async move {
        let src = ctx.dir.join("big");
        std::fs::write(&src, vec![5u8; 8 << 20]).unwrap();
        let mut f = File::open(&src).await.unwrap();
        let writes = Arc::new(AtomicUsize::new(0));
        let mut w = BufWriter::with_capacity(4 << 20, Counting(writes.clone()));
        let n = ringsteal_rt::io::copy(&mut f, &mut w).await.unwrap();
        assert_eq!(n, 8 << 20);
        // Two full buffers; a flush at every one of the 128 reads was the fault. A read
        // slower than one turn of the shard (a loaded machine) may still flush once in a
        // while. On an SQPOLL ring the poller takes each read on its own time, later than
        // one turn: there the copy flushes at every read, as tokio's does with its `File`
        // (whose every read waits for its blocking pool).
        let writes = writes.load(SeqCst);
        if !ctx.sqpoll {
            assert!(writes <= 32, "{writes} writes for two 4 MiB buffers");
        }
    });
}
