//! Writing to a peer that went away is an error, never a `SIGPIPE`: sends carry
//! `MSG_NOSIGNAL` (io_uring's `SEND`/`SENDMSG` add it themselves on recent kernels, a plain
//! `send(2)` does not), and splices into a socket run where the signal cannot kill the
//! process. Rust programs ignore `SIGPIPE`, which would hide one, so this binary restores
//! the default action (terminate) first, and checks in a child process that a plain
//! `send(2)` without the flag really dies of it.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::io::ErrorKind;

use common::with_every_runtime;
use ringsteal_net::UnixStream;
use support::*;

fn assert_peer_gone(kind: ErrorKind) {
    assert!(
        matches!(kind, ErrorKind::BrokenPipe | ErrorKind::ConnectionReset),
        "{kind:?}"
    );
}

/// In a child process: a plain `send(2)` without `MSG_NOSIGNAL` to a closed peer. Returns
/// the signal that ended the child, if any.
fn plain_send_in_a_child() -> Option<i32> {
    let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
    drop(b);
    use std::os::fd::AsRawFd;
    let fd = a.as_raw_fd();
    // SAFETY: the child only calls async-signal-safe functions (send, _exit) before exiting.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: as above.
        unsafe {
            libc::send(fd, b"x".as_ptr().cast(), 1, 0);
            libc::_exit(0);
        }
    }
    let mut status = 0;
    // SAFETY: waits for our own child.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status))
}

#[test]
fn writes_to_a_vanished_peer_fail_without_killing_the_process() {
    // SAFETY: setting a signal disposition to the default; no handler is involved.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    assert_eq!(
        plain_send_in_a_child(),
        Some(libc::SIGPIPE),
        "the control did not die of SIGPIPE"
    );
    with_every_runtime("no SIGPIPE", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            drop(server);
            let mut failures = Vec::new();
            for round in 0..50 {
                let res = match round % 3 {
                    0 => client.write(vec![1u8; 32 * 1024]).await.0.map(drop),
                    1 => client
                        .writev(vec![vec![2u8; 1024], vec![3u8; 1024]])
                        .await
                        .0
                        .map(drop),
                    _ => {
                        client
                            .write_all_vectored((b"a".to_vec(), vec![4u8; 8192]))
                            .await
                            .0
                    }
                };
                if let Err(e) = res {
                    failures.push(e.kind());
                }
            }
            assert!(
                failures.len() > 40,
                "writes to a closed peer kept succeeding"
            );
            failures.into_iter().for_each(assert_peer_gone);

            let (a, b) = UnixStream::pair().unwrap();
            drop(b);
            let (res, _) = a.write(b"gone".to_vec()).await;
            assert_peer_gone(res.unwrap_err().kind());
            let (res, _) = a.writev(vec![b"gone".to_vec()]).await;
            assert_peer_gone(res.unwrap_err().kind());

            // A splice from a stream into a socket whose peer is gone.
            let (src, feeder) = UnixStream::pair().unwrap();
            let (sink, gone) = UnixStream::pair().unwrap();
            drop(gone);
            feeder.write_all(vec![5u8; 16 * 1024]).await.0.unwrap();
            drop(feeder);
            let (mut src, mut sink) = (src, sink);
            let err = ringsteal_rt::io::copy_spliced(&mut src, &mut sink)
                .await
                .unwrap_err();
            assert_peer_gone(err.kind());
        })
    });
}
