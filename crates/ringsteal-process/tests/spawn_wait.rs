//! Spawning and waiting, under both wake mechanisms and both ways of waiting (WAITID and the
//! pidfd poll): exit codes, deaths by signal, kill, try_wait, cancelled waits, the Command
//! settings std has, and many children at once across shards.

mod common;

use std::collections::BTreeSet;
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use common::{with_every_runtime, Config};
use ringsteal_process::{Command, Stdio};
use ringsteal_rt::Placement;

#[test]
fn five_hundred_children_spawned_concurrently_across_shards_all_report_their_exit_codes() {
    with_every_runtime("500 children", 2, |config, rt| {
        let results = rt.block_on(async {
            let tasks: Vec<_> = (0..500u32)
                .map(|i| {
                    ringsteal_rt::spawn_with(Placement::RoundRobin, async move {
                        let status = Command::new("sh")
                            .args(["-c", &format!("exit {}", i % 200)])
                            .stdin(Stdio::null())
                            .status()
                            .await;
                        (i, status, ringsteal_rt::current_shard())
                    })
                })
                .collect();
            let mut out = Vec::new();
            for t in tasks {
                out.push(t.await.expect("task"));
            }
            out
        });
        let mut shards = BTreeSet::new();
        for (i, status, shard) in results {
            let status = status.unwrap_or_else(|e| panic!("{config:?}: child {i}: {e}"));
            assert_eq!(
                status.code(),
                Some((i % 200) as i32),
                "{config:?}: child {i}"
            );
            shards.insert(shard);
        }
        assert_eq!(
            shards,
            BTreeSet::from([Some(0), Some(1)]),
            "{config:?}: children were waited for on both shards"
        );
    });
}

#[test]
fn a_child_killed_by_a_signal_reports_which() {
    with_every_runtime("killed by a signal", 1, |config, rt| {
        rt.block_on(async {
            let status = Command::new("sh")
                .args(["-c", "kill -TERM $$"])
                .status()
                .await
                .unwrap();
            assert_eq!(status.code(), None, "{config:?}");
            assert_eq!(status.signal(), Some(libc::SIGTERM), "{config:?}");
            assert!(!status.core_dumped());
        });
    });
}

#[test]
fn kill_sends_sigkill_waits_and_forgets_the_pid() {
    with_every_runtime("kill", 1, |config, rt| {
        rt.block_on(async {
            // `cat` waits on a stdin we hold open: it only ends if killed.
            let (mut child, _stdin, _) = common::cat_held_open(false);
            let pid = child.id().expect("running");
            child.kill().await.unwrap();
            assert_eq!(child.id(), None, "{config:?}: reaped");
            assert_eq!(common::child_state(pid), common::ChildState::Gone);
            let status = child.wait().await.unwrap();
            assert_eq!(status.signal(), Some(libc::SIGKILL), "{config:?}");
            // Killing what has exited is not an error (as std).
            child.start_kill().unwrap();
        });
    });
}

#[test]
fn a_dropped_wait_loses_nothing_and_the_next_wait_gets_the_status() {
    with_every_runtime("dropped wait", 2, |config, rt| {
        rt.block_on(async {
            // Stdin held here, so `wait` cannot close it: cat runs until we say.
            let (mut child, stdin, _) = common::cat_held_open(false);
            let early = ringsteal_rt::time::timeout(Duration::from_millis(2), child.wait()).await;
            assert!(
                early.is_err(),
                "{config:?}: cat ended on its own: {early:?}"
            );
            assert_eq!(child.try_wait().unwrap(), None, "{config:?}: still running");
            // Let it end while the first wait's op may still be in flight, then wait from
            // another shard.
            drop(stdin);
            let status = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                child.wait().await.map(|s| (s, child.id()))
            })
            .await
            .unwrap()
            .unwrap();
            assert!(status.0.success(), "{config:?}: {status:?}");
            assert_eq!(status.1, None);
        });
    });
}

#[test]
fn id_never_names_a_pid_the_child_no_longer_holds() {
    // A wait that was started and dropped stays in flight, kept by the `Child`, and completes
    // when the child exits without anyone polling it. From then on `id()` must not name the
    // pid unless the child still holds it (a zombie): once reaped, the pid may be reused.
    with_every_runtime("id after a kept wait", 1, |config, rt| {
        let handle = rt.handle();
        rt.block_on(async {
            let (mut child, stdin, _) = common::cat_held_open(false);
            let pid = child.id().unwrap();
            {
                let wait = std::pin::pin!(child.wait());
                assert!(common::poll_once(wait).await.is_pending(), "{config:?}");
            }
            drop(stdin); // cat exits
                         // Until the kept wait has completed on this shard (the hang guard bounds this).
            while handle.stats().shards[0].ops_in_flight > 0 {
                ringsteal_rt::yield_now().await;
            }
            if let Some(id) = child.id() {
                assert_eq!(id, pid);
                assert_eq!(
                    common::child_state(pid),
                    common::ChildState::Zombie,
                    "{config:?}: id() names pid {pid}, which the child no longer holds"
                );
            }
            let status = child.wait().await.unwrap();
            assert!(status.success(), "{config:?}: {status:?}");
            assert_eq!(child.id(), None);
            assert_eq!(common::child_state(pid), common::ChildState::Gone);
        });
    });
}

#[test]
fn try_wait_reaps_an_exited_child_without_waiting() {
    with_every_runtime("try_wait", 1, |config, rt| {
        rt.block_on(async {
            let mut child = Command::new("sh").args(["-c", "exit 9"]).spawn().unwrap();
            let pid = child.id().unwrap();
            // Block this thread (not the runtime's business) until the pidfd says "exited".
            let mut pfd = libc::pollfd {
                fd: child.pidfd().as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd; the pidfd is open while `child` lives.
            assert_eq!(unsafe { libc::poll(&mut pfd, 1, 60_000) }, 1, "{config:?}");
            assert_eq!(common::child_state(pid), common::ChildState::Zombie);
            let status = child.try_wait().unwrap().expect("exited");
            assert_eq!(status.code(), Some(9), "{config:?}");
            assert_eq!(common::child_state(pid), common::ChildState::Gone, "reaped");
            assert_eq!(child.try_wait().unwrap(), Some(status));
            assert_eq!(child.wait().await.unwrap(), status);
        });
    });
}

#[test]
fn output_and_status_match_std() {
    with_every_runtime("output", 1, |config, rt| {
        let script = "printf 'out %s' \"$1\"; printf 'err' >&2; exit 5";
        let std_out = std::process::Command::new("sh")
            .args(["-c", script, "sh", "arg"])
            .output()
            .unwrap();
        let ours = rt.block_on(async {
            Command::new("sh")
                .args(["-c", script, "sh", "arg"])
                .output()
                .await
                .unwrap()
        });
        assert_eq!(ours, std_out, "{config:?}");
        let status = rt.block_on(async {
            Command::new("sh")
                .args(["-c", "exit 6"])
                .status()
                .await
                .unwrap()
        });
        assert_eq!(status.code(), Some(6));
    });
}

#[test]
fn output_leaves_a_stream_the_caller_configured_alone() {
    let rt = Config::ALL[0].runtime(1);
    rt.block_on(async {
        let out = Command::new("sh")
            .args(["-c", "echo visible; echo hidden >&2"])
            .stderr(Stdio::null())
            .output()
            .await
            .unwrap();
        assert_eq!(out.stdout, b"visible\n");
        assert!(
            out.stderr.is_empty(),
            "stderr went to /dev/null, not a pipe"
        );
    });
}

#[test]
fn environment_directory_and_process_group_reach_the_child() {
    let rt = Config::ALL[0].runtime(1);
    rt.block_on(async {
        // Two variables this process already has (cargo sets several for a test run), so the
        // test needs no `set_var`, which races with other tests' threads reading the
        // environment: the child loses the first and inherits the second.
        let names: Vec<String> = std::env::vars_os()
            .filter_map(|(name, _)| name.into_string().ok())
            .filter(|name| name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
            .filter(|name| !name.is_empty())
            .take(2)
            .collect();
        assert_eq!(names.len(), 2, "the test process has too few variables");
        let (removed, kept) = (&names[0], &names[1]);
        let out = Command::new("/usr/bin/env")
            .env_remove(removed)
            .output()
            .await
            .unwrap();
        let listed = String::from_utf8_lossy(&out.stdout);
        let has = |name: &str| listed.lines().any(|l| l.starts_with(&format!("{name}=")));
        assert!(!has(removed), "{removed} was removed:\n{listed}");
        assert!(has(kept), "{kept} is inherited:\n{listed}");

        let out = Command::new("/bin/sh")
            .args(["-c", "echo \"$SET $(pwd)\""])
            .env("SET", "set")
            .current_dir("/tmp")
            .output()
            .await
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "set /tmp\n");

        let out = Command::new("/usr/bin/env")
            .env_clear()
            .env("ONLY", "1")
            .output()
            .await
            .unwrap();
        assert_eq!(out.stdout, b"ONLY=1\n");

        // A new process group: the child leads it (its pgid is its pid).
        let out = Command::new("sh")
            .args(["-c", "echo $$ $(cut -d' ' -f5 /proc/$$/stat)"])
            .process_group(0)
            .output()
            .await
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let ids: Vec<&str> = text.split_whitespace().collect();
        assert_eq!(ids.len(), 2, "{text}");
        assert_eq!(ids[0], ids[1], "pid and pgid of the child");
    });
}

#[test]
fn uid_and_gid_reach_the_child() {
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    // Root may become anyone; anyone else may only stay themselves.
    let (to_uid, to_gid) = if uid == 0 { (65534, 65534) } else { (uid, gid) };
    let rt = Config::ALL[0].runtime(1);
    let out = rt.block_on(async {
        Command::new("sh")
            .args(["-c", "echo $(id -u) $(id -g)"])
            .uid(to_uid)
            .gid(to_gid)
            .current_dir("/")
            .output()
            .await
            .unwrap()
    });
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{to_uid} {to_gid}\n")
    );
}

#[test]
fn the_builder_switch_forces_the_pidfd_poll_wait() {
    // Off a runtime, this is whether the kernel has IORING_OP_WAITID.
    let kernel = ringsteal_rt::op::waitid_available();
    for config in Config::ALL {
        let rt = config.runtime(1);
        let used = rt.block_on(async { ringsteal_rt::op::waitid_available() });
        assert_eq!(used, kernel && config.waitid, "{config:?}");
    }
}

/// A shard that wrote to a child's stdin blocks `SIGPIPE` for itself (the kernel raises it on
/// the writing thread) unless the program ignores it: the children it spawns later start
/// with nothing blocked, as the program's would, so a pipeline inside one still ends when its
/// reader goes. Checked as this binary runs (SIGPIPE ignored, nothing is blocked) and in a
/// child process that restored SIGPIPE's default action (the shard blocks it, and `Command`
/// unblocks it in its children).
#[test]
fn children_spawned_after_a_stdin_write_start_with_no_signal_blocked() {
    if common::in_a_run_with_sigpipe_default(
        "children_spawned_after_a_stdin_write_start_with_no_signal_blocked",
        children_start_with_no_signal_blocked,
    ) {
        return;
    }
    children_start_with_no_signal_blocked();
}

fn children_start_with_no_signal_blocked() {
    with_every_runtime("children's signal mask", 1, |_, rt| {
        rt.block_on(async {
            let (mut cat, stdin, _) = common::cat_held_open(false);
            let (r, _) = stdin.write_all(b"x".to_vec()).await;
            r.unwrap();
            drop(stdin);
            cat.wait().await.unwrap();
            for _ in 0..2 {
                // The same command twice: its hook is added once.
                let out = Command::new("grep")
                    .args(["^SigBlk", "/proc/self/status"])
                    .output()
                    .await
                    .unwrap();
                let text = String::from_utf8_lossy(&out.stdout).to_string();
                assert!(text.trim().ends_with("0000000000000000"), "{text}");
            }
            let out = Command::new("sh")
                .args(["-c", "while :; do echo y; done | head -n1"])
                .output()
                .await
                .unwrap();
            assert_eq!(out.stdout, b"y\n");
            // A thread started from the writing shard inherits its block, and a runtime built
            // there spawns children with nothing blocked too.
            let from_inheritor = std::thread::spawn(|| {
                let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
                rt.block_on(async {
                    Command::new("grep")
                        .args(["^SigBlk", "/proc/self/status"])
                        .output()
                        .await
                        .unwrap()
                })
            })
            .join()
            .unwrap();
            let text = String::from_utf8_lossy(&from_inheritor.stdout).to_string();
            assert!(text.trim().ends_with("0000000000000000"), "{text}");
        })
    });
}

/// `status()` closes the pipes configured on the command before it waits (as tokio's): a
/// child writing more than a pipe holds sees a broken pipe and exits, instead of both
/// waiting for ever.
#[test]
fn status_with_a_piped_stdout_does_not_wait_for_ever() {
    with_every_runtime("status piped", 1, |_, rt| {
        rt.block_on(async {
            let status = Command::new("sh")
                .args(["-c", "head -c 1000000 /dev/zero; exit 0"])
                .stdout(Stdio::piped())
                .status()
                .await
                .unwrap();
            assert!(status.code().is_some() || status.signal().is_some());
        })
    });
}

/// The book's advice for spawn-heavy loops: spawn on the blocking pool, wait on the shard.
/// The child, its pipes and its wait work wherever it was spawned.
#[test]
fn a_child_spawned_on_the_blocking_pool_is_waited_for_and_read_on_a_shard() {
    with_every_runtime("spawn on the blocking pool", 2, |_, rt| {
        rt.block_on(async {
            let mut command = Command::new("sh");
            command
                .args(["-c", "echo pooled; exit 3"])
                .stdout(Stdio::piped());
            let child = ringsteal_rt::spawn_blocking(move || command.spawn())
                .await
                .unwrap()
                .unwrap();
            let out = child.wait_with_output().await.unwrap();
            assert_eq!(out.status.code(), Some(3));
            assert_eq!(out.stdout, b"pooled\n");
        });
    });
}
