//! [`Child`]: a running (or exited, not yet waited for) child process, named by a pidfd.

use std::future::poll_fn;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::process::{ExitStatus, Output};

use ringsteal_rt::io::Lane;
use ringsteal_rt::op::{self, SharedFd};

use crate::pipe::{ChildStderr, ChildStdin, ChildStdout};
use crate::wait::{poll_pending_now, poll_reap, PendingWait};
use crate::{join3, orphans, pidfd};

/// A child process started by [`Command::spawn`](crate::Command::spawn).
///
/// The process is named by a pidfd, not a pid: waiting, `try_wait` and killing can never
/// reach another process that reused the pid. Dropping a `Child` does not wait for the
/// process (and, unless [`kill_on_drop`](crate::Command::kill_on_drop) was set, does not
/// kill it) but it is still reaped once it exits, so it never lingers as a zombie.
///
/// ```
/// use ringsteal_process::Command;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let mut child = Command::new("sh").args(["-c", "exit 3"]).spawn()?;
///     assert!(child.id().is_some());
///     let status = child.wait().await?;
///     assert_eq!(status.code(), Some(3));
///     assert_eq!(child.id(), None, "reaped: the pid is no longer ours");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct Child {
    /// The writing end of the child's stdin, if it was set up with `Stdio::piped()`.
    pub stdin: Option<ChildStdin>,
    /// The reading end of the child's stdout, if it was set up with `Stdio::piped()`.
    pub stdout: Option<ChildStdout>,
    /// The reading end of the child's stderr, if it was set up with `Stdio::piped()`.
    pub stderr: Option<ChildStderr>,
    pid: u32,
    pidfd: SharedFd,
    /// Known once the child has been reaped.
    status: Option<ExitStatus>,
    /// A wait in flight, kept across `wait()` calls (see `wait.rs`).
    pending: Option<PendingWait>,
    kill_on_drop: bool,
}

impl Child {
    pub(crate) fn new(
        pid: u32,
        pidfd: SharedFd,
        pipes: (Option<ChildStdin>, Option<ChildStdout>, Option<ChildStderr>),
        kill_on_drop: bool,
    ) -> Self {
        Self {
            stdin: pipes.0,
            stdout: pipes.1,
            stderr: pipes.2,
            pid,
            pidfd,
            status: None,
            pending: None,
            kill_on_drop,
        }
    }

    /// The process id, or `None` once the child has been reaped (the pid may then name
    /// another process).
    pub fn id(&self) -> Option<u32> {
        self.status.is_none().then_some(self.pid)
    }

    /// The child's pidfd (`pidfd_open(2)`), valid as long as this `Child`.
    pub fn pidfd(&self) -> BorrowedFd<'_> {
        // SAFETY: `self.pidfd` keeps the descriptor open while `self` is borrowed.
        unsafe { BorrowedFd::borrow_raw(self.pidfd.as_raw_fd()) }
    }

    /// Waits for the child to exit and reaps it; yields its status (at once if it is known).
    /// Closes the child's stdin first, so a child reading it is not left waiting for input.
    ///
    /// Cancel-safe: if the future is dropped, the wait stays in flight and the next call (or
    /// the reaping of a dropped `Child`) continues it; no exit status is lost. The next call
    /// may be on another shard or runtime than the first: the wait moves to where it is
    /// awaited.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        drop(self.stdin.take());
        if let Some(status) = self.status {
            return Ok(status);
        }
        let status = poll_fn(|cx| poll_reap(&mut self.pending, &self.pidfd, cx)).await?;
        self.status = Some(status);
        Ok(status)
    }

    /// The exit status if the child has exited (reaping it), `None` if it is still running.
    /// Never waits.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        // A wait in flight never reaps (see `wait.rs`): the child is reaped here or not yet.
        let found = match poll_pending_now(&mut self.pending, &self.pidfd) {
            Some(res) => res.map(Some),
            None => op::try_reap_pidfd(&self.pidfd),
        }?;
        self.status = found;
        Ok(found)
    }

    /// Sends `SIGKILL` to the child without waiting for it to exit (that, and reaping, is up to
    /// [`wait`](Self::wait), or to the drop). `Ok(())` if the child has already exited.
    pub fn start_kill(&mut self) -> io::Result<()> {
        self.signal(libc::SIGKILL)
    }

    /// Sends `signal` (e.g. `libc::SIGTERM`) to the child through its pidfd. `Ok(())` if the
    /// child has already exited.
    pub fn signal(&mut self, signal: i32) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        match pidfd::send_signal(&self.pidfd, signal) {
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(()),
            other => other,
        }
    }

    /// Kills the child (`SIGKILL`) and waits for it to exit.
    pub async fn kill(&mut self) -> io::Result<()> {
        self.start_kill()?;
        self.wait().await.map(drop)
    }

    /// Closes stdin, then collects stdout and stderr (where piped) while waiting for the
    /// child to exit.
    pub async fn wait_with_output(mut self) -> io::Result<Output> {
        drop(self.stdin.take());
        let (stdout, stderr) = (self.stdout.take(), self.stderr.take());
        let (out, err, status) = join3(
            read_all_of(stdout.as_ref().map(|p| p.reading())),
            read_all_of(stderr.as_ref().map(|p| p.reading())),
            self.wait(),
        )
        .await;
        Ok(Output {
            status: status?,
            stdout: out?,
            stderr: err?,
        })
    }
}

/// Everything a piped stream yields (bytes a dropped read kept first), or nothing if it was
/// not piped.
async fn read_all_of(pipe: Option<(&SharedFd, &Lane)>) -> io::Result<Vec<u8>> {
    match pipe {
        Some((fd, lane)) => {
            let (res, buf) = crate::pipe::read_to_end(fd, lane, Vec::new()).await;
            res.map(|_| buf)
        }
        None => Ok(Vec::new()),
    }
}

impl AsFd for Child {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.pidfd()
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.status.is_some() {
            return;
        }
        if self.kill_on_drop {
            let _ = pidfd::send_signal(&self.pidfd, libc::SIGKILL);
        }
        orphans::detach(self.pid, self.pidfd.clone(), self.pending.take());
    }
}
