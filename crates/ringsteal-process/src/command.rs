//! [`Command`]: `std::process::Command` with an async child, plus `kill_on_drop`.
//!
//! Spawning is std's (so the program search, the environment, the working directory, user and
//! group, process group, `pre_exec` and every error are std's); what comes back is turned at
//! once into a [`Child`] named by a pidfd.

use std::ffi::OsStr;
use std::future::Future;
use std::io;
use std::path::Path;
use std::process::{ExitStatus, Output, Stdio};

use ringsteal_rt::op::SharedFd;

use crate::pipe::{ChildStderr, ChildStdin, ChildStdout};
use crate::{pidfd, sigpipe, Child};

/// A process builder, as `std::process::Command`: program, arguments, environment, working
/// directory, stdio and credentials, then [`spawn`](Self::spawn), [`output`](Self::output) or
/// [`status`](Self::status).
///
/// ```
/// use ringsteal_process::{Command, Stdio};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let out = Command::new("sh")
///         .args(["-c", "echo \"$GREETING from $(pwd)\"; echo oops >&2; exit 4"])
///         .env("GREETING", "hello")
///         .current_dir("/")
///         .stdin(Stdio::null())
///         .output()
///         .await?;
///     assert_eq!(out.stdout, b"hello from /\n");
///     assert_eq!(out.stderr, b"oops\n");
///     assert_eq!(out.status.code(), Some(4));
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct Command {
    std: std::process::Command,
    kill_on_drop: bool,
    /// Which streams the caller configured (`output` fills in the others).
    stdin_set: bool,
    stdout_set: bool,
    stderr_set: bool,
    /// Its children unblock `SIGPIPE` (see `sigpipe.rs`): set at the first spawn from a
    /// thread that blocked it.
    unblocks_sigpipe: bool,
}

impl Command {
    /// A command that runs `program` (searched in `PATH` if it has no slash), inheriting this
    /// process's environment, working directory and stdio.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        std::process::Command::new(program).into()
    }

    /// Adds an argument.
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        self.std.arg(arg);
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(&mut self, args: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.std.args(args);
        self
    }

    /// Sets an environment variable.
    pub fn env(&mut self, key: impl AsRef<OsStr>, val: impl AsRef<OsStr>) -> &mut Self {
        self.std.env(key, val);
        self
    }

    /// Sets environment variables.
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.std.envs(vars);
        self
    }

    /// Removes an environment variable (inherited or set).
    pub fn env_remove(&mut self, key: impl AsRef<OsStr>) -> &mut Self {
        self.std.env_remove(key);
        self
    }

    /// Starts from an empty environment.
    pub fn env_clear(&mut self) -> &mut Self {
        self.std.env_clear();
        self
    }

    /// The child's working directory (a relative program path is resolved against it only on
    /// some platforms: give an absolute one to be sure).
    pub fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.std.current_dir(dir);
        self
    }

    /// The child's stdin: `Stdio::piped()` (then [`Child::stdin`]), `null()`, `inherit()`
    /// (the default), or a descriptor (`Stdio::from(OwnedFd)`, a `File`, another child's
    /// pipe).
    pub fn stdin(&mut self, cfg: impl Into<Stdio>) -> &mut Self {
        self.std.stdin(cfg);
        self.stdin_set = true;
        self
    }

    /// The child's stdout, as [`stdin`](Self::stdin).
    pub fn stdout(&mut self, cfg: impl Into<Stdio>) -> &mut Self {
        self.std.stdout(cfg);
        self.stdout_set = true;
        self
    }

    /// The child's stderr, as [`stdin`](Self::stdin).
    pub fn stderr(&mut self, cfg: impl Into<Stdio>) -> &mut Self {
        self.std.stderr(cfg);
        self.stderr_set = true;
        self
    }

    /// Runs the child as user `id` (`setuid`; needs the privilege to).
    pub fn uid(&mut self, id: u32) -> &mut Self {
        std::os::unix::process::CommandExt::uid(&mut self.std, id);
        self
    }

    /// Runs the child as group `id` (`setgid`; needs the privilege to).
    pub fn gid(&mut self, id: u32) -> &mut Self {
        std::os::unix::process::CommandExt::gid(&mut self.std, id);
        self
    }

    /// Puts the child in process group `pgroup` (`0`: a new group led by the child), so that
    /// a terminal's Ctrl-C (sent to the foreground group) does not reach it.
    pub fn process_group(&mut self, pgroup: i32) -> &mut Self {
        std::os::unix::process::CommandExt::process_group(&mut self.std, pgroup);
        self
    }

    /// The child's `argv[0]` (default: the program).
    pub fn arg0(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        std::os::unix::process::CommandExt::arg0(&mut self.std, arg);
        self
    }

    /// Runs `f` in the child between fork and exec.
    ///
    /// # Safety
    /// As `std::os::unix::process::CommandExt::pre_exec`: `f` runs in a copy of this
    /// multi-threaded process in which only the calling thread exists, so it may only do
    /// what is async-signal-safe (no allocation, no locks).
    pub unsafe fn pre_exec<F>(&mut self, f: F) -> &mut Self
    where
        F: FnMut() -> io::Result<()> + Send + Sync + 'static,
    {
        // SAFETY: the caller upholds pre_exec's contract.
        unsafe { std::os::unix::process::CommandExt::pre_exec(&mut self.std, f) };
        self
    }

    /// Whether dropping the [`Child`] (before it was waited for) sends it `SIGKILL`. Default
    /// `false`: the child runs on, and is reaped when it exits.
    pub fn kill_on_drop(&mut self, kill: bool) -> &mut Self {
        self.kill_on_drop = kill;
        self
    }

    /// The std command inside, as tokio's `into_std`. What ringsteal adds at spawn goes:
    /// `kill_on_drop` (std's children are never killed on drop) and the unblocking of
    /// `SIGPIPE` in the child of a thread that blocked it.
    ///
    /// ```
    /// let mut cmd = ringsteal_process::Command::new("echo");
    /// cmd.arg("hi");
    /// let std_cmd = cmd.into_std();
    /// assert_eq!(std_cmd.get_args().collect::<Vec<_>>(), ["hi"]);
    /// ```
    pub fn into_std(self) -> std::process::Command {
        self.std
    }

    /// Whether dropping the child sends it `SIGKILL` (see
    /// [`kill_on_drop`](Self::kill_on_drop)), as tokio's `get_kill_on_drop`.
    ///
    /// ```
    /// let mut cmd = ringsteal_process::Command::new("true");
    /// assert!(!cmd.get_kill_on_drop());
    /// assert!(cmd.kill_on_drop(true).get_kill_on_drop());
    /// ```
    pub fn get_kill_on_drop(&self) -> bool {
        self.kill_on_drop
    }

    /// The program.
    pub fn get_program(&self) -> &OsStr {
        self.std.get_program()
    }

    /// The arguments (without the program).
    pub fn get_args(&self) -> std::process::CommandArgs<'_> {
        self.std.get_args()
    }

    /// The std command inside, to read or set what this type does not wrap.
    pub fn as_std(&self) -> &std::process::Command {
        &self.std
    }

    /// The std command inside, mutably.
    ///
    /// Set stdio with [`stdin`](Self::stdin), [`stdout`](Self::stdout) and
    /// [`stderr`](Self::stderr), not here: [`output`](Self::output) cannot see streams set on
    /// the std command and replaces them with its defaults.
    pub fn as_std_mut(&mut self) -> &mut std::process::Command {
        &mut self.std
    }

    /// Starts the child. Fails with std's errors (`NotFound` for a missing program or working
    /// directory, `PermissionDenied` for one that is not executable, ...).
    ///
    /// Spawning itself is a blocking system call (`posix_spawn` or `fork`/`exec` as std
    /// chooses), done on the calling thread, as tokio does: about 0.1 ms one at a time on
    /// the project's VM, several times that with many spawns at once. The shard and every
    /// task on it wait meanwhile (a shard moves waiting tasks to an idle one only between
    /// polls, not while one blocks it), so a loop that spawns many short-lived children
    /// should spawn on the blocking pool: `ringsteal::spawn_blocking(move || command.spawn()).await`.
    pub fn spawn(&mut self) -> io::Result<Child> {
        if sigpipe::blocked_here() && !self.unblocks_sigpipe {
            // This thread blocks SIGPIPE because it (or the thread that started it) wrote to
            // a child's stdin; a child would inherit that, and a pipeline inside it would
            // never end.
            sigpipe::unblock_in_children(&mut self.std);
            self.unblocks_sigpipe = true;
        }
        let mut child = self.std.spawn()?;
        let pid = child.id();
        // Nothing in ringsteal reaps a child before it has a pidfd, so `pid` still names this
        // child here (ADR-0012).
        let pidfd = match pidfd::open(pid) {
            Ok(fd) => SharedFd::new(fd),
            // Gone already: reaped by someone else, so `pid` may name another process by
            // now. Never signal or wait for it by pid.
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {
                return Err(pidfd::reaped_elsewhere())
            }
            // Reaped by the kernel the moment it exits: the same, if it has.
            Err(e) if pidfd::children_reaped_by_kernel() => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("{e} (the child may still run: {})", pidfd::REAPED_ELSEWHERE),
                ))
            }
            Err(e) => {
                // A child we cannot track must not run on unsupervised. Nothing reaps our
                // children but us, so `pid` still names this one (ADR-0012).
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        let pipes = (
            child.stdin.take().map(ChildStdin::from_std),
            child.stdout.take().map(ChildStdout::from_std),
            child.stderr.take().map(ChildStderr::from_std),
        );
        // std's handle owns nothing else (dropping it neither waits nor kills).
        drop(child);
        Ok(Child::new(pid, pidfd, pipes, self.kill_on_drop))
    }

    /// Runs the child to completion, collecting its stdout and stderr. Streams not configured
    /// get `output`'s defaults, as with std: stdin null, stdout and stderr piped (and stay so
    /// on this `Command` for later spawns). Spawns at once; the future waits.
    ///
    /// "Configured" means set through this type's [`stdin`](Self::stdin),
    /// [`stdout`](Self::stdout) and [`stderr`](Self::stderr). A stream set on the std command
    /// (through [`as_std_mut`](Self::as_std_mut), or before a `From` conversion) cannot be
    /// seen from here and gets the default (tokio's `output` pipes stdout and stderr always).
    pub fn output(&mut self) -> impl Future<Output = io::Result<Output>> + Send + 'static {
        if !self.stdin_set {
            self.std.stdin(Stdio::null());
        }
        if !self.stdout_set {
            self.std.stdout(Stdio::piped());
        }
        if !self.stderr_set {
            self.std.stderr(Stdio::piped());
        }
        let child = self.spawn();
        async move { child?.wait_with_output().await }
    }

    /// Runs the child to completion (stdio inherited unless configured); yields its status.
    /// Spawns at once; the future waits. Pipes configured on this command are closed before
    /// the wait (as tokio's), so a child writing to one sees a broken pipe instead of both
    /// waiting for ever.
    pub fn status(&mut self) -> impl Future<Output = io::Result<ExitStatus>> + Send + 'static {
        let child = self.spawn();
        async move {
            let mut child = child?;
            drop((child.stdin.take(), child.stdout.take(), child.stderr.take()));
            child.wait().await
        }
    }
}

/// Wraps a std command. Stdio it set counts as not configured for
/// [`output`](Command::output), which replaces it with its defaults: set it again on the
/// result.
impl From<std::process::Command> for Command {
    fn from(std: std::process::Command) -> Self {
        Self {
            std,
            kill_on_drop: false,
            stdin_set: false,
            stdout_set: false,
            stderr_set: false,
            unblocks_sigpipe: false,
        }
    }
}
