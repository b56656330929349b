//! # ringsteal-process
//!
//! Child processes for the [ringsteal](https://docs.rs/ringsteal) runtime: a [`Command`] like
//! std's, a [`Child`] waited for through its pidfd, and the child's pipes read and written
//! with owned buffers on io_uring.
//!
//! * **Waiting** is one `IORING_OP_WAITID` on the child's pidfd (Linux 6.7) that waits for
//!   the exit and leaves the child to be reaped (`WNOWAIT`); older kernels poll the pidfd
//!   (`POLL_ADD`). Either way the child is then reaped with `waitid(P_PIDFD, WNOHANG)` where
//!   the wait is polled. No `SIGCHLD` handler, no thread per child, and the pid is never used
//!   after spawn, so nothing can reach a process that reused it.
//! * **No zombies**: a dropped `Child` is still reaped when it exits (at once if it has
//!   exited; otherwise by one process-wide reaper thread, started on demand, that waits on
//!   every such child's pidfd).
//! * **Errors** are std's: spawning is std's, and a child's pipe that the child closed gives
//!   `BrokenPipe` to a writer.
//! * **The process's own** standard streams go through the same code: [`stdio`]
//!   (`ringsteal::io::{stdin, stdout, stderr}`).
//!
//! ```
//! use ringsteal_process::{Command, Stdio};
//!
//! let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
//! rt.block_on(async {
//!     // Many children at once, each waited for on the shard its task runs on.
//!     let waits: Vec<_> = (0..4)
//!         .map(|i| {
//!             ringsteal_rt::spawn(async move {
//!                 Command::new("sh").args(["-c", &format!("exit {i}")]).status().await
//!             })
//!         })
//!         .collect();
//!     for (i, w) in waits.into_iter().enumerate() {
//!         assert_eq!(w.await.unwrap()?.code(), Some(i as i32));
//!     }
//!
//!     // Pipes: write stdin, read stdout.
//!     let mut child = Command::new("tr").arg("a-z").arg("A-Z")
//!         .stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
//!     let stdin = child.stdin.take().unwrap();
//!     let (res, _) = stdin.write_all(&b"shout"[..]).await;
//!     res?;
//!     drop(stdin);
//!     let (res, out) = child.stdout.take().unwrap().read_to_end(Vec::new()).await;
//!     res?;
//!     assert_eq!(out, b"SHOUT");
//!     assert!(child.wait().await?.success());
//!     Ok::<_, std::io::Error>(())
//! })
//! .unwrap();
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]

mod child;
mod command;
mod orphans;
mod pidfd;
mod pipe;
mod pipe_io;
mod sigpipe;
pub mod stdio;
mod wait;

pub use child::Child;
pub use command::Command;
#[doc(hidden)]
pub use orphans::{orphan_reaper_waits_for, orphans_watched, WATCHED_MAX as ORPHANS_WATCHED_MAX};
pub use pipe::{ChildStderr, ChildStdin, ChildStdout, PipeBusy};
pub use std::process::{ExitStatus, Output, Stdio};

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::Poll;

/// Runs three futures concurrently in one task; yields their outputs once all are done.
async fn join3<A: Future, B: Future, C: Future>(
    a: A,
    b: B,
    c: C,
) -> (A::Output, B::Output, C::Output) {
    let (mut a, mut b, mut c) = (pin!(a), pin!(b), pin!(c));
    let (mut ra, mut rb, mut rc) = (None, None, None);
    poll_fn(|cx| {
        if ra.is_none() {
            if let Poll::Ready(v) = a.as_mut().poll(cx) {
                ra = Some(v);
            }
        }
        if rb.is_none() {
            if let Poll::Ready(v) = b.as_mut().poll(cx) {
                rb = Some(v);
            }
        }
        if rc.is_none() {
            if let Poll::Ready(v) = c.as_mut().poll(cx) {
                rc = Some(v);
            }
        }
        match (ra.take(), rb.take(), rc.take()) {
            (Some(a), Some(b), Some(c)) => Poll::Ready((a, b, c)),
            (a, b, c) => {
                (ra, rb, rc) = (a, b, c);
                Poll::Pending
            }
        }
    })
    .await
}
