//! Ops polled where no shard runs (a plain thread, a thread that entered a runtime handle, a
//! blocking-pool thread) cannot be submitted: the first poll returns an error saying that
//! ringsteal I/O must be polled on a ringsteal shard, with every buffer given back. Nothing
//! panics. The polls are made by hand with a std `Wake` waker, no executor involved.

mod op_support;

use std::ffi::CString;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use ringsteal_rt::op::{self, SharedFd};
use ringsteal_rt::Runtime;

use op_support::*;

/// Polls `fut` once by hand and expects it to be ready.
fn poll_by_hand<F: Future + Unpin>(mut fut: F) -> F::Output {
    let waker = thread_waker();
    let mut cx = Context::from_waker(&waker);
    match Pin::new(&mut fut).poll(&mut cx) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("an op polled off-shard is pending: nothing will ever wake it"),
    }
}

fn assert_off_shard_error(err: &io::Error, what: &str) {
    assert_eq!(err.kind(), io::ErrorKind::Other, "{what}: {err}");
    let msg = err.to_string();
    assert!(
        msg.contains("must be polled on a ringsteal shard"),
        "{what}: the error does not say where ops must run: {msg}"
    );
}

fn dev_zero() -> SharedFd {
    SharedFd::new(std::fs::File::open("/dev/zero").unwrap().into())
}

/// Every kind of op, polled once here, fails with the off-shard error and gives its buffers
/// back unchanged.
fn every_op_fails_off_shard(where_: &str) {
    let fd = dev_zero();
    let (res, buf) = poll_by_hand(op::read_at(&fd, vec![5u8; 3], 0));
    assert_off_shard_error(&res.unwrap_err(), &format!("{where_}: read_at"));
    assert_eq!(buf, [5, 5, 5], "{where_}: read_at's buffer");

    let (res, buf) =
        poll_by_hand(op::read_at(&fd, [1u8; 4], 0).with_timeout(Duration::from_secs(1)));
    assert_off_shard_error(
        &res.unwrap_err(),
        &format!("{where_}: read_at with a deadline"),
    );
    assert_eq!(buf, [1; 4]);

    let (res, buf) = poll_by_hand(op::write_at(&fd, "text", 0));
    assert_off_shard_error(&res.unwrap_err(), &format!("{where_}: write_at"));
    assert_eq!(buf, "text");

    let (res, bufs) = poll_by_hand(op::readv_at(
        &fd,
        vec![vec![7u8; 2], Vec::with_capacity(4)],
        0,
    ));
    assert_off_shard_error(&res.unwrap_err(), &format!("{where_}: readv_at"));
    assert_eq!(bufs, [vec![7u8; 2], vec![]]);

    let (res, bufs) = poll_by_hand(op::writev_at(&fd, vec![b"ab".to_vec(), b"c".to_vec()], 0));
    assert_off_shard_error(&res.unwrap_err(), &format!("{where_}: writev_at"));
    assert_eq!(bufs, [b"ab".to_vec(), b"c".to_vec()]);

    let (res, buf) = poll_by_hand(op::copy_linked(&fd, 0, &fd, 0, vec![3u8; 8], 8));
    assert_off_shard_error(&res.unwrap_err(), &format!("{where_}: copy_linked"));
    assert_eq!(buf, [3; 8]);

    let res = poll_by_hand(op::openat(
        None,
        CString::new("/dev/null").unwrap(),
        libc::O_RDONLY,
        0,
    ));
    assert_off_shard_error(&res.unwrap_err(), &format!("{where_}: openat"));

    let res = poll_by_hand(op::statx_fd(&fd));
    assert_off_shard_error(&res.unwrap_err(), &format!("{where_}: statx"));

    let res = poll_by_hand(op::fsync(&fd, false));
    assert_off_shard_error(&res.unwrap_err(), &format!("{where_}: fsync"));

    let res = poll_by_hand(op::nop());
    assert_off_shard_error(&res.unwrap_err(), &format!("{where_}: nop"));

    // A close that could not be submitted still closes (the descriptor is not leaked).
    let file = std::fs::File::open("/dev/null").unwrap();
    let res = poll_by_hand(op::close(file.into()));
    assert_off_shard_error(&res.unwrap_err(), &format!("{where_}: close"));

    // Only this test's clone holds the descriptor again: no op kept one.
    assert_eq!(
        fd.holders(),
        1,
        "{where_}: an op that failed kept the descriptor"
    );
}

#[test]
fn ops_polled_on_a_plain_thread_fail_with_an_error_naming_ringsteal_shards_and_give_their_buffers_back(
) {
    watchdog("plain thread", || {
        every_op_fails_off_shard("a plain thread")
    });
}

#[test]
fn ops_polled_on_a_thread_that_entered_a_runtime_handle_fail_the_same_way() {
    watchdog("entered thread", || {
        let rt = Runtime::builder().shards(1).build().unwrap();
        let handle = rt.handle();
        std::thread::spawn(move || {
            let _entered = handle.enter();
            every_op_fails_off_shard("an entered thread");
        })
        .join()
        .unwrap();
    });
}

#[test]
fn ops_polled_on_a_blocking_pool_thread_fail_the_same_way() {
    for config in ONE_AND_TWO_SHARDS {
        on_every_shard(config, |_| async {
            ringsteal_rt::spawn_blocking(|| every_op_fails_off_shard("a blocking-pool thread"))
                .await
                .unwrap();
        });
    }
}

#[test]
fn an_op_made_inside_a_runtime_but_first_polled_outside_fails_the_same_way() {
    watchdog("made inside", || {
        let rt = Runtime::builder().shards(1).build().unwrap();
        let fd = dev_zero();
        // Made (not polled) inside: block_on hands out the unpolled op itself.
        #[allow(clippy::async_yields_async)]
        let read = rt.block_on(async { op::read_at(&fd, vec![9u8; 2], 0) });
        let (res, buf) = poll_by_hand(read);
        assert_off_shard_error(&res.unwrap_err(), "after block_on returned");
        assert_eq!(buf, [9, 9]);
    });
}
