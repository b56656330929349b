//! `IORING_OP_MSG_RING` between threads: how one shard wakes (or passes a value to) another.
//! The receiver blocks in `io_uring_enter` on its own thread; the injected CQE is what wakes it.

mod common;

use std::sync::mpsc;
use std::thread;

use ringsteal_uring::{opcode, send_msg_ring, Features, Ring, RingBuilder};

/// What the receiving thread saw: `(user_data, res)` of the one CQE that woke it.
type Received = (u64, i32);

/// Starts a thread that creates a ring with `build`, reports the ring's fd, blocks in
/// `submit_and_wait(1)` and reports the CQE that woke it.
fn blocked_receiver(
    build: fn() -> Ring,
) -> (i32, mpsc::Receiver<Received>, thread::JoinHandle<()>) {
    let (fd_tx, fd_rx) = mpsc::channel();
    let (cqe_tx, cqe_rx) = mpsc::channel();
    let handle = thread::spawn(move || {
        let mut ring = build();
        fd_tx.send(ring.fd()).unwrap();
        ring.submit_and_wait(1).expect("blocking wait");
        let cqe = ring.pop_cqe().expect("woken with a completion");
        cqe_tx.send((cqe.user_data, cqe.res)).unwrap();
        // The ring (and its fd) lives until the CQE is reaped: the sender never targets a
        // closed ring.
    });
    let fd = fd_rx
        .recv_timeout(common::HANG_GUARD)
        .expect("receiver ring");
    (fd, cqe_rx, handle)
}

fn require_msg_ring() -> bool {
    let ok = Features::get().expect("io_uring is available").msg_ring();
    if !ok {
        eprintln!("skipped: this kernel has no IORING_OP_MSG_RING (Linux 5.18+)");
    }
    ok
}

fn msg_ring_from_this_thread(target: i32, res: u32, user_data: u64) {
    let mut sender = Ring::new(4).expect("io_uring is available");
    // SAFETY: MSG_RING with IORING_MSG_DATA carries values only; the target ring outlives the
    // request because its thread waits for this very message.
    unsafe { sender.push(&opcode::msg_ring(target, res, user_data, 0, 0).with_user_data(1)) }
        .unwrap();
    let own = common::wait_one(&mut sender);
    assert_eq!(
        (own.user_data, own.res),
        (1, 0),
        "the sender's own CQE reports success"
    );
}

#[test]
fn msg_ring_wakes_a_ring_blocked_on_another_thread_with_the_given_user_data_and_res() {
    if !require_msg_ring() {
        return;
    }
    let (fd, received, handle) = blocked_receiver(|| Ring::new(4).expect("receiver ring"));
    msg_ring_from_this_thread(fd, 42, 0x5eed_0000_0000_0042);
    let got = received
        .recv_timeout(common::HANG_GUARD)
        .expect("the receiver woke");
    assert_eq!(got, (0x5eed_0000_0000_0042, 42));
    handle.join().unwrap();
}

#[test]
fn msg_ring_wakes_a_single_issuer_defer_taskrun_ring_blocked_on_its_own_thread() {
    if !require_msg_ring() || !Features::get().unwrap().defer_taskrun() {
        eprintln!("skipped: needs MSG_RING and SINGLE_ISSUER|DEFER_TASKRUN (Linux 6.1+)");
        return;
    }
    // The shard ring of the runtime: created on the thread that will use it.
    let (fd, received, handle) = blocked_receiver(|| {
        RingBuilder::new(4)
            .single_issuer()
            .defer_taskrun()
            .build()
            .expect("receiver ring")
    });
    msg_ring_from_this_thread(fd, 7, u64::MAX - 1);
    let got = received
        .recv_timeout(common::HANG_GUARD)
        .expect("the receiver woke");
    assert_eq!(got, (u64::MAX - 1, 7));
    handle.join().unwrap();
}

#[test]
fn send_msg_ring_wakes_a_ring_without_a_ring_of_its_own() {
    let features = Features::get().expect("io_uring is available");
    if !features.send_msg_ring() {
        eprintln!("skipped: this kernel has no IORING_REGISTER_SEND_MSG_RING (Linux 6.13+)");
        return;
    }
    let (fd, received, handle) = blocked_receiver(|| Ring::new(4).expect("receiver ring"));
    send_msg_ring(fd, 5, 99).expect("ring-less MSG_RING");
    let got = received
        .recv_timeout(common::HANG_GUARD)
        .expect("the receiver woke");
    assert_eq!(got, (99, 5));
    handle.join().unwrap();
}
