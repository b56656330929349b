//! No zombies: a child whose `Child` was dropped is reaped once it exits, whether it is dropped
//! on a runtime, off any runtime, mid-wait, or left running when its runtime shuts down, and
//! whether or not the runtime runs meanwhile (the orphan reaper thread); `kill_on_drop` kills. Zombies are counted in `/proc`
//! by pid, so children of other tests in this binary do not count.

mod common;

use std::time::Duration;

use common::{child_state, wait_until_reaped, with_every_runtime, ChildState, Config};
use ringsteal_process::{Command, Stdio};
use ringsteal_rt::Placement;

/// How long reaping may take before the test calls the leftovers zombies.
const REAP_LIMIT: Duration = Duration::from_secs(30);

#[test]
fn children_dropped_on_a_runtime_are_reaped_when_they_exit() {
    with_every_runtime("dropped on a runtime", 2, |config, rt| {
        let pids = rt.block_on(async {
            let tasks: Vec<_> = (0..50)
                .map(|_| {
                    ringsteal_rt::spawn_with(Placement::RoundRobin, async {
                        let child = Command::new("true").spawn().unwrap();
                        child.id().unwrap() // dropped here, never waited for
                    })
                })
                .collect();
            let mut pids = Vec::new();
            for t in tasks {
                pids.push(t.await.unwrap());
            }
            pids
        });
        // The runtime is idle (outside block_on, shard 0 does not run): reaping goes on anyway.
        let left = wait_until_reaped(&pids, REAP_LIMIT);
        assert!(left.is_empty(), "{config:?}: not reaped: {left:?}");
        drop(rt);
    });
}

#[test]
fn a_child_dropped_while_a_wait_is_in_flight_is_still_reaped() {
    with_every_runtime("dropped mid-wait", 1, |config, rt| {
        let pid = rt.block_on(async {
            let (mut child, stdin, _) = common::cat_held_open(false);
            let cut = ringsteal_rt::time::timeout(Duration::from_millis(2), child.wait()).await;
            assert!(cut.is_err(), "{config:?}");
            let pid = child.id().unwrap();
            drop(child);
            drop(stdin); // cat exits now
            pid
        });
        let left = wait_until_reaped(&[pid], REAP_LIMIT);
        assert!(left.is_empty(), "{config:?}: {left:?}");
    });
}

#[test]
fn children_dropped_off_any_runtime_are_reaped_by_the_orphan_reaper() {
    let rt = Config::ALL[0].runtime(1);
    let (children, stdins): (Vec<_>, Vec<_>) = rt.block_on(async {
        (0..5)
            .map(|_| {
                let (c, stdin, _) = common::cat_held_open(false);
                (c, stdin)
            })
            .unzip()
    });
    let pids: Vec<u32> = children.iter().map(|c| c.id().unwrap()).collect();
    // Dropped on a plain thread, with no runtime entered, while still running.
    std::thread::spawn(move || drop(children)).join().unwrap();
    // Each of these children is in the reaper's set (the thread may run for other tests'
    // orphans too, so that alone would prove nothing), and none has been reaped yet.
    for &pid in &pids {
        assert!(
            ringsteal_process::orphan_reaper_waits_for(pid),
            "child {pid} was dropped running but the reaper does not wait for it"
        );
    }
    assert!(pids.iter().all(|&p| child_state(p) == ChildState::Alive));
    drop(stdins); // they exit now
    let left = wait_until_reaped(&pids, REAP_LIMIT);
    assert!(left.is_empty(), "not reaped: {left:?}");
    drop(rt);
}

#[test]
fn children_still_running_when_their_runtime_shuts_down_are_reaped_later() {
    with_every_runtime("outlive the runtime", 2, |config, rt| {
        let (pids, stdins) = rt.block_on(async {
            let mut pids = Vec::new();
            let mut stdins = Vec::new();
            for i in 0..6 {
                let (pid, stdin) = ringsteal_rt::spawn_with(Placement::Pinned(i % 2), async {
                    let (c, stdin, _) = common::cat_held_open(false);
                    (c.id().unwrap(), stdin) // the Child drops here, the child running
                })
                .await
                .unwrap();
                pids.push(pid);
                stdins.push(stdin.into_owned_fd().unwrap());
            }
            (pids, stdins)
        });
        drop(rt);
        assert!(pids.iter().all(|&p| child_state(p) == ChildState::Alive));
        drop(stdins);
        let left = wait_until_reaped(&pids, REAP_LIMIT);
        assert!(left.is_empty(), "{config:?}: not reaped: {left:?}");
    });
}

#[test]
fn kill_on_drop_kills_the_child_and_reaps_it() {
    with_every_runtime("kill_on_drop", 1, |config, rt| {
        let (pid, stdin) = rt.block_on(async {
            let mut c = Command::new("cat")
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .unwrap();
            (c.id().unwrap(), c.stdin.take().unwrap())
        });
        // The stdin pipe is still open, so only the kill can have ended cat.
        let left = wait_until_reaped(&[pid], REAP_LIMIT);
        assert!(left.is_empty(), "{config:?}: {left:?}");
        drop(stdin);
    });
}

#[test]
fn without_kill_on_drop_a_dropped_child_runs_on() {
    let rt = Config::ALL[0].runtime(1);
    let (pid, stdin) = rt.block_on(async {
        let (c, stdin, stdout) = common::cat_held_open(true);
        let stdout = stdout.unwrap();
        let pid = c.id().unwrap();
        drop(c);
        // Still answering after the drop.
        let (res, _) = stdin.write_all(&b"still here"[..]).await;
        res.unwrap();
        let (res, buf) = stdout.read(Vec::with_capacity(32)).await;
        assert_eq!(&buf[..res.unwrap()], b"still here");
        (pid, stdin)
    });
    assert_eq!(child_state(pid), ChildState::Alive);
    drop(stdin);
    let left = wait_until_reaped(&[pid], REAP_LIMIT);
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_child_dropped_with_every_descriptor_in_use_is_still_reaped() {
    // The orphan reaper's epoll set needs a descriptor; with none left, the child gets a
    // thread of its own. Runs in a child process, whose descriptor limit it lowers and
    // whose reaper has no epoll set yet.
    if common::child_role().as_deref() == Some("no-descriptors") {
        let rt = Config::ALL[0].runtime(1);
        let (child, stdin) = rt.block_on(async {
            let (c, stdin, _) = common::cat_held_open(false);
            (c, stdin)
        });
        let pid = child.id().unwrap();
        let fillers = use_up_descriptors();
        drop(child); // running: adopted, and epoll_create1 fails with EMFILE
        drop(fillers);
        assert_eq!(child_state(pid), ChildState::Alive);
        drop(stdin); // cat exits
        let left = wait_until_reaped(&[pid], REAP_LIMIT);
        assert!(left.is_empty(), "not reaped: {left:?}");
        println!("reaped");
        drop(rt);
        return;
    }
    let out = common::run_self_as_child(
        "a_child_dropped_with_every_descriptor_in_use_is_still_reaped",
        "no-descriptors",
    );
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("reaped"),
        "the child process: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Lowers this process's descriptor limit to a little above what is open and opens
/// `/dev/null` until no descriptor is left; the files free them again when dropped.
fn use_up_descriptors() -> Vec<std::fs::File> {
    let open = std::fs::read_dir("/proc/self/fd").unwrap().count() as u64;
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain system calls with a valid rlimit; the hard limit stays as it is.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        limit.rlim_cur = (open + 16).min(limit.rlim_max);
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }
    let mut fillers = Vec::new();
    loop {
        match std::fs::File::open("/dev/null") {
            Ok(f) => fillers.push(f),
            Err(e) if e.raw_os_error() == Some(libc::EMFILE) => return fillers,
            Err(e) => panic!("opening /dev/null: {e}"),
        }
    }
}
