//! Registering changes nothing it was not asked to: other signals keep their actions, no
//! signal mask changes (here or in threads started later), a handler installed before keeps
//! being called, once the last listener is gone the signal does what it did before (checked
//! in a child process, since that means dying), and listening for `SIGCHLD` keeps the
//! kernel's reaping and stop reports as the previous action set them (also in a child).

mod common;

use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use common::{child_role, raise_here, run_self_as_child};
use ringsteal_signal::{signal, SignalKind};

fn action_of(signum: i32) -> (usize, i32) {
    // SAFETY: all-zero is a valid sigaction to fill; reads the current action only.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let r = unsafe { libc::sigaction(signum, std::ptr::null(), &mut old) };
    assert_eq!(r, 0);
    (old.sa_sigaction, old.sa_flags)
}

/// Installs `handler` (a plain one, as signal-hook's are to the kernel) for `signum`, as
/// another library would; yields the action it replaced.
fn install_plain_handler(signum: i32, handler: extern "C" fn(libc::c_int)) -> libc::sigaction {
    // SAFETY: all-zero is a valid sigaction, which sigemptyset initialises; the handlers
    // passed here only touch atomics and call what they found.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = handler as usize;
        libc::sigemptyset(&mut act.sa_mask);
        let mut found: libc::sigaction = std::mem::zeroed();
        assert_eq!(libc::sigaction(signum, &act, &mut found), 0);
        found
    }
}

fn blocked_mask() -> Vec<i32> {
    // SAFETY: all-zero is a valid sigset to fill; reads this thread's mask only.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut set) };
    assert_eq!(r, 0);
    // SAFETY: sigismember reads an initialised set.
    (1..=64)
        .filter(|&s| unsafe { libc::sigismember(&set, s) } == 1)
        .collect()
}

#[test]
fn registering_one_signal_changes_no_other_action_and_no_mask() {
    let others = [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGPIPE,
        libc::SIGCHLD,
        libc::SIGWINCH,
    ];
    let before: Vec<_> = others.iter().map(|&s| action_of(s)).collect();
    let mask_before = blocked_mask();
    let rt = common::runtime(ringsteal_rt::WakeMechanism::Auto, 2);
    rt.block_on(async {
        let mut usr2 = signal(SignalKind::user_defined2()).unwrap();
        raise_here(libc::SIGUSR2);
        usr2.recv().await.unwrap();
    });
    let after: Vec<_> = others.iter().map(|&s| action_of(s)).collect();
    assert_eq!(before, after, "actions of signals nobody asked for");
    assert_eq!(blocked_mask(), mask_before, "this thread's mask");
    let in_new_thread = std::thread::spawn(blocked_mask).join().unwrap();
    assert!(
        !in_new_thread.contains(&libc::SIGUSR2),
        "SIGUSR2 blocked in a new thread"
    );
    let in_shard = rt.block_on(async {
        ringsteal_rt::spawn_with(ringsteal_rt::Placement::Pinned(1), async { blocked_mask() })
            .await
            .unwrap()
    });
    assert!(
        !in_shard.contains(&libc::SIGUSR2),
        "SIGUSR2 blocked on a shard"
    );
}

static EARLIER_HANDLER_CALLS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn earlier_handler(_: libc::c_int) {
    EARLIER_HANDLER_CALLS.fetch_add(1, SeqCst);
}

#[test]
fn a_handler_installed_before_keeps_being_called() {
    // SAFETY: installs a handler that only touches an atomic.
    unsafe {
        libc::signal(
            libc::SIGALRM,
            earlier_handler as *const () as libc::sighandler_t,
        )
    };
    let rt = common::runtime(ringsteal_rt::WakeMechanism::EventFd, 1);
    rt.block_on(async {
        let mut alarm = signal(SignalKind::alarm()).unwrap();
        raise_here(libc::SIGALRM);
        alarm.recv().await.unwrap();
        assert_eq!(EARLIER_HANDLER_CALLS.load(SeqCst), 1, "with a listener");
        drop(alarm);
        raise_here(libc::SIGALRM);
        assert_eq!(EARLIER_HANDLER_CALLS.load(SeqCst), 2, "with none");
    });
}

#[test]
fn with_no_listener_left_the_default_action_is_back() {
    if child_role().as_deref() == Some("default-back") {
        let rt = common::runtime(ringsteal_rt::WakeMechanism::Auto, 1);
        rt.block_on(async {
            let mut hup = signal(SignalKind::hangup()).unwrap();
            raise_here(libc::SIGHUP);
            hup.recv().await.unwrap();
            println!("survived the first");
        });
        // The listener is gone: SIGHUP terminates, as it did before.
        raise_here(libc::SIGHUP);
        println!("survived the second");
        return;
    }
    let out = run_self_as_child(
        "with_no_listener_left_the_default_action_is_back",
        "default-back",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGHUP),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("survived the first"));
    assert!(!stdout.contains("survived the second"));
}

#[test]
fn with_no_listener_left_a_stop_signal_stops_and_the_handler_comes_back() {
    if child_role().as_deref() == Some("stop") {
        let rt = common::runtime(ringsteal_rt::WakeMechanism::Auto, 1);
        rt.block_on(async {
            drop(signal(SignalKind::from_raw(libc::SIGTSTP)).unwrap());
        });
        // Nobody listens: this stops the process until the parent continues it.
        raise_here(libc::SIGTSTP);
        // Continued: listening works again.
        rt.block_on(async {
            let mut tstp = signal(SignalKind::from_raw(libc::SIGTSTP)).unwrap();
            raise_here(libc::SIGTSTP);
            tstp.recv().await.unwrap();
        });
        println!("listened after the stop");
        return;
    }
    let out = run_self_stopped_and_continued(
        "with_no_listener_left_a_stop_signal_stops_and_the_handler_comes_back",
        "stop",
    );
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("listened after the stop"));
}

/// Runs the test `test` in a child process with `role`, waits for it to stop (of
/// `SIGTSTP`), continues it and yields its output once it has ended.
fn run_self_stopped_and_continued(test: &str, role: &str) -> std::process::Output {
    let exe = std::env::current_exe().unwrap();
    // In a process group of its own, with this process (in another group of the session) as
    // its parent: a group that is not orphaned. The kernel discards SIGTSTP sent to an
    // orphaned group (this test's group is one when the tests run in the background).
    let child = std::process::Command::new(exe)
        .process_group(0)
        .args(["--exact", test, "--nocapture"])
        .env(common::CHILD_ROLE, role)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: waits for our own child to stop (or end); `status` is a valid out-pointer.
    let r = unsafe { libc::waitpid(pid, &mut status, libc::WUNTRACED) };
    assert_eq!(r, pid);
    assert!(
        libc::WIFSTOPPED(status),
        "the child did not stop: status {status:#x}"
    );
    assert_eq!(libc::WSTOPSIG(status), libc::SIGTSTP);
    // SAFETY: continues our own stopped child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    child.wait_with_output().unwrap()
}

static FOUND_UNDER_STOP_CHAIN: AtomicUsize = AtomicUsize::new(0);

/// A signal-hook-like handler for `SIGTSTP` that calls the handler it found (ringsteal's).
extern "C" fn chaining_stop_handler(signum: libc::c_int) {
    let found = FOUND_UNDER_STOP_CHAIN.load(SeqCst);
    if found != libc::SIG_DFL && found != libc::SIG_IGN {
        // SAFETY: `found` is ringsteal's handler, recorded from sigaction as an SA_SIGINFO
        // handler; it is called with a null siginfo and context, which it only passes on.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(found) };
        f(signum, std::ptr::null_mut(), std::ptr::null_mut());
    }
}

/// A handler another library installed over ringsteal's (chaining to it) is still installed
/// after a stop signal that nobody listens to: ringsteal's handler carries out the default
/// action by putting `SIG_DFL` in place for the stop, and once the process is continued it
/// puts back the action it displaced, not its own (it did, and the other library heard no
/// more `SIGTSTP`: the change's review).
#[test]
fn a_handler_installed_over_ours_is_back_after_a_stop() {
    if child_role().as_deref() == Some("stop-chained") {
        let rt = common::runtime(ringsteal_rt::WakeMechanism::Auto, 1);
        let _entered = rt.handle().enter();
        let listener = signal(SignalKind::from_raw(libc::SIGTSTP)).unwrap();
        let found = install_plain_handler(libc::SIGTSTP, chaining_stop_handler);
        FOUND_UNDER_STOP_CHAIN.store(found.sa_sigaction, SeqCst);
        // ringsteal's stays under the other one.
        drop(listener);
        // Nobody listens: ringsteal's handler, called by the other, stops the process.
        raise_here(libc::SIGTSTP);
        assert_eq!(
            action_of(libc::SIGTSTP).0,
            chaining_stop_handler as extern "C" fn(libc::c_int) as usize,
            "the other library's handler is gone after the stop"
        );
        println!("kept after the stop");
        return;
    }
    if child_role().is_some() {
        return;
    }
    let out = run_self_stopped_and_continued(
        "a_handler_installed_over_ours_is_back_after_a_stop",
        "stop-chained",
    );
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("kept after the stop"));
}

#[test]
fn listening_for_sigchld_keeps_the_auto_reaping_that_ignoring_it_asked_for() {
    if child_role().as_deref() == Some("sigchld-ignored") {
        // SIG_IGN for SIGCHLD means the kernel reaps children itself: none becomes a zombie.
        // SAFETY: sets SIGCHLD's action in this child process, which runs only this test.
        unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) };
        let rt = common::runtime(ringsteal_rt::WakeMechanism::Auto, 1);
        rt.block_on(async {
            let mut chld = signal(SignalKind::child()).unwrap();
            let child = std::process::Command::new("true").spawn().unwrap();
            let pid = child.id() as libc::pid_t;
            // Still told about the exit (Linux sends SIGCHLD with SA_NOCLDWAIT)...
            chld.recv().await.unwrap();
            // ...and the child was reaped by the kernel: waitpid finds no child to wait for.
            // A zombie would be reaped here, and waitpid would return its pid.
            let mut status = 0;
            // SAFETY: waits for our own child; `status` is a valid out-pointer.
            let r = unsafe { libc::waitpid(pid, &mut status, 0) };
            let errno = std::io::Error::last_os_error().raw_os_error();
            assert_eq!(
                (r, errno),
                (-1, Some(libc::ECHILD)),
                "the child was left a zombie for someone to reap"
            );
            drop(child);
        });
        // The last listener gone, the signal is ignored again, as before (and so children
        // are still reaped by the kernel).
        let (action, flags) = action_of(libc::SIGCHLD);
        assert_eq!(action, libc::SIG_IGN, "flags {flags:#x}");
        println!("auto-reaped");
        return;
    }
    let out = run_self_as_child(
        "listening_for_sigchld_keeps_the_auto_reaping_that_ignoring_it_asked_for",
        "sigchld-ignored",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("auto-reaped"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn listening_for_sigchld_keeps_sa_nocldstop() {
    if child_role().as_deref() == Some("nocldstop") {
        // SAFETY: installs a handler that only touches an atomic, with SA_NOCLDSTOP, in this
        // child process, which runs only this test.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = earlier_handler as *const () as usize;
            act.sa_flags = libc::SA_NOCLDSTOP;
            libc::sigemptyset(&mut act.sa_mask);
            assert_eq!(
                libc::sigaction(libc::SIGCHLD, &act, std::ptr::null_mut()),
                0
            );
        }
        let rt = common::runtime(ringsteal_rt::WakeMechanism::Auto, 1);
        rt.block_on(async {
            drop(signal(SignalKind::child()).unwrap());
        });
        let (_, flags) = action_of(libc::SIGCHLD);
        assert_ne!(flags & libc::SA_NOCLDSTOP, 0, "flags {flags:#x}");
        println!("kept");
        return;
    }
    let out = run_self_as_child("listening_for_sigchld_keeps_sa_nocldstop", "nocldstop");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("kept"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A signal the program ignored before listening (`SIGHUP` under `nohup`) is ignored again
/// once the last listener goes, for the program's children too: `exec` resets a handler to
/// the default action but keeps an ignore, so while ringsteal's handler stayed installed a
/// child spawned after the listener was dropped died of the signal its parent ignores.
#[test]
fn an_ignored_signal_is_ignored_again_by_children_after_the_last_listener() {
    if child_role().as_deref() == Some("nohup") {
        // SAFETY: sets SIGHUP ignored, as nohup does.
        unsafe { libc::signal(libc::SIGHUP, libc::SIG_IGN) };
        let hup_self = || {
            std::process::Command::new("sh")
                .args(["-c", "kill -HUP $$; echo alive"])
                .output()
                .unwrap()
        };
        assert_eq!(
            hup_self().stdout,
            b"alive\n",
            "a nohup'd child survives SIGHUP"
        );
        let rt = common::runtime(common::WAKES[0], 1);
        let _entered = rt.handle().enter();
        drop(ringsteal_signal::signal(ringsteal_signal::SignalKind::hangup()).unwrap());
        let after = hup_self();
        assert_eq!(
            after.stdout, b"alive\n",
            "the child died: {:?}",
            after.status
        );
        // Listening again works, and ignoring comes back again after.
        drop(ringsteal_signal::signal(ringsteal_signal::SignalKind::hangup()).unwrap());
        assert_eq!(hup_self().stdout, b"alive\n");
        return;
    }
    if child_role().is_some() {
        return;
    }
    let out = run_self_as_child(
        "an_ignored_signal_is_ignored_again_by_children_after_the_last_listener",
        "nohup",
    );
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

extern "C" fn someone_elses_handler(_: libc::c_int) {}

/// Putting the ignore back replaces only ringsteal's own handler: a handler the program (or
/// another library) installed after ringsteal's stays when the last listener goes.
#[test]
fn a_handler_installed_after_ours_survives_the_last_listener() {
    if child_role().as_deref() == Some("later-handler") {
        // SAFETY: sets SIGHUP ignored, as nohup does.
        unsafe { libc::signal(libc::SIGHUP, libc::SIG_IGN) };
        let rt = common::runtime(common::WAKES[0], 1);
        let _entered = rt.handle().enter();
        let listener = ringsteal_signal::signal(ringsteal_signal::SignalKind::hangup()).unwrap();
        let theirs = someone_elses_handler as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: installs a handler that does nothing (async-signal-safe).
        unsafe { libc::signal(libc::SIGHUP, theirs) };
        drop(listener);
        assert_eq!(
            action_of(libc::SIGHUP).0,
            theirs,
            "the later handler was replaced"
        );
        return;
    }
    if child_role().is_some() {
        return;
    }
    let out = run_self_as_child(
        "a_handler_installed_after_ours_survives_the_last_listener",
        "later-handler",
    );
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The action a handler installed after the last listener found (as signal-hook records it).
static FOUND_BEFORE_CHAINING: AtomicUsize = AtomicUsize::new(0);
static CHAINING_HANDLER_CALLS: AtomicUsize = AtomicUsize::new(0);

/// What signal-hook (under tokio's `signal`) does: count, then call the handler function it
/// found installed, if it found one (not for `SIG_DFL` or `SIG_IGN`).
extern "C" fn chaining_handler(signum: libc::c_int) {
    CHAINING_HANDLER_CALLS.fetch_add(1, SeqCst);
    let found = FOUND_BEFORE_CHAINING.load(SeqCst);
    if found != libc::SIG_DFL && found != libc::SIG_IGN {
        // SAFETY: `found` was read from sigaction as this signal's handler (without
        // SA_SIGINFO, checked where it is recorded).
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(found) };
        f(signum);
    }
}

/// Once the last listener is gone, a handler another library installs (tokio's `signal`,
/// through signal-hook, after a ringsteal listener came and went) finds the action from
/// before ringsteal, not ringsteal's handler: calling that, as signal-hook does, ran the
/// default action and killed the process (a review, with tokio's `signal` and `SIGUSR1`).
#[test]
fn a_handler_installed_after_the_last_listener_finds_the_action_from_before() {
    if child_role().as_deref() == Some("chained-later") {
        let before = action_of(libc::SIGUSR1);
        let rt = common::runtime(common::WAKES[0], 1);
        let _entered = rt.handle().enter();
        drop(signal(SignalKind::user_defined1()).unwrap());
        // (The flags may differ by glibc's SA_RESTORER.)
        let after = action_of(libc::SIGUSR1);
        assert_eq!(
            after.0, before.0,
            "the action from before ringsteal is back"
        );
        let found = install_plain_handler(libc::SIGUSR1, chaining_handler);
        assert_eq!(found.sa_flags & libc::SA_SIGINFO, 0);
        FOUND_BEFORE_CHAINING.store(found.sa_sigaction, SeqCst);
        raise_here(libc::SIGUSR1);
        assert_eq!(CHAINING_HANDLER_CALLS.load(SeqCst), 1);
        println!("survived");
        return;
    }
    if child_role().is_some() {
        return;
    }
    let out = run_self_as_child(
        "a_handler_installed_after_the_last_listener_finds_the_action_from_before",
        "chained-later",
    );
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("survived"),
        "{:?}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
