//! Named pipes open as std opens them: a write-only open waits for a reader (io_uring's
//! non-blocking attempt would fail it with `ENXIO`), a read-only open waits for a writer (the
//! attempt would return at once, and the first read would then see end of stream), and what
//! the writer wrote arrives whole. Opens that ask for `O_NONBLOCK` keep the kernel's answer.
//! On each shard of every runtime configuration.

mod common;

use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Duration;

use common::*;
use ringsteal_fs::{File, OpenOptions};
use ringsteal_rt::io::{AsyncReadOwned, AsyncWriteOwned};

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that lives across the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Nothing can finish an open of a FIFO without its other end, so a short wait that runs out
/// shows the open is waiting (it is not what makes the test pass).
const STILL_WAITING: Duration = Duration::from_millis(30);

/// A bound for an open or read that must not wait at all: far above anything healthy on a
/// loaded machine, far below the hang guard, so a wrong wait fails with a clear message.
const OP_GUARD: Duration = Duration::from_secs(20);

#[test]
fn a_writer_waits_for_a_reader_and_the_reader_gets_every_byte() {
    on_every_shard("fifo writer first", |ctx| async move {
        let path = ctx.dir.join("w");
        mkfifo(&path);
        let mut options = OpenOptions::new();
        options.write(true);
        let open = options.open(&path);
        let mut open = std::pin::pin!(open);
        let early = ringsteal_rt::time::timeout(STILL_WAITING, open.as_mut()).await;
        assert!(
            early.is_err(),
            "opened (or failed) with no reader: {early:?}"
        );
        let reader = {
            let path = path.clone();
            std::thread::spawn(move || std::fs::read(path).unwrap())
        };
        let mut file = open.await.expect("the open waits for the reader");
        file.write_all(b"to the reader\n".to_vec()).await.0.unwrap();
        drop(file);
        assert_eq!(reader.join().unwrap(), b"to the reader\n");
    });
}

#[test]
fn a_reader_waits_for_a_writer_and_reads_what_it_wrote() {
    on_every_shard("fifo reader first", |ctx| async move {
        let path = ctx.dir.join("r");
        mkfifo(&path);
        let open = File::open(&path);
        let mut open = std::pin::pin!(open);
        let early = ringsteal_rt::time::timeout(STILL_WAITING, open.as_mut()).await;
        assert!(early.is_err(), "opened with no writer: {early:?}");
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut w = std::fs::OpenOptions::new().write(true).open(path).unwrap();
                w.write_all(b"from the writer\n").unwrap();
            })
        };
        let mut file = open.await.expect("the open waits for the writer");
        let (res, got) = file.read_to_end(Vec::new()).await;
        res.unwrap();
        writer.join().unwrap();
        assert_eq!(got, b"from the writer\n");
    });
}

/// True while thread `tid` of this process sleeps in the system call `nr`.
fn asleep_in(tid: i32, nr: libc::c_long) -> bool {
    let task = format!("/proc/self/task/{tid}");
    let stat = std::fs::read_to_string(format!("{task}/stat")).unwrap_or_default();
    let state = stat[stat.rfind(')').map_or(0, |i| i + 2)..].chars().next();
    let syscall = std::fs::read_to_string(format!("{task}/syscall")).unwrap_or_default();
    state == Some('S') && syscall.split_whitespace().next() == Some(&nr.to_string())
}

#[test]
fn a_reader_gets_what_a_writer_already_waiting_wrote_and_closed_at_once() {
    // `echo hi > fifo` started first: the writer waits in open(2) for a reader, and the
    // reader's open lets it go; it writes and closes before anything else the reader does.
    // The open must return and the bytes be read, as with std, not wait for a next writer.
    on_every_shard("fifo writer already waiting", |ctx| async move {
        let path = ctx.dir.join("e");
        mkfifo(&path);
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                // SAFETY: gettid takes nothing and cannot fail.
                tid_tx.send(unsafe { libc::gettid() }).unwrap();
                let mut w = std::fs::OpenOptions::new().write(true).open(path).unwrap();
                w.write_all(b"hi\n").unwrap();
            })
        };
        let tid = tid_rx.recv().unwrap();
        // The hang guard bounds this wait for the writer to be in its open(2).
        while !asleep_in(tid, libc::SYS_openat) {
            ringsteal_rt::yield_now().await;
        }
        let read = async {
            let mut file = File::open(&path).await?;
            let (res, got) = file.read_to_end(Vec::new()).await;
            res.map(|_| got)
        };
        let got = ringsteal_rt::time::timeout(OP_GUARD, read)
            .await
            .expect("the open (or the read) waited for another writer");
        assert_eq!(got.unwrap(), b"hi\n");
        writer.join().unwrap();
    });
}

/// True if the FIFO at `path` has no read end open anywhere: a write-only open that must not
/// wait is refused with `ENXIO` exactly then. (When it opens, the end it made is closed at
/// once: a writer that wrote nothing.)
fn no_reader_left(path: &Path) -> bool {
    match std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Ok(_) => false,
        Err(e) => {
            assert_eq!(e.raw_os_error(), Some(libc::ENXIO), "{e}");
            true
        }
    }
}

#[test]
fn a_reader_that_opens_again_and_again_gets_every_writers_bytes() {
    // `while true; do echo hi > fifo; done` on one side, a loop of reads of the FIFO on the
    // other: each writer waits in open(2) for a reader (or finds one waiting), writes and
    // closes. Every byte must arrive, and no open may wait for a writer that already came
    // (with a second, blocking open to wait for writers, this hung in 5 runs of 6).
    //
    // Each writer comes only once the reader has dropped its end: a writer that opened
    // between the reader's end of stream and its close would write into an end about to
    // close, and a FIFO drops what its last reader leaves unread (`cat` in a loop loses
    // lines so). The drop must have closed the end when it returns, as std's does, so a
    // writer told then meets the next reader, never the old one. On an SQPOLL ring the
    // kernel's poller thread lets go of a file a request used a moment after the request
    // completed (up to milliseconds here): there the end outlives the drop, and the writer
    // waits until the kernel has closed it.
    const WRITERS: usize = 20;
    on_every_shard("fifo reopened", |ctx| async move {
        let path = ctx.dir.join("again");
        mkfifo(&path);
        let (closed_tx, closed_rx) = std::sync::mpsc::channel::<()>();
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                for i in 0..WRITERS {
                    let mut w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                    w.write_all(format!("{i:02}\n").as_bytes()).unwrap();
                    drop(w);
                    if closed_rx.recv().is_err() {
                        return; // the reader failed
                    }
                }
            })
        };
        let mut got = Vec::new();
        while got.len() < WRITERS * 3 {
            let read = async {
                let mut file = File::open(&path).await?;
                let (res, bytes) = file.read_to_end(Vec::new()).await;
                res.map(|_| bytes)
            };
            let bytes = ringsteal_rt::time::timeout(OP_GUARD, read)
                .await
                .unwrap_or_else(|_| panic!("waited for a writer after {} bytes", got.len()))
                .unwrap();
            // The file was dropped at the end of `read`.
            if ctx.sqpoll {
                // The hang guard bounds this wait for the kernel's poller.
                while !no_reader_left(&path) {
                    ringsteal_rt::yield_now().await;
                }
            } else {
                assert!(
                    no_reader_left(&path),
                    "the dropped read end was still open after {} bytes",
                    got.len()
                );
            }
            got.extend_from_slice(&bytes);
            closed_tx.send(()).unwrap();
        }
        writer.join().unwrap();
        let expected: Vec<u8> = (0..WRITERS)
            .flat_map(|i| format!("{i:02}\n").into_bytes())
            .collect();
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&expected)
        );
    });
}

#[test]
fn an_o_path_open_of_a_fifo_opens_no_end_and_waits_for_none() {
    on_every_shard("fifo O_PATH", |ctx| async move {
        let path = ctx.dir.join("p");
        mkfifo(&path);
        for write in [false, true] {
            let mut options = OpenOptions::new();
            options.read(!write).write(write).custom_flags(libc::O_PATH);
            let opened = ringsteal_rt::time::timeout(OP_GUARD, options.open(&path)).await;
            let std = std::fs::OpenOptions::new()
                .read(!write)
                .write(write)
                .custom_flags(libc::O_PATH)
                .open(&path)
                .map(drop)
                .map_err(|e| e.raw_os_error());
            let ours = opened
                .expect("an O_PATH open waited for the FIFO's other end")
                .map(drop)
                .map_err(|e| e.raw_os_error());
            assert_eq!(ours, std, "write: {write}");
        }
    });
}

#[test]
fn opens_that_ask_for_o_nonblock_get_the_kernels_answer_at_once() {
    on_every_shard("fifo nonblocking", |ctx| async move {
        let path = ctx.dir.join("n");
        mkfifo(&path);
        let err = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
            .await
            .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENXIO), "as std's");
        let reader = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
            .await
            .expect("a non-blocking reader opens at once");
        // With a reader, a writer opens at once too, and std sees the same.
        let mut w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        w.write_all(b"x").unwrap();
        drop(w);
        drop(reader);
        let mut std_reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
            .unwrap();
        let mut rest = Vec::new();
        std_reader.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty());
    });
}
