//! [`BufRing::leak`]: a group given up while the kernel may still write into it keeps its
//! memory mapped but does not keep its ring open, so closing the [`Ring`] ends the io_uring
//! instance (whose teardown cancels what is in flight) instead of leaking the descriptor too.
//! One test in its own process, so no other test opens a descriptor between the ring's close
//! and the check.

use ringsteal_uring::{BufRing, Features, Ring};

/// True if `fd` is an open descriptor of this process.
fn is_open(fd: i32) -> bool {
    // SAFETY: F_GETFD only reads the descriptor table.
    unsafe { libc::fcntl(fd, libc::F_GETFD) != -1 }
}

#[test]
fn a_leaked_buffer_ring_lets_its_ring_close() {
    if !Features::get().expect("io_uring is available").pbuf_ring() {
        eprintln!("skipped: no provided-buffer rings here (Linux 5.19+)");
        return;
    }
    // A buffer ring dropped normally keeps the ring open until it has unregistered.
    let ring = Ring::new(4).unwrap();
    let bufs = BufRing::new(&ring, 3, 4, 64).unwrap();
    let number = ring.fd();
    drop(ring);
    assert!(is_open(number), "the buffer ring holds its ring open");
    drop(bufs);
    assert!(!is_open(number), "closed with the buffer ring");

    // A leaked one does not.
    let ring = Ring::new(4).unwrap();
    let bufs = BufRing::new(&ring, 3, 4, 64).unwrap();
    let number = ring.fd();
    bufs.leak();
    assert!(is_open(number), "the ring is still ours");
    drop(ring);
    assert!(!is_open(number), "a leaked buffer ring kept its ring open");
}
