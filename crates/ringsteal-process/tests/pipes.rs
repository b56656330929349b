//! A child's pipes through the ring: a 10 MiB stream through `cat` with checksums, stdout and
//! stderr read at once, a child that closes its pipes early, a reader that is gone
//! (`BrokenPipe`, not death by SIGPIPE), a read that waits on an empty blocking pipe
//! without holding up its shard, and a read dropped after it read, whose bytes the next read
//! gets.

mod common;

use std::io;
use std::time::Duration;

use common::with_every_runtime;
use ringsteal_process::{Command, Stdio};
use ringsteal_rt::Placement;

/// FNV-1a over `bytes`, continuing from `hash`.
fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}
const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

#[test]
fn ten_mib_through_cat_arrive_intact() {
    const TOTAL: usize = 10 << 20;
    with_every_runtime("10 MiB through cat", 2, |config, rt| {
        rt.block_on(async move {
            let (mut child, stdin, stdout) = common::cat_held_open(true);
            let stdout = stdout.unwrap();
            // The writer on another shard, in uneven chunks; the reader here.
            let writer = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let mut hash = FNV_START;
                let mut sent = 0usize;
                let mut chunk = 1usize;
                while sent < TOTAL {
                    let n = (chunk * 7919 % 200_000 + 1).min(TOTAL - sent);
                    let data: Vec<u8> = (sent..sent + n).map(|i| (i * 31 % 251) as u8).collect();
                    hash = fnv1a(hash, &data);
                    let (res, _) = stdin.write_all(data).await;
                    res.expect("write to cat");
                    sent += n;
                    chunk += 1;
                }
                hash // stdin drops here: cat sees end of file
            });
            let mut hash = FNV_START;
            let mut received = 0usize;
            let mut buf = Vec::with_capacity(100_000);
            loop {
                buf.clear();
                let (res, b) = stdout.read(buf).await;
                buf = b;
                match res.expect("read from cat") {
                    0 => break,
                    n => {
                        hash = fnv1a(hash, &buf[..n]);
                        received += n;
                    }
                }
            }
            let sent_hash = writer.await.unwrap();
            assert_eq!(received, TOTAL, "{config:?}");
            assert_eq!(hash, sent_hash, "{config:?}: checksum");
            assert!(child.wait().await.unwrap().success());
        });
    });
}

#[test]
fn stdout_and_stderr_are_read_at_once_so_neither_fills_up() {
    with_every_runtime("both streams", 1, |config, rt| {
        // 256 KiB on each stream, interleaved: reading one after the other would deadlock
        // once the unread pipe (64 KiB) is full.
        let script = "i=0; while [ $i -lt 64 ]; do \
                      head -c 4096 /dev/zero; head -c 4096 /dev/zero >&2; i=$((i+1)); done";
        let out = rt.block_on(async {
            Command::new("sh")
                .args(["-c", script])
                .output()
                .await
                .unwrap()
        });
        assert!(out.status.success(), "{config:?}");
        assert_eq!((out.stdout.len(), out.stderr.len()), (256 << 10, 256 << 10));
    });
}

#[test]
fn a_child_that_closes_its_pipes_early_gives_end_of_file_and_broken_pipe() {
    with_every_runtime("early close", 1, |config, rt| {
        rt.block_on(async {
            // Closes its stdin and stdout at once, then runs on (until we kill it).
            let mut child = Command::new("sh")
                .args(["-c", "exec 0<&- 1>&- sleep 1000"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let stdin = child.stdin.take().unwrap();
            let stdout = child.stdout.take().unwrap();
            // stdout: end of file although the child still runs.
            let (res, _) = stdout.read(Vec::with_capacity(16)).await;
            assert_eq!(res.unwrap(), 0, "{config:?}");
            // stdin: nobody reads any more.
            let (res, _) = stdin.write_all(vec![7u8; 1 << 20]).await;
            let err = res.expect_err("the reader is gone");
            assert_eq!(err.kind(), io::ErrorKind::BrokenPipe, "{config:?}: {err}");
            child.kill().await.unwrap();
        });
    });
}

#[test]
fn writing_to_an_exited_child_is_broken_pipe_not_sigpipe_death() {
    // The check that counts runs where SIGPIPE's default action (die) was restored.
    if common::in_a_run_with_sigpipe_default(
        "writing_to_an_exited_child_is_broken_pipe_not_sigpipe_death",
        write_to_an_exited_child,
    ) {
        return;
    }
    write_to_an_exited_child();
}

/// Whether the calling thread blocks `SIGPIPE`.
fn sigpipe_blocked() -> bool {
    // SAFETY: all-zero is a valid sigset to fill; reads this thread's mask only, and
    // sigismember reads the initialised set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        assert_eq!(
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut set),
            0
        );
        libc::sigismember(&set, libc::SIGPIPE) == 1
    }
}

#[test]
fn blocking_threads_started_from_a_shard_that_blocked_sigpipe_do_not_inherit_it() {
    // A child's stdin write blocks SIGPIPE on its shard thread when the program does not
    // ignore it (see `sigpipe.rs`). A thread started from that shard inherits its mask; the
    // blocking pool's threads run user code, which must see SIGPIPE as the program set it
    // up. Checked where SIGPIPE's default action was restored.
    common::in_a_run_with_sigpipe_default(
        "blocking_threads_started_from_a_shard_that_blocked_sigpipe_do_not_inherit_it",
        || {
            with_every_runtime("sigpipe mask", 1, |config, rt| {
                let (on_shard, in_pool) = masks_after_a_stdin_write_on(&rt);
                assert!(on_shard, "{config:?}: setup: the write blocks SIGPIPE");
                assert!(
                    !in_pool,
                    "{config:?}: a blocking-pool thread started with the shard's SIGPIPE blocked"
                );
            })
        },
    );
}

#[test]
fn a_program_that_ignores_sigpipe_has_no_signal_blocked_by_a_stdin_write() {
    // Rust programs ignore SIGPIPE (as this test binary does): a failed write cannot kill
    // them, so a write changes no mask, and what the shard thread starts (a std thread, a
    // std::process::Command child) sees the program's own.
    with_every_runtime("sigpipe ignored", 1, |config, rt| {
        let (on_shard, in_pool) = masks_after_a_stdin_write_on(&rt);
        assert!(!on_shard && !in_pool, "{config:?}");
        let (thread, std_child) = rt.block_on(async {
            let thread = std::thread::spawn(sigpipe_blocked).join().unwrap();
            let out = std::process::Command::new("grep")
                .args(["^SigBlk", "/proc/self/status"])
                .output()
                .unwrap();
            (thread, String::from_utf8_lossy(&out.stdout).to_string())
        });
        assert!(!thread, "{config:?}: a thread started from the shard");
        assert!(
            std_child.trim().ends_with("0000000000000000"),
            "{config:?}: {std_child}"
        );
    });
}

#[test]
fn a_failed_write_on_a_thread_that_blocks_sigpipe_leaves_none_pending() {
    // SIGPIPE ignored (as here) but blocked on the writing thread by the program: the
    // signal an EPIPE raises stays pending, and would be delivered if the program later
    // restored the default action and unblocked it. The write discards it.
    with_every_runtime("no pending SIGPIPE", 1, |config, rt| {
        // SAFETY: blocks SIGPIPE on this thread (shard 0's) only; `set` is initialised.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGPIPE);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        }
        rt.block_on(async {
            let mut child = Command::new("true").stdin(Stdio::piped()).spawn().unwrap();
            let stdin = child.stdin.take().unwrap();
            assert!(child.wait().await.unwrap().success());
            // As in `write_to_an_exited_child`: write until the kernel says it is broken.
            loop {
                let (res, _) = stdin.write(b"anyone?".to_vec()).await;
                if let Err(e) = res {
                    assert_eq!(e.kind(), io::ErrorKind::BrokenPipe, "{config:?}");
                    break;
                }
                ringsteal_rt::yield_now().await;
            }
        });
        // SAFETY: reads this thread's pending set into an initialised sigset.
        let pending = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigpending(&mut set);
            libc::sigismember(&set, libc::SIGPIPE) == 1
        };
        assert!(!pending, "{config:?}: a SIGPIPE was left pending");
    });
}

/// Writes to a child's stdin on `rt`, then reads whether `SIGPIPE` is blocked on the shard
/// and on a blocking-pool thread started from it.
fn masks_after_a_stdin_write_on(rt: &ringsteal_rt::Runtime) -> (bool, bool) {
    rt.block_on(async {
        let mut child = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let (res, _) = stdin.write(b"x".to_vec()).await;
        res.unwrap();
        let on_shard = sigpipe_blocked();
        // The pool has no thread yet: this starts its first one, from this shard.
        let in_pool = ringsteal_rt::spawn_blocking(sigpipe_blocked).await.unwrap();
        drop(stdin);
        assert!(child.wait().await.unwrap().success());
        (on_shard, in_pool)
    })
}

fn write_to_an_exited_child() {
    with_every_runtime("exited reader", 2, |config, rt| {
        rt.block_on(async {
            let mut child = Command::new("true").stdin(Stdio::piped()).spawn().unwrap();
            let stdin = child.stdin.take().unwrap();
            assert!(child.wait().await.unwrap().success());
            // The pipe is close-on-exec, not close-on-fork: a child another test of this
            // binary has forked and not yet exec'd can hold its read end for a moment, and a
            // write then succeeds. Write until the kernel says the pipe is broken.
            let deadline = std::time::Instant::now() + Duration::from_secs(20);
            let (res, buf) = loop {
                let (res, buf) = stdin.write(b"anyone there?".to_vec()).await;
                if res.is_err() {
                    break (res, buf);
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "{config:?}: the pipe never broke"
                );
                ringsteal_rt::yield_now().await;
            };
            assert_eq!(
                res.unwrap_err().kind(),
                io::ErrorKind::BrokenPipe,
                "{config:?}"
            );
            assert_eq!(buf, b"anyone there?", "the buffer comes back");
            // Again from the other shard, with write_all.
            let (res, _) = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                stdin.write_all(vec![1u8; 100_000]).await
            })
            .await
            .unwrap();
            assert_eq!(
                res.unwrap_err().kind(),
                io::ErrorKind::BrokenPipe,
                "{config:?}"
            );
        });
    });
}

#[test]
fn a_read_on_an_empty_blocking_pipe_waits_without_holding_up_its_shard() {
    with_every_runtime("waiting read", 1, |config, rt| {
        rt.block_on(async {
            let (mut child, stdin, stdout) = common::cat_held_open(true);
            let stdout = stdout.unwrap();
            let reader =
                ringsteal_rt::spawn(async move { stdout.read(Vec::with_capacity(64)).await });
            // The one shard keeps running other tasks (and timers) while the read waits.
            ringsteal_rt::time::sleep(Duration::from_millis(5)).await;
            assert!(!reader.is_finished(), "{config:?}: nothing was written yet");
            let (res, _) = stdin.write_all(&b"late"[..]).await;
            res.unwrap();
            let (res, buf) = reader.await.unwrap();
            assert_eq!(res.unwrap(), 4, "{config:?}");
            assert_eq!(buf, b"late");
            drop(stdin);
            assert!(child.wait().await.unwrap().success());
        });
    });
}

#[test]
fn a_pipe_can_be_handed_to_another_child() {
    let rt = common::Config::ALL[0].runtime(1);
    rt.block_on(async {
        let mut first = Command::new("echo")
            .arg("relayed")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let pipe: Stdio = first.stdout.take().unwrap().try_into().unwrap();
        let out = Command::new("tr")
            .args(["a-z", "A-Z"])
            .stdin(pipe)
            .output()
            .await
            .unwrap();
        assert_eq!(out.stdout, b"RELAYED\n");
        assert!(first.wait().await.unwrap().success());
    });
}

#[test]
fn a_pipe_with_a_read_in_flight_is_refused_and_given_back() {
    with_every_runtime("busy pipe handed on", 1, |config, rt| {
        rt.block_on(async {
            let (mut first, stdin, stdout) = common::cat_held_open(true);
            let stdout = stdout.expect("piped stdout");
            {
                // A read that is submitted (the shard's tick ends) and dropped: in flight
                // until its cancellation is reaped. `cat` has nothing to echo yet.
                let mut read = std::pin::pin!(stdout.read(Vec::with_capacity(16)));
                assert!(
                    common::poll_once(read.as_mut()).await.is_pending(),
                    "{config:?}"
                );
                ringsteal_rt::yield_now().await;
                assert!(
                    common::poll_once(read.as_mut()).await.is_pending(),
                    "{config:?}"
                );
            }
            let busy = Stdio::try_from(stdout).expect_err("a read is in flight");
            let mut stdout = busy.into_pipe();
            // Once the shard has reaped the cancellation, the pipe passes.
            let pipe = loop {
                ringsteal_rt::yield_now().await;
                match Stdio::try_from(stdout) {
                    Ok(pipe) => break pipe,
                    Err(busy) => stdout = busy.into_pipe(),
                }
            };
            drop(pipe);
            drop(stdin);
            assert!(first.wait().await.unwrap().success(), "{config:?}");
        });
    });
}

#[test]
fn the_bytes_of_a_read_dropped_after_it_read_go_to_the_next_read() {
    with_every_runtime("dropped read keeps its bytes", 1, |config, rt| {
        rt.block_on(async {
            let (mut child, stdin, stdout) = common::cat_held_open(true);
            let stdout = stdout.expect("piped stdout");
            let (res, _) = stdin.write_all(&b"kept"[..]).await;
            res.unwrap();
            // Wait until cat has echoed, so the read below finds the bytes when submitted.
            while common::queued(&stdout) == 0 {
                ringsteal_rt::yield_now().await;
            }
            {
                // Submitted at its first poll and completed at once; a NOP submitted after it
                // completes after it, so its completion has been reaped when the NOP is
                // done. Then dropped without being polled again, as a `select!` drops the
                // branch it did not take.
                let mut read = std::pin::pin!(stdout.read(Vec::with_capacity(16)));
                assert!(
                    common::poll_once(read.as_mut()).await.is_pending(),
                    "{config:?}"
                );
                ringsteal_rt::op::nop().await.unwrap();
                assert_eq!(
                    common::queued(&stdout),
                    0,
                    "{config:?}: the read took the bytes"
                );
            }
            // Ten seconds: a hang guard only (cat has nothing more to echo).
            let next = ringsteal_rt::time::timeout(
                Duration::from_secs(10),
                stdout.read(Vec::with_capacity(16)),
            )
            .await;
            let (res, buf) = next.unwrap_or_else(|_| panic!("{config:?}: the bytes were lost"));
            assert_eq!(res.unwrap(), 4, "{config:?}");
            assert_eq!(buf, b"kept", "{config:?}");
            drop(stdin);
            let (res, rest) = stdout.read_to_end(Vec::new()).await;
            assert_eq!((res.unwrap(), rest), (0, Vec::new()), "{config:?}");
            assert!(child.wait().await.unwrap().success(), "{config:?}");
        });
    });
}
