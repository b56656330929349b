//! A spliced copy dropped while its splice waits for a socket (a peer that stopped reading,
//! a source with nothing to send) lets go at once: closing the copy's pipe must not wait for
//! the kernel's pipe lock, which that waiting splice holds. (It did: the shard's thread sat
//! in `close(2)` until the socket moved, every task on the shard with it.)

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd};
use std::sync::mpsc;
use std::time::Duration;

use common::{unique, with_every_runtime};
use ringsteal_rt::io;
use ringsteal_rt::time::timeout;
use support::*;

/// Long enough for the splice to be waiting on the socket when it is dropped.
const WAIT: Duration = Duration::from_millis(300);

/// A std handle on `s`'s socket (a duplicate descriptor), for a thread to read from.
fn std_clone(s: &impl AsRawFd) -> std::net::TcpStream {
    // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor or -1.
    let fd = unsafe { libc::fcntl(s.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
    assert!(fd >= 0, "dup: {}", std::io::Error::last_os_error());
    // SAFETY: the descriptor is new and ours.
    unsafe { std::net::TcpStream::from_raw_fd(fd) }
}

/// Runs `drop_it` (which drops a copy mid-splice). If it has not returned within
/// [`OP_GUARD`], a thread reads everything `stalled_reader` offers (or writes a byte to
/// `stalled_writer`), which frees a shard stuck in the drop, and the test fails: the drop
/// waited for the socket.
async fn drop_returns_without_the_socket_moving(
    stalled_reader: Option<std::net::TcpStream>,
    stalled_writer: Option<std::net::TcpStream>,
    drop_it: impl std::future::Future<Output = ()>,
) {
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let rescue = std::thread::spawn(move || {
        if done_rx.recv_timeout(OP_GUARD).is_ok() {
            return false;
        }
        if let Some(mut r) = stalled_reader {
            r.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
            let mut buf = vec![0; 1 << 20];
            while r.read(&mut buf).is_ok_and(|n| n > 0) {}
        }
        if let Some(mut w) = stalled_writer {
            let _ = std::io::Write::write_all(&mut w, b"!");
        }
        true
    });
    drop_it.await;
    let _ = done_tx.send(());
    let rescued = rescue.join().unwrap();
    assert!(
        !rescued,
        "dropping the copy blocked the shard until the socket moved"
    );
}

#[test]
fn a_file_copy_to_a_peer_that_stopped_reading_can_be_dropped() {
    with_every_runtime("dropped file copy", 1, |_, rt| {
        rt.block_on(async {
            // Sparse: 32 MiB of zeroes that take no disk.
            let path = std::env::temp_dir().join(format!(
                "ringsteal-copy-drop-{}-{}",
                std::process::id(),
                unique()
            ));
            std::fs::File::create(&path)
                .unwrap()
                .set_len(32 << 20)
                .unwrap();
            let (client, server) = tcp_pair().await; // the client never reads
            let mut file = ringsteal_fs::File::open(&path).await.unwrap();
            drop_returns_without_the_socket_moving(Some(std_clone(&client)), None, async {
                let mut sink = &server;
                // `copy` splices from a regular file: the splice out of the pipe waits for
                // room in the socket when the timeout drops it.
                let res = timeout(WAIT, io::copy(&mut file, &mut sink)).await;
                assert!(res.is_err(), "32 MiB went into a socket nobody reads");
            })
            .await;
            std::fs::remove_file(&path).unwrap();
        })
    });
}

#[test]
fn a_spliced_copy_from_a_silent_socket_can_be_dropped() {
    with_every_runtime("dropped socket splice", 1, |_, rt| {
        rt.block_on(async {
            let (silent, src) = tcp_pair().await; // `silent` never writes
            let (dst, _peer) = tcp_pair().await;
            drop_returns_without_the_socket_moving(None, Some(std_clone(&silent)), async {
                let (mut from, mut to) = (&src, &dst);
                // The splice into the pipe waits for data when the timeout drops it.
                let res = timeout(WAIT, io::copy_spliced(&mut from, &mut to)).await;
                assert!(res.is_err(), "nothing was ever sent");
            })
            .await;
        })
    });
}
