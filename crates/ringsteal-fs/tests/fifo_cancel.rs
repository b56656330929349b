//! A FIFO open dropped while it waits for the other end (a `timeout` around `File::open`)
//! lets its blocking-pool thread go at once (a writer's; a reader's waits with a poll and
//! holds no thread): before, the thread stayed in `open(2)` until some process opened the
//! other end (a review found it), holding up the runtime's shutdown as long. Its own
//! binary: it counts the process's threads waiting in a FIFO open, which another test's
//! FIFOs would add to.

mod common;

use std::future::{poll_fn, Future};
use std::path::Path;
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use common::*;
use ringsteal_fs::OpenOptions;

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that lives across the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Threads of this process asleep in a FIFO open, waiting for its other end (the kernel's
/// `wait_for_partner`).
fn threads_waiting_for_a_fifo_partner() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("wchan")).ok())
        .filter(|w| w.trim() == "wait_for_partner")
        .count()
}

/// The two tests count the process's threads waiting in a FIFO open: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Descriptors of this process open on `path`.
fn open_on(path: &Path) -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|t| t == path)
        .count()
}

#[test]
fn a_dropped_fifo_open_lets_its_blocking_thread_go() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    for config in EVERY_MODE {
        watchdog(&format!("fifo cancel {config:?}"), move || {
            let rt = config.build();
            let dir = TempDir::new("fifo-cancel");
            let path = dir.join("writer");
            mkfifo(&path);
            rt.block_on(async {
                let mut options = OpenOptions::new();
                options.write(true);
                let mut open = pin!(options.open(&path));
                // Polled until its blocking open waits in the kernel (nothing opens the
                // other end, so it cannot finish), then dropped.
                while threads_waiting_for_a_fifo_partner() == 0 {
                    let polled = poll_fn(|cx| Poll::Ready(open.as_mut().poll(cx))).await;
                    assert!(polled.is_pending(), "writer: opened alone: {polled:?}");
                    ringsteal_rt::time::sleep(Duration::from_millis(1)).await;
                }
            });
            // The open's future is gone with the block_on: its thread must leave the open
            // now (the watchdog fails the test if it never does).
            while threads_waiting_for_a_fifo_partner() > 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
            drop(rt);
        });
    }
}

#[test]
fn a_dropped_fifo_reader_open_holds_no_thread_and_lets_its_end_go() {
    // A reader's open waits with a poll of its own early end, not a thread: dropped, its
    // cancel ends the poll and the end is closed; nothing waits in open(2) meanwhile.
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    for config in EVERY_MODE {
        watchdog(&format!("fifo reader cancel {config:?}"), move || {
            let rt = config.build();
            let dir = TempDir::new("fifo-reader-cancel");
            let path = dir.join("reader");
            mkfifo(&path);
            rt.block_on(async {
                let mut options = OpenOptions::new();
                options.read(true);
                // Boxed: dropped below, the future itself goes (a `pin!` would stay).
                let mut open = Box::pin(options.open(&path));
                while open_on(&path) == 0 {
                    let polled = poll_fn(|cx| Poll::Ready(open.as_mut().poll(cx))).await;
                    assert!(polled.is_pending(), "reader: opened alone: {polled:?}");
                    ringsteal_rt::yield_now().await;
                }
                assert_eq!(threads_waiting_for_a_fifo_partner(), 0);
                drop(open);
                // The cancelled poll holds the end until the ring reaps its completion.
                while open_on(&path) > 0 {
                    ringsteal_rt::yield_now().await;
                }
            });
            drop(rt);
        });
    }
}
