//! A [`BufRing`] that outlives its [`Ring`]: it unregisters its group from the ring it was
//! registered with, never from whatever the ring's descriptor number names later (another
//! ring, once the number is reused). One test in its own process, so that the next ring
//! created here gets the number the dropped one freed, as it would in a real program.

use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;

use ringsteal_uring::{opcode, BufRing, Features, Ring};

const GROUP: u16 = 7;

#[test]
fn a_buffer_ring_dropped_after_its_ring_leaves_another_rings_group_alone() {
    if !Features::get().expect("io_uring is available").pbuf_ring() {
        eprintln!("skipped: no provided-buffer rings here (Linux 5.19+)");
        return;
    }
    let first = Ring::new(4).unwrap();
    let first_bufs = BufRing::new(&first, GROUP, 4, 64).unwrap();
    let number = first.fd();
    drop(first);
    // The next descriptor: the freed number, unless the buffer ring still holds it.
    let mut second = Ring::new(4).unwrap();
    let mut second_bufs = BufRing::new(&second, GROUP, 4, 64).unwrap();
    eprintln!(
        "first ring's number {number}, second ring's {}",
        second.fd()
    );
    // Must unregister group 7 of the first ring, not of the second.
    drop(first_bufs);

    let (mut tx, rx) = UnixStream::pair().unwrap();
    tx.write_all(b"hello").unwrap();
    let sqe = opcode::read_provided(rx.as_raw_fd(), 64, u64::MAX, GROUP).with_user_data(1);
    // SAFETY: the socket and the buffer ring outlive the request, reaped below.
    unsafe { second.push(&sqe) }.unwrap();
    second.submit_and_wait(1).unwrap();
    let cqe = second.pop_cqe().unwrap();
    assert_eq!(
        cqe.res, 5,
        "the second ring's group {GROUP} was unregistered by the first ring's buffer ring"
    );
    // SAFETY: a real completion of this ring, for a request that selected from the group.
    let (_, data) = unsafe { second_bufs.take(&cqe) }.unwrap();
    assert_eq!(data, b"hello");
}
