//! Zero-copy sends (`op::send_zc`): large buffers arrive intact even when the sender writes
//! over each buffer the moment it comes back (a buffer returned before the kernel let go of
//! its pages would show as corrupted data); the plain-send fallback the builder can force
//! behaves the same; a socket without zero-copy support fails cleanly. Under every wake and
//! ring configuration. (That the buffer waits for the notification, not the first
//! completion, is checked against the op's cell in `src/op/send_zc.rs`.)

mod common;
mod op_support;
mod stream_support;

use std::io::Read;

use common::under_every_config;
use ringsteal_rt::buf::IoBuf;
use ringsteal_rt::op::{self, SharedFd};
use ringsteal_rt::Feature;
use stream_support::{pattern, tcp_pair, Path, PatternCheck};

#[test]
fn large_zero_copy_sends_arrive_intact_although_each_buffer_is_overwritten_on_return() {
    const ROUNDS: u64 = 4;
    const LEN: usize = 8 << 20;
    under_every_config("send_zc, 4 x 8 MiB", 1, |config, b| {
        for path in [Path::Native, Path::NoSendZc] {
            let rt = path.apply(b.clone()).build().unwrap();
            rt.block_on(async {
                let (mut server, client) = tcp_pair();
                let reader = std::thread::spawn(move || {
                    let mut check = PatternCheck::default();
                    let mut chunk = vec![0; 256 * 1024];
                    loop {
                        match server.read(&mut chunk).unwrap() {
                            0 => return check.offset,
                            n => check.feed(&chunk[..n]),
                        }
                    }
                });
                let fd = SharedFd::new(client.into());
                let mut buf = vec![0u8; LEN];
                for round in 0..ROUNDS {
                    let base = round * LEN as u64;
                    for (i, b) in buf.iter_mut().enumerate() {
                        *b = pattern(base + i as u64);
                    }
                    let mut done = 0;
                    while done < LEN {
                        let (res, slice) = op::send_zc(&fd, buf.slice(done..)).await;
                        buf = slice.into_inner();
                        done += res.unwrap_or_else(|e| panic!("{config:?} {path:?}: {e}"));
                    }
                    // The kernel is done with these pages: scribbling over them now must not
                    // change what the reader gets.
                    buf.fill(0xEE);
                }
                drop(fd);
                assert_eq!(
                    reader.join().unwrap(),
                    ROUNDS * LEN as u64,
                    "{config:?} {path:?}"
                );
            });
        }
    });
}

#[test]
fn a_zero_copy_send_on_a_socket_without_zero_copy_fails_and_returns_the_buffer() {
    under_every_config("send_zc on a Unix socket", 1, |config, b| {
        let rt = b.build().unwrap();
        if !rt.features().supports(Feature::SendZc) {
            return;
        }
        rt.block_on(async {
            let (tx, _rx) = std::os::unix::net::UnixStream::pair().unwrap();
            let (res, buf) = op::send_zc(&SharedFd::new(tx.into()), b"data".to_vec()).await;
            let err = res.unwrap_err();
            assert_eq!(
                err.raw_os_error(),
                Some(libc::EOPNOTSUPP),
                "{config:?}: {err}"
            );
            assert_eq!(buf, b"data");
        });
    });
}

#[test]
fn dropping_a_zero_copy_send_that_owes_only_its_notification_costs_no_cancels() {
    under_every_config(
        "dropped send_zc awaiting its notification",
        1,
        |config, b| {
            let rt = b.build().unwrap();
            if !rt.features().supports(Feature::SendZc) {
                return;
            }
            let h = rt.handle();
            rt.block_on(async {
                // The peer never reads: the send's pages stay referenced by its queue, so the
                // notification does not come while the test runs; the result does (a short send).
                let (peer, tx) = tcp_pair();
                let mut send = Box::pin(op::send_zc(&SharedFd::new(tx.into()), vec![7u8; 4 << 20]));
                assert!(op_support::poll_once(&mut send).await.is_pending());
                while bytes_queued(&peer) == 0 {
                    op::nop().await.unwrap();
                }
                // The result's CQE is reaped by the next few ticks.
                for _ in 0..3 {
                    op::nop().await.unwrap();
                }
                let before = h.stats().total().sqes_submitted;
                drop(send);
                for _ in 0..10 {
                    op::nop().await.unwrap();
                }
                // (An SQPOLL ring counts the SQEs its poller took at the next submission,
                // so there the count may lag by the last NOP: never below zero.)
                let cancels = h.stats().total().sqes_submitted.saturating_sub(before + 10);
                // None once the result is in (a cancel finds nothing, and was aimed again up to
                // 64 times); at most a cancel pair if the result had not been reaped yet.
                assert!(
                    cancels <= 2,
                    "{config:?}: {cancels} cancel SQEs for one dropped send"
                );
                drop(peer);
            });
        },
    );
}

#[test]
fn a_zero_copy_send_that_owes_only_its_notification_lets_its_socket_close() {
    under_every_config(
        "send_zc awaiting its notification keeps no descriptor",
        1,
        |config, b| {
            let rt = b.build().unwrap();
            if !rt.features().supports(Feature::SendZc) {
                return;
            }
            rt.block_on(async {
                // The peer never reads, so the notification does not come while the socket is
                // open; the result (a short send) does.
                let (peer, tx) = tcp_pair();
                let fd = SharedFd::new(tx.into());
                let mut send = Box::pin(op::send_zc(&fd, vec![7u8; 4 << 20]));
                assert!(op_support::poll_once(&mut send).await.is_pending());
                // The send, still alive and owing its notification, must not keep the
                // descriptor: its owner can take it back (and close the socket, which is what
                // lets a peer that stops reading be dropped). Ten seconds: a hang guard only.
                let owned = ringsteal_rt::time::timeout(
                    std::time::Duration::from_secs(10),
                    fd.into_owned(),
                )
                .await;
                let owned =
                    owned.unwrap_or_else(|_| panic!("{config:?}: the send kept the descriptor"));
                assert!(bytes_queued(&peer) > 0, "{config:?}: the send had sent");
                // Closed with data queued, then reset by the peer closing unread: the kernel
                // frees the pages and posts the notification, and the send completes.
                drop(owned);
                drop(peer);
                let (res, buf) = send.await;
                assert!(res.unwrap() > 0, "{config:?}");
                assert_eq!(buf.len(), 4 << 20);
            });
        },
    );
}

#[test]
fn a_dropped_zero_copy_send_frees_its_buffer_once_its_notification_comes() {
    under_every_config("dropped send_zc, its buffer freed", 1, |config, b| {
        let rt = b.build().unwrap();
        if !rt.features().supports(Feature::SendZc) {
            return;
        }
        let probe = op_support::Probe::new(rt.handle());
        rt.block_on(async {
            let (peer, tx) = tcp_pair();
            let fd = SharedFd::new(tx.into());
            let mut buf = probe.buf(0, 4 << 20);
            buf.data.resize(4 << 20, 7);
            let mut send = Box::pin(op::send_zc(&fd, buf));
            assert!(op_support::poll_once(&mut send).await.is_pending());
            while bytes_queued(&peer) == 0 {
                op::nop().await.unwrap();
            }
            drop(send);
            assert_eq!(
                probe.drops(),
                0,
                "{config:?}: freed before the notification"
            );
            // Closing both ends with data queued resets the connection: the kernel lets go
            // of the pages and posts the notification, and the buffer must go then, while
            // the shard stays busy (the nops below never let it idle).
            drop(fd);
            drop(peer);
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while probe.drops() == 0 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{config:?}: the buffer outlived its notification"
                );
                op::nop().await.unwrap();
            }
        });
    });
}

/// A runtime dropped while a zero-copy send owes only its notification to a silent peer
/// and another request is still running in a kernel worker (a large file read, which a
/// cancel cannot stop): the drain waits for the read, then gives the notification up. (It
/// kept its eventfd read armed for the notification after its first wait, and then waited
/// out the whole shutdown timeout.)
#[test]
fn a_drop_waits_for_a_running_read_but_not_for_a_silent_peers_notification() {
    let path = std::env::temp_dir().join(format!("ringsteal-zc-drain-{}", std::process::id()));
    std::fs::write(&path, vec![3u8; 64 << 20]).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let file = SharedFd::new(file.into());
    under_every_config(
        "drop with a notification and a running read owed",
        1,
        move |config, b| {
            let timeout = std::time::Duration::from_secs(40);
            let rt = b.shutdown_timeout(timeout).build().unwrap();
            if !rt.features().supports(Feature::SendZc) {
                return;
            }
            let file = file.clone();
            let (peer, read) = rt.block_on(async move {
                let (peer, tx) = tcp_pair();
                let mut send = Box::pin(op::send_zc(&SharedFd::new(tx.into()), vec![7u8; 4 << 20]));
                assert!(op_support::poll_once(&mut send).await.is_pending());
                while bytes_queued(&peer) == 0 {
                    op::nop().await.unwrap();
                }
                drop(send);
                let mut read =
                    Box::pin(op::read_at(&file, Vec::with_capacity(64 << 20), 0).force_async());
                assert!(op_support::poll_once(&mut read).await.is_pending());
                // Submitted, and taken by a kernel worker.
                for _ in 0..3 {
                    op::nop().await.unwrap();
                }
                (peer, read)
            });
            let start = std::time::Instant::now();
            drop(read);
            drop(rt);
            let took = start.elapsed();
            assert!(
                took < timeout / 4,
                "{config:?}: the drop took {took:?}, waiting on the silent peer's notification"
            );
            drop(peer);
        },
    );
}

/// Bytes waiting in `s`'s receive queue (`FIONREAD`).
fn bytes_queued(s: &std::net::TcpStream) -> usize {
    use std::os::fd::AsRawFd;
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int.
    let r = unsafe { libc::ioctl(s.as_raw_fd(), libc::FIONREAD, &mut n) };
    assert_eq!(r, 0);
    n as usize
}
