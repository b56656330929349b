//! `logger FILE [LINES]`: many tasks log lines, one task writes them to FILE in batches, one
//! vectored write (`writev`) per batch.
//!
//! Shows batching that needs no timer: a line goes into a queue and wakes the writer task;
//! while the writer's `writev` is in flight, more lines pile up, and the next `writev` takes
//! them all, each line its own buffer in the vector (up to 1024, the kernel's `IOV_MAX`).
//! The busier the loggers, the bigger the batches and the fewer the system calls. The queue
//! is a mutex and a waker, the whole of a wake-up primitive.
//!
//! Try:
//!
//! ```text
//! cargo run --release --example logger -- /tmp/log.txt
//! cargo run --release --example logger -- /tmp/log.txt 1000000 && wc -l /tmp/log.txt
//! ```

use std::future::poll_fn;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Instant;

use ringsteal::fs::File;
use ringsteal::io::AsyncWriteOwned;
use ringsteal_examples::cli;

const USAGE: &str = "logger FILE [LINES]    (LINES defaults to 100000, logged by 8 tasks)";
const TASKS: usize = 8;
/// The most buffers one `writev` may carry (Linux's `IOV_MAX`).
const IOV_MAX: usize = 1024;

#[ringsteal::main]
async fn main() {
    let args = cli::args(USAGE, 2);
    let path = cli::required(&args, 0, "the FILE to log to", USAGE);
    let lines: usize = cli::arg_or(&args, 1, 100_000, USAGE);
    let mut file = File::create(path)
        .await
        .unwrap_or_else(|e| cli::fail(USAGE, format_args!("cannot create {path}: {e}")));

    let log = Arc::new(Log::default());
    let start = Instant::now();
    let loggers: Vec<_> = (0..TASKS)
        .map(|task| {
            let log = log.clone();
            ringsteal::spawn(async move {
                for i in (task..lines).step_by(TASKS) {
                    let shard = ringsteal::current_shard().unwrap_or(0);
                    log.line(format!("task {task} line {i} on shard {shard}\n"));
                    if i % 16 == 0 {
                        ringsteal::yield_now().await; // let the others (and the writer) in
                    }
                }
            })
        })
        .collect();

    let writer = {
        let log = log.clone();
        ringsteal::spawn(async move {
            let (mut writes, mut written, mut largest) = (0u64, 0usize, 0usize);
            while let Some(batch) = log.next_batch().await {
                let n = batch.len();
                // One request for the whole batch: each line is one buffer of the vector.
                let (res, _lines) = file.write_all_vectored(batch).await;
                res?;
                writes += 1;
                written += n;
                largest = largest.max(n);
            }
            file.sync_data().await?;
            Ok::<_, std::io::Error>((writes, written, largest))
        })
    };

    for logger in loggers {
        if let Err(e) = logger.await {
            cli::fail(USAGE, e);
        }
    }
    log.close();
    let (writes, written, largest) = match writer.await {
        Ok(Ok(counts)) => counts,
        Ok(Err(e)) => cli::fail(USAGE, format_args!("writing {path}: {e}")),
        Err(e) => cli::fail(USAGE, e),
    };
    println!(
        "{written} lines from {TASKS} tasks in {:.1?}: {writes} writev calls, {:.1} lines per call on average, {largest} at most",
        start.elapsed(),
        written as f64 / writes.max(1) as f64
    );
}

/// The queue between the loggers and the writer.
#[derive(Default)]
struct Log {
    queue: Mutex<Queue>,
}

#[derive(Default)]
struct Queue {
    lines: Vec<Vec<u8>>,
    /// The writer, when it waits for lines.
    writer: Option<Waker>,
    closed: bool,
}

impl Log {
    /// Queues a line and wakes the writer if it waits.
    fn line(&self, line: String) {
        let mut queue = self.queue.lock().expect("no panics while locked");
        queue.lines.push(line.into_bytes());
        let writer = queue.writer.take();
        drop(queue);
        if let Some(writer) = writer {
            writer.wake();
        }
    }

    /// No more lines will come: the writer ends once it has written what is queued.
    fn close(&self) {
        let mut queue = self.queue.lock().expect("no panics while locked");
        queue.closed = true;
        let writer = queue.writer.take();
        drop(queue);
        if let Some(writer) = writer {
            writer.wake();
        }
    }

    /// Everything queued (at most `IOV_MAX` lines), waiting until there is something;
    /// `None` once closed and empty.
    async fn next_batch(&self) -> Option<Vec<Vec<u8>>> {
        poll_fn(|cx| {
            let mut queue = self.queue.lock().expect("no panics while locked");
            if !queue.lines.is_empty() {
                let rest = queue.lines.len().saturating_sub(IOV_MAX);
                let batch = if rest == 0 {
                    std::mem::take(&mut queue.lines)
                } else {
                    // The oldest IOV_MAX lines; the rest stay queued, in order.
                    let newer = queue.lines.split_off(IOV_MAX);
                    std::mem::replace(&mut queue.lines, newer)
                };
                return Poll::Ready(Some(batch));
            }
            if queue.closed {
                return Poll::Ready(None);
            }
            queue.writer = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }
}
