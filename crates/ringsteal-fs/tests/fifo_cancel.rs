//! A FIFO open dropped while it waits for the other end (a `timeout` around `File::open`)
//! lets its blocking-pool thread go at once, for a reader and for a writer: before, the
//! thread stayed in `open(2)` until some process opened the other end (a review found it),
//! holding up the runtime's shutdown as long. Its own binary: it counts the process's
//! threads waiting in a FIFO open, which another test's FIFOs would add to.

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

#[test]
fn a_dropped_fifo_open_lets_its_blocking_thread_go() {
    for config in EVERY_MODE {
        watchdog(&format!("fifo cancel {config:?}"), move || {
            let rt = config.build();
            let dir = TempDir::new("fifo-cancel");
            for (name, write) in [("reader", false), ("writer", true)] {
                let path = dir.join(name);
                mkfifo(&path);
                rt.block_on(async {
                    let mut options = OpenOptions::new();
                    options.read(!write).write(write);
                    let mut open = pin!(options.open(&path));
                    // Polled until its blocking open waits in the kernel (nothing opens the
                    // other end, so it cannot finish), then dropped.
                    while threads_waiting_for_a_fifo_partner() == 0 {
                        let polled = poll_fn(|cx| Poll::Ready(open.as_mut().poll(cx))).await;
                        assert!(polled.is_pending(), "{name}: opened alone: {polled:?}");
                        ringsteal_rt::time::sleep(Duration::from_millis(1)).await;
                    }
                });
                // The open's future is gone with the block_on: its thread must leave the
                // open now (the watchdog fails the test if it never does).
                while threads_waiting_for_a_fifo_partner() > 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            drop(rt);
        });
    }
}
