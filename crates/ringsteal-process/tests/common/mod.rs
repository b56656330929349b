//! Helpers shared by the process tests: the runtimes every behaviour is checked under (both
//! wake mechanisms, each with the WAITID wait and the pidfd-poll fallback, and plain and SQPOLL
//! rings), a hang guard (a
//! bound on a hung test, never synchronisation) and a look at a pid's state in `/proc`.

#![allow(dead_code, unreachable_pub)]

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ringsteal_rt::{Builder, Feature, Runtime, WakeMechanism};

/// How long one test body may run before it is declared hung.
pub const HANG_LIMIT: Duration = Duration::from_secs(120);

/// One way to build a runtime.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub wake: WakeMechanism,
    /// Waits use `IORING_OP_WAITID` (where the kernel has it) or the pidfd poll.
    pub waitid: bool,
    /// The ring mode: the best the kernel has, plain rings or SQPOLL rings.
    pub rings: Rings,
}

/// Which rings a [`Config`] asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rings {
    /// The best mode the kernel has (`DEFER_TASKRUN` where available).
    Best,
    /// Neither `DEFER_TASKRUN` nor `COOP_TASKRUN`.
    Plain,
    /// SQPOLL rings (a kernel poller per shard, idle after 1 ms).
    SqPoll,
}

impl Config {
    const fn new(wake: WakeMechanism, waitid: bool, rings: Rings) -> Self {
        Self {
            wake,
            waitid,
            rings,
        }
    }

    /// Both wake mechanisms, each with both ways of waiting; and plain and SQPOLL rings.
    pub const ALL: [Config; 6] = [
        Config::new(WakeMechanism::Auto, true, Rings::Best),
        Config::new(WakeMechanism::Auto, false, Rings::Best),
        Config::new(WakeMechanism::EventFd, true, Rings::Best),
        Config::new(WakeMechanism::EventFd, false, Rings::Best),
        Config::new(WakeMechanism::Auto, true, Rings::Plain),
        Config::new(WakeMechanism::Auto, true, Rings::SqPoll),
    ];

    pub fn builder(self, shards: usize) -> Builder {
        let mut b = Runtime::builder().shards(shards).wake(self.wake);
        if !self.waitid {
            b = b.without_feature(Feature::Waitid);
        }
        match self.rings {
            Rings::Best => b,
            Rings::Plain => b.defer_taskrun(false).coop_taskrun(false),
            Rings::SqPoll => b.sqpoll(Duration::from_millis(1)),
        }
    }

    pub fn runtime(self, shards: usize) -> Runtime {
        self.builder(shards)
            .build()
            .unwrap_or_else(|e| panic!("building a {self:?} runtime: {e}"))
    }
}

/// Runs `body` on its own thread; fails if it has not finished within [`HANG_LIMIT`].
pub fn hang_guard<R: Send + 'static>(what: &str, body: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name(format!("guarded {what}"))
        .spawn(move || {
            let _ = tx.send(catch_unwind(AssertUnwindSafe(body)));
        })
        .expect("starting the guarded thread");
    match rx.recv_timeout(HANG_LIMIT) {
        Ok(Ok(v)) => {
            let _ = thread.join();
            v
        }
        Ok(Err(panic)) => {
            let _ = thread.join();
            eprintln!("{what}: the test body panicked");
            resume_unwind(panic)
        }
        Err(_) => panic!("{what}: HUNG: not finished within {HANG_LIMIT:?}"),
    }
}

/// Runs `body` with a runtime of `shards` shards in every configuration, each hang-guarded.
pub fn with_every_runtime(
    name: &str,
    shards: usize,
    body: impl Fn(Config, Runtime) + Send + Sync + Clone + 'static,
) {
    for config in Config::ALL {
        let body = body.clone();
        hang_guard(&format!("{name} [{config:?}]"), move || {
            body(config, config.runtime(shards))
        });
    }
}

/// What `/proc` says about `pid` as a child of this process.
#[derive(Debug, PartialEq, Eq)]
pub enum ChildState {
    /// Exited and not reaped.
    Zombie,
    /// Still running (any state but zombie).
    Alive,
    /// Reaped: the pid is gone, or names a process that is not our child.
    Gone,
}

pub fn child_state(pid: u32) -> ChildState {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return ChildState::Gone;
    };
    // "pid (comm) S ppid ...": comm may hold spaces and parentheses; the last ')' ends it.
    let rest = &stat[stat.rfind(')').map_or(0, |i| i + 2)..];
    let mut fields = rest.split_whitespace();
    let state = fields.next().unwrap_or("?");
    let ppid: u32 = fields.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    if ppid != std::process::id() {
        ChildState::Gone
    } else if state == "Z" {
        ChildState::Zombie
    } else {
        ChildState::Alive
    }
}

/// Waits (bounded by `limit`, checking every millisecond) until every pid is `Gone`; returns
/// the ones that are not. A condition wait: it never assumes how long reaping takes.
pub fn wait_until_reaped(pids: &[u32], limit: Duration) -> Vec<(u32, ChildState)> {
    let deadline = Instant::now() + limit;
    loop {
        let left: Vec<_> = pids
            .iter()
            .map(|&p| (p, child_state(p)))
            .filter(|(_, s)| *s != ChildState::Gone)
            .collect();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The environment variable that tells a re-executed test binary it is the child.
pub const CHILD_ROLE: &str = "RINGSTEAL_TEST_CHILD_ROLE";

/// Runs this test binary again as a child process, running only the test `test` with
/// `CHILD_ROLE=role`; yields its output. The test checks `child_role()` to know which side
/// it is on.
pub fn run_self_as_child(test: &str, role: &str) -> std::process::Output {
    let exe = std::env::current_exe().expect("the test binary's path");
    std::process::Command::new(exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_ROLE, role)
        .output()
        .expect("re-running the test binary")
}

/// The role this process was started with by [`run_self_as_child`], if any.
pub fn child_role() -> Option<String> {
    std::env::var(CHILD_ROLE).ok()
}

/// Runs `check` in a re-run of this test binary (only the test `test`, the caller) that set
/// `SIGPIPE` back to its default action first, and fails if that run does. Rust programs
/// ignore `SIGPIPE`, so a plain test run can neither die of it nor see what ringsteal does
/// where it is not ignored. True in that re-run, where the caller should return at once.
pub fn in_a_run_with_sigpipe_default(test: &str, check: impl FnOnce()) -> bool {
    const ROLE: &str = "sigpipe-default";
    const DONE: &str = "checked with SIGPIPE at its default action";
    if child_role().as_deref() == Some(ROLE) {
        // SAFETY: `signal` only sets the process's disposition of SIGPIPE (the harness's
        // threads may run meanwhile; none of them depends on it).
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
        check();
        println!("{DONE}");
        return true;
    }
    let out = run_self_as_child(test, ROLE);
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains(DONE),
        "the run with SIGPIPE at its default action: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    false
}

/// `cat` with its stdin piped, and that stdin taken out of the `Child`: the child runs until
/// the returned `ChildStdin` is dropped (or it is killed), whatever happens to the `Child`.
/// Its stdout is piped too if `echo`, else discarded.
pub fn cat_held_open(
    echo: bool,
) -> (
    ringsteal_process::Child,
    ringsteal_process::ChildStdin,
    Option<ringsteal_process::ChildStdout>,
) {
    use ringsteal_process::{Command, Stdio};
    let out = if echo { Stdio::piped() } else { Stdio::null() };
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(out)
        .spawn()
        .expect("spawning cat");
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take();
    (child, stdin, stdout)
}

/// Polls `fut` once, with the current task's waker: `Pending` leaves it where it was.
pub async fn poll_once<F: std::future::Future>(
    fut: std::pin::Pin<&mut F>,
) -> std::task::Poll<F::Output> {
    let mut fut = Some(fut);
    std::future::poll_fn(move |cx| {
        std::task::Poll::Ready(fut.take().expect("polled once").as_mut().poll(cx))
    })
    .await
}

/// Bytes waiting in `pipe` (`FIONREAD`).
pub fn queued(pipe: &ringsteal_process::ChildStdout) -> usize {
    use std::os::fd::AsRawFd;
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int.
    let r = unsafe { libc::ioctl(pipe.as_raw_fd(), libc::FIONREAD, &mut n) };
    assert_eq!(r, 0);
    n as usize
}

/// Spawns `sleep seconds` (no stdio) on the current runtime and drops its `Child` while it
/// runs: an orphan for the reaper. Yields its pid.
pub fn spawn_dropped_sleep(seconds: &str) -> u32 {
    let child = ringsteal_process::Command::new("sleep")
        .arg(seconds)
        .stdin(ringsteal_process::Stdio::null())
        .stdout(ringsteal_process::Stdio::null())
        .stderr(ringsteal_process::Stdio::null())
        .spawn()
        .unwrap();
    child.id().unwrap()
}
