//! Helpers shared by the signal tests: both wake mechanisms, a hang guard (a bound on a hung
//! test, never synchronisation), sending a signal to this process, and re-running this test
//! binary as a child. Signals are process-wide: each test binary uses its own signals.

#![allow(dead_code, unreachable_pub)]

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::Duration;

use ringsteal_rt::{Runtime, WakeMechanism};

pub const HANG_LIMIT: Duration = Duration::from_secs(60);

/// Both wake mechanisms.
pub const WAKES: [WakeMechanism; 2] = [WakeMechanism::Auto, WakeMechanism::EventFd];

pub fn runtime(wake: WakeMechanism, shards: usize) -> Runtime {
    Runtime::builder()
        .shards(shards)
        .wake(wake)
        .build()
        .unwrap_or_else(|e| panic!("building a {wake:?} runtime: {e}"))
}

/// Runs `body` on its own thread; fails if it has not finished within [`HANG_LIMIT`].
pub fn hang_guard<R: Send + 'static>(what: &str, body: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        let _ = tx.send(catch_unwind(AssertUnwindSafe(body)));
    });
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

/// Runs `body` once per wake mechanism, each with a runtime of `shards` shards, hang-guarded.
pub fn with_each_wake(
    name: &str,
    shards: usize,
    body: impl Fn(WakeMechanism, Runtime) + Send + Sync + Clone + 'static,
) {
    for wake in WAKES {
        let body = body.clone();
        hang_guard(&format!("{name} [{wake:?}]"), move || {
            body(wake, runtime(wake, shards))
        });
    }
}

/// Sends `signum` to this process (any thread may take it).
pub fn send_to_self(signum: i32) {
    // SAFETY: kill sends a signal to our own pid.
    assert_eq!(unsafe { libc::kill(libc::getpid(), signum) }, 0);
}

/// The environment variable that tells a re-run test binary which role it plays.
pub const CHILD_ROLE: &str = "RINGSTEAL_SIGNAL_TEST_ROLE";

/// Runs this test binary again as a child, running only `test`, with `CHILD_ROLE=role`.
///
/// The child starts with the default action for every signal these tests expect to end a
/// process, whatever this one inherited: a shell starts background jobs with SIGINT ignored
/// and `nohup` ignores SIGHUP, and the runtime rightly restores an inherited disposition
/// once no listener is left.
pub fn run_self_as_child(test: &str, role: &str) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut command = std::process::Command::new(exe);
    command
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_ROLE, role);
    // SAFETY: runs in the forked child before exec, calling only `signal`, which is
    // async-signal-safe; SIG_DFL is a valid disposition for each of these signals.
    unsafe {
        command.pre_exec(|| {
            for signum in [libc::SIGINT, libc::SIGHUP, libc::SIGTERM, libc::SIGQUIT] {
                if libc::signal(signum, libc::SIG_DFL) == libc::SIG_ERR {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        })
    };
    command.output().expect("re-running the test binary")
}

pub fn child_role() -> Option<String> {
    std::env::var(CHILD_ROLE).ok()
}

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Serialises the tests of one binary that send the same signal: each takes this first, so no
/// test sees another's deliveries.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Raises `signum` on this thread: the handler has run when this returns (a signal sent to
/// the process with `kill` may be taken by another thread later).
pub fn raise_here(signum: i32) {
    // SAFETY: raise sends a signal to the calling thread.
    assert_eq!(unsafe { libc::raise(signum) }, 0);
}
