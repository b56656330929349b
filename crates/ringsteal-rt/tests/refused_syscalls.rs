//! A runtime built where the kernel or a sandbox refuses part of io_uring: `build()` fails
//! with an error naming the refused call and the fix, never a runtime that builds and then
//! spins without ever seeing a completion. And rings under a locked-memory limit that holds
//! them: the kernel gives a closed ring's share back late, so a build right after the
//! detection's trial rings (or right after another runtime was dropped) must wait for it
//! rather than fail.
//!
//! Each case runs in a child process (this test binary run again for one test), which
//! installs a seccomp filter or lowers its limits for itself alone.

use std::time::Duration;

#[path = "../../ringsteal-uring/tests/common/seccomp_filter.rs"]
mod seccomp_filter;

use ringsteal_rt::Runtime;

const CHILD_CASE: &str = "RINGSTEAL_REFUSED_SYSCALL_CASE";

/// Runs `test` of this binary again in a child with `CHILD_CASE` set; returns its output
/// (the child's verdict is its exit status). With `leaks_by_design`, a sanitizer's leak
/// check is off in the child (`scripts/asan.sh` turns it on for every process): a runtime
/// that lost its ring keeps what the kernel took, on purpose (`driver/lost.rs`).
fn run_in_child(test: &str, leaks_by_design: bool) -> std::process::Output {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut command = std::process::Command::new(exe);
    if leaks_by_design {
        if let Some(opts) = std::env::var_os("ASAN_OPTIONS") {
            let mut opts = opts.into_string().unwrap_or_default();
            opts.push_str(":detect_leaks=0");
            command.env("ASAN_OPTIONS", opts);
        }
    }
    let child = command
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_CASE, "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("re-running the test binary");
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(output) => output.expect("waiting for the child"),
        Err(_) => {
            // SAFETY: signalling our own child, which has not been reaped.
            unsafe { libc::kill(id as libc::pid_t, libc::SIGKILL) };
            panic!("{test}: the child hung");
        }
    }
}

fn in_child() -> bool {
    std::env::var_os(CHILD_CASE).is_some()
}

/// Asserts the child ran its case to the end; returns what it wrote.
fn check(test: &str) -> String {
    check_child(test, false)
}

/// [`check`], for a case whose runtime keeps memory the kernel took, on purpose.
fn check_leaking_by_design(test: &str) -> String {
    check_child(test, true)
}

fn check_child(test: &str, leaks_by_design: bool) -> String {
    let out = run_in_child(test, leaks_by_design);
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{test}: the child failed: {}\n{text}",
        out.status
    );
    assert!(
        text.contains("CASE DONE"),
        "{test}: the child ran nothing:\n{text}"
    );
    text
}

/// Makes `nr` fail with `errno` in this process from now on (a seccomp filter), as a
/// container's profile or a sandbox would.
fn refuse(nr: libc::c_long, errno: i32) {
    seccomp_filter::refuse(nr, errno).expect("the seccomp filter installs");
}

/// `build()` under a refusal of `nr`: an error whose text names `call` and each of `words`.
fn build_fails_naming(nr: libc::c_long, errno: i32, call: &str, words: &[&str]) {
    refuse(nr, errno);
    let err = match Runtime::builder().shards(1).build() {
        Ok(rt) => {
            let spun = rt.block_on(async {
                ringsteal_rt::time::timeout(Duration::from_secs(1), ringsteal_rt::op::nop()).await
            });
            panic!("built although {call} is refused; a nop then gave {spun:?}");
        }
        Err(err) => err.to_string(),
    };
    assert!(err.contains(call), "the error does not name {call}: {err}");
    for word in words {
        assert!(err.contains(word), "{word:?} missing from: {err}");
    }
    println!("CASE DONE: {err}");
}

#[test]
fn a_refused_io_uring_enter_fails_the_build_naming_it() {
    if in_child() {
        build_fails_naming(
            libc::SYS_io_uring_enter,
            libc::EPERM,
            "io_uring_enter returned EPERM",
            &["seccomp", "Fix:"],
        );
        return;
    }
    let _ = check("a_refused_io_uring_enter_fails_the_build_naming_it");
}

#[test]
fn a_hidden_io_uring_register_fails_the_build_naming_it() {
    if in_child() {
        build_fails_naming(
            libc::SYS_io_uring_register,
            libc::ENOSYS,
            "io_uring_register returned ENOSYS",
            &["sandbox", "Fix:"],
        );
        return;
    }
    let _ = check("a_hidden_io_uring_register_fails_the_build_naming_it");
}

/// Drops `CAP_IPC_LOCK` (which exempts a process from the locked-memory limit, as root has
/// it) and sets `RLIMIT_MEMLOCK` to `kib`.
fn limit_locked_memory(kib: u64) {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const CAP_IPC_LOCK: u32 = 14;
    let mut header = Header {
        version: 0x2008_0522,
        pid: 0,
    };
    let mut data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capget writes one header and two data words into live locals.
    let rc = unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) };
    assert_eq!(rc, 0);
    data[0].effective &= !(1 << CAP_IPC_LOCK);
    data[0].permitted &= !(1 << CAP_IPC_LOCK);
    // SAFETY: capset reads the header and data words; dropping a capability is always allowed.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) };
    assert_eq!(rc, 0);
    let limit = libc::rlimit {
        rlim_cur: kib * 1024,
        rlim_max: kib * 1024,
    };
    // SAFETY: setrlimit reads a valid rlimit.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_MEMLOCK, &limit) }, 0);
}

/// The hard `RLIMIT_MEMLOCK` in bytes (`u64::MAX`: unlimited).
fn hard_memlock() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into a live local.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut limit) };
    assert_eq!(rc, 0);
    limit.rlim_max
}

#[test]
fn runtimes_built_one_after_another_under_a_locked_memory_limit_that_holds_them() {
    if in_child() {
        if hard_memlock() < 128 * 1024 {
            // Only a privileged process may raise its hard limit; below 128 KiB the case
            // cannot be set up here (and the rings would not fit anyway).
            println!(
                "CASE DONE: skipped, hard RLIMIT_MEMLOCK {} bytes",
                hard_memlock()
            );
            return;
        }
        limit_locked_memory(128);
        // Each build follows rings just closed: the detection's trial rings, then the
        // runtime dropped before it.
        for round in 0..5 {
            let rt = Runtime::builder()
                .shards(1)
                .ring_entries(4)
                .build()
                .unwrap_or_else(|e| panic!("round {round}: {e}"));
            rt.block_on(ringsteal_rt::op::nop()).unwrap();
        }
        println!("CASE DONE");
        return;
    }
    let _ = check("runtimes_built_one_after_another_under_a_locked_memory_limit_that_holds_them");
}

#[test]
fn a_shard_short_of_descriptors_fails_the_build_saying_how_to_fix_it() {
    if in_child() {
        refuse(libc::SYS_eventfd2, libc::EMFILE);
        let err = Runtime::builder()
            .shards(1)
            .wake(ringsteal_rt::WakeMechanism::EventFd)
            .build()
            .map(drop)
            .expect_err("no eventfd, no runtime")
            .to_string();
        for word in ["shard 0", "ulimit -n"] {
            assert!(err.contains(word), "{word:?} missing from: {err}");
        }
        println!("CASE DONE: {err}");
        return;
    }
    let _ = check("a_shard_short_of_descriptors_fails_the_build_saying_how_to_fix_it");
}

/// A pipe's two ends.
fn pipe() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both are new and owned by nothing else.
    unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    }
}

/// A sandbox applied to a running program refuses `io_uring_enter` in every thread, with a
/// request of shard 1 in the kernel and shard 0 running `block_on`. Before, every shard
/// retried the enter for ever at full CPU, each request waited for ever, and the drop then
/// took the whole shutdown timeout.
fn ring_refused_after_the_build(rt: Runtime) {
    use ringsteal_rt::op::{self, SharedFd};
    use ringsteal_rt::Placement;
    use std::future::Future;
    use std::task::Poll;

    let handle = rt.handle();
    let (read_end, _write_end) = pipe();
    let read_end = SharedFd::new(read_end);
    let (in_kernel_tx, in_kernel_rx) = std::sync::mpsc::channel();
    rt.block_on(async move {
        let waiting = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
            let mut readable = std::pin::pin!(op::poll_readable(&read_end));
            std::future::poll_fn(|cx| {
                let _ = readable.as_mut().poll(cx);
                Poll::Ready(())
            })
            .await;
            // The kernel takes SQEs in order: once this no-op completed, the poll is in.
            op::nop().await.unwrap();
            in_kernel_tx.send(()).unwrap();
            readable.await
        });
        // The hang guard (the parent's) bounds this wait.
        while in_kernel_rx.try_recv().is_err() {
            ringsteal_rt::yield_now().await;
        }
        refuse_in_every_thread(libc::SYS_io_uring_enter, libc::EPERM);

        let err = op::nop()
            .await
            .expect_err("a request made after the refusal fails");
        assert_eq!(err.raw_os_error(), Some(libc::EPERM), "{err}");
        let joined = waiting.await;
        assert!(
            joined.as_ref().is_err_and(|e| e.is_cancelled()),
            "the task waiting on shard 1 was not cancelled: {joined:?}"
        );
        let later = ringsteal_rt::spawn(async {}).await;
        assert!(later.is_err(), "a spawn after the runtime stopped ran");

        // Shard 0 sleeps between looks (10 ms) rather than entering the kernel in a loop.
        let parks = |h: &ringsteal_rt::RuntimeHandle| h.stats().shards[0].parks;
        let before = parks(&handle);
        ringsteal_rt::time::sleep(Duration::from_millis(300)).await;
        let parked = parks(&handle) - before;
        assert!(
            parked < 200,
            "shard 0 parked {parked} times in 300 ms: it spins"
        );
    });
    let dropped = std::time::Instant::now();
    drop(rt);
    // Nothing more can be reaped from a ring the kernel refuses: the drop gives up at once.
    assert!(
        dropped.elapsed() < Duration::from_secs(30),
        "the drop took {:?}",
        dropped.elapsed()
    );
    println!("CASE DONE");
}

/// Makes `nr` fail with `errno` in every thread of this process from now on.
fn refuse_in_every_thread(nr: libc::c_long, errno: i32) {
    seccomp_filter::refuse_in_every_thread(nr, errno).expect("the seccomp filter installs");
}

/// Runs [`ring_refused_after_the_build`] in a child on a runtime `builder` makes, and checks
/// the child reported the lost ring.
fn check_ring_refused_after_the_build(test: &str, builder: fn() -> ringsteal_rt::Builder) {
    if in_child() {
        let rt = builder()
            .shards(2)
            .shutdown_timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        ring_refused_after_the_build(rt);
        return;
    }
    let text = check_leaking_by_design(test);
    assert!(
        text.contains("io_uring_enter fails for good (Operation not permitted"),
        "no report of the lost ring:\n{text}"
    );
}

#[test]
fn a_ring_refused_after_the_build_fails_new_requests_and_stops_the_runtime() {
    check_ring_refused_after_the_build(
        "a_ring_refused_after_the_build_fails_new_requests_and_stops_the_runtime",
        Runtime::builder,
    );
}

#[test]
fn a_plain_ring_refused_after_the_build_fails_new_requests_and_stops_the_runtime() {
    check_ring_refused_after_the_build(
        "a_plain_ring_refused_after_the_build_fails_new_requests_and_stops_the_runtime",
        || Runtime::builder().defer_taskrun(false).coop_taskrun(false),
    );
}

#[test]
fn a_ring_with_eventfd_doorbells_refused_after_the_build_stops_the_runtime() {
    check_ring_refused_after_the_build(
        "a_ring_with_eventfd_doorbells_refused_after_the_build_stops_the_runtime",
        || Runtime::builder().wake(ringsteal_rt::WakeMechanism::EventFd),
    );
}
