//! `SINGLE_ISSUER | DEFER_TASKRUN` rings, the kind each shard owns: completions wait for the
//! owning thread to enter with GETEVENTS, `TASKRUN_FLAG` says when they are waiting (so a busy
//! shard can skip the syscall when nothing is pending), and only one thread may submit.

mod common;

use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::thread;

use ringsteal_uring::{opcode, Features, Ring, RingBuilder};

fn defer_taskrun_supported() -> bool {
    let ok = Features::get()
        .expect("io_uring is available")
        .defer_taskrun();
    if !ok {
        eprintln!("skipped: this kernel has no SINGLE_ISSUER|DEFER_TASKRUN (Linux 6.1+)");
    }
    ok
}

/// A ring with a RECV armed on an empty socket: the data sent next completes it in the
/// kernel, as deferred work for this thread.
fn ring_with_pending_recv(
    builder: RingBuilder,
    buf: &mut [u8; 16],
) -> (Ring, UnixStream, UnixStream) {
    let mut ring = builder.build().expect("ring");
    let (tx, rx) = UnixStream::pair().unwrap();
    let sqe = opcode::recv(rx.as_raw_fd(), buf.as_mut_ptr(), 16, 0).with_user_data(9);
    // SAFETY: `buf` and `rx` outlive the request: every test reaps its CQE before returning.
    unsafe { ring.push(&sqe) }.unwrap();
    ring.submit().expect("submit");
    assert_eq!(ring.cq_ready(), 0, "nothing to receive yet");
    (ring, tx, rx)
}

#[test]
fn a_defer_taskrun_ring_posts_a_completion_only_when_its_thread_enters_with_getevents() {
    if !defer_taskrun_supported() {
        return;
    }
    let mut buf = [0u8; 16];
    let builder = RingBuilder::new(8).single_issuer().defer_taskrun();
    let (mut ring, mut tx, _rx) = ring_with_pending_recv(builder, &mut buf);

    // The write completes the receive inside the kernel before write_all returns...
    tx.write_all(b"ping").unwrap();
    // ...but the CQE is not posted until this thread asks for it.
    assert_eq!(
        ring.cq_ready(),
        0,
        "DEFER_TASKRUN posted a CQE without an enter"
    );
    ring.flush_completions().expect("enter with GETEVENTS");
    assert_eq!(
        ring.cq_ready(),
        1,
        "the enter with GETEVENTS posted the completion"
    );
    let cqe = ring.pop_cqe().unwrap();
    assert_eq!((cqe.user_data, cqe.res), (9, 4));
    assert_eq!(&buf[..4], b"ping");
}

#[test]
fn taskrun_flag_reports_deferred_completion_work_until_it_has_run() {
    if !defer_taskrun_supported() {
        return;
    }
    let mut buf = [0u8; 16];
    let builder = RingBuilder::new(8)
        .single_issuer()
        .defer_taskrun()
        .taskrun_flag();
    let (mut ring, mut tx, _rx) = ring_with_pending_recv(builder, &mut buf);
    assert!(
        !ring.taskrun_pending(),
        "no work is pending before the data arrives"
    );

    tx.write_all(b"pong").unwrap();
    assert!(
        ring.taskrun_pending(),
        "with SINGLE_ISSUER|DEFER_TASKRUN|TASKRUN_FLAG this kernel did not set \
         IORING_SQ_TASKRUN while a completion waited for an enter (sq_flags = {:#x}); a shard \
         cannot use the flag to skip io_uring_enter on this kernel",
        ring.sq_flags()
    );
    assert_eq!(ring.cq_ready(), 0);
    ring.flush_completions().expect("enter with GETEVENTS");
    assert!(
        !ring.taskrun_pending(),
        "the flag clears once the work has run"
    );
    let cqe = ring.pop_cqe().expect("the completion was posted");
    assert_eq!((cqe.user_data, cqe.res), (9, 4));
    assert_eq!(&buf[..4], b"pong");
}

#[test]
fn a_single_issuer_ring_refuses_submissions_from_another_thread() {
    if !defer_taskrun_supported() {
        return;
    }
    let ring = RingBuilder::new(4).single_issuer().build().expect("ring");
    let mut ring = thread::spawn(move || {
        let mut ring = ring;
        // SAFETY: a NOP references no memory.
        unsafe { ring.push(&opcode::nop().with_user_data(1)) }.unwrap();
        let err = ring.submit().expect_err("another thread submitted");
        assert_eq!(err.raw_os_error(), Some(libc::EEXIST), "{err}");
        ring
    })
    .join()
    .unwrap();
    // Back on the creating thread, the queued NOP goes through.
    let cqe = common::wait_one(&mut ring);
    assert_eq!((cqe.user_data, cqe.res), (1, 0));
}

#[test]
fn a_disabled_single_issuer_ring_belongs_to_the_thread_that_enables_it() {
    if !defer_taskrun_supported() {
        return;
    }
    // Created here, used there: the way a runtime can build a shard's ring up front.
    let ring = RingBuilder::new(4)
        .single_issuer()
        .defer_taskrun()
        .r_disabled()
        .build()
        .expect("ring");
    thread::spawn(move || {
        let mut ring = ring;
        ring.enable().expect("IORING_REGISTER_ENABLE_RINGS");
        // SAFETY: a NOP references no memory.
        unsafe { ring.push(&opcode::nop().with_user_data(2)) }.unwrap();
        let cqe = common::wait_one(&mut ring);
        assert_eq!((cqe.user_data, cqe.res), (2, 0));
    })
    .join()
    .expect("the enabling thread submitted and reaped a NOP");
}
