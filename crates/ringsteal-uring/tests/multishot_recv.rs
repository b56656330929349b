//! A multishot RECV that picks buffers from a provided-buffer ring ([`BufRing`]): every byte
//! arrives, in order, while buffers are recycled; when the kernel ends the request (a CQE
//! without `IORING_CQE_F_MORE`, including `-ENOBUFS` when the ring ran dry) the application
//! recycles and re-arms, and no data is lost.

mod common;

use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::thread;
use std::time::Instant;

use ringsteal_uring::abi::IORING_CQE_F_MORE;
use ringsteal_uring::{opcode, BufRing, Features, Ring};

const GROUP: u16 = 3;
const BUFFERS: u16 = 8;
const BUF_LEN: u32 = 512;
/// How many buffers to recycle straight away after each re-arm before holding on to them,
/// so the ring runs dry and the kernel ends the request with `-ENOBUFS`.
const RECYCLE_BEFORE_HOLDING: u32 = 16;

#[test]
fn a_multishot_recv_with_a_buffer_ring_receives_every_byte_in_order_across_re_arms() {
    if !Features::get()
        .expect("io_uring is available")
        .multishot_recv()
    {
        eprintln!("skipped: this kernel has no multishot recv with buffer rings (Linux 6.0+)");
        return;
    }
    let data = common::pattern(256 * 1024);
    let (mut tx, rx) = UnixStream::pair().unwrap();
    let expected = data.clone();
    let writer = thread::spawn(move || {
        // Blocks while the socket buffer is full, so the reader sees many partial receives.
        tx.write_all(&data).unwrap();
        // Dropping `tx` closes the stream: the reader gets a 0-byte receive (EOF).
    });

    let mut ring = Ring::new(16).expect("io_uring is available");
    let mut bufs = BufRing::new(&ring, GROUP, BUFFERS, BUF_LEN).expect("register the buffer ring");
    let arm = |ring: &mut Ring, generation: u64| {
        let sqe = opcode::recv_multishot(rx.as_raw_fd(), GROUP, 0).with_user_data(generation);
        // SAFETY: `rx` and `bufs` outlive the request: the loop below runs until its final
        // CQE (one without F_MORE) and only then re-arms or returns.
        unsafe { ring.push(&sqe) }.expect("SQ space for the re-arm");
    };

    let deadline = Instant::now() + common::HANG_GUARD;
    let mut received = Vec::with_capacity(expected.len());
    let mut held: Vec<u16> = Vec::new();
    let (mut generation, mut since_arm, mut ran_dry, mut buffers_used) = (0u64, 0u32, 0u32, 0u32);
    arm(&mut ring, generation);
    'recv: loop {
        assert!(
            Instant::now() < deadline,
            "hung with {} bytes received",
            received.len()
        );
        for cqe in common::wait_cqes(&mut ring, 1) {
            assert_eq!(
                cqe.user_data, generation,
                "a CQE of an ended request arrived late"
            );
            let more = cqe.flags & IORING_CQE_F_MORE != 0;
            match cqe.res {
                0 => {
                    assert!(!more, "EOF ends the request");
                    break 'recv;
                }
                n if n > 0 => {
                    // SAFETY: a completion of this ring for a request selecting from `bufs`,
                    // reaped once.
                    let (bid, chunk) = unsafe { bufs.take(&cqe) }.expect("the CQE names a buffer");
                    assert_eq!(chunk.len(), n as usize);
                    received.extend_from_slice(chunk);
                    buffers_used += 1;
                    since_arm += 1;
                    if since_arm <= RECYCLE_BEFORE_HOLDING {
                        assert!(bufs.recycle(bid));
                    } else {
                        held.push(bid);
                    }
                }
                n if n == -libc::ENOBUFS => {
                    assert!(!more, "running dry ends the request");
                    ran_dry += 1;
                }
                n => panic!("recv failed: {}", std::io::Error::from_raw_os_error(-n)),
            }
            if !more {
                // The request is over: give every held buffer back, then arm a new one.
                for bid in held.drain(..) {
                    assert!(bufs.recycle(bid));
                }
                generation += 1;
                since_arm = 0;
                arm(&mut ring, generation);
            }
        }
    }
    writer.join().unwrap();
    assert_eq!(received.len(), expected.len(), "bytes lost or duplicated");
    assert!(received == expected, "bytes arrived out of order");
    assert!(
        ran_dry > 0,
        "the buffer ring never ran dry, so re-arming after ENOBUFS was not tested"
    );
    assert!(generation > 1, "the request was never re-armed");
    eprintln!(
        "{} bytes in {buffers_used} buffers, {generation} arms, {ran_dry} times ENOBUFS",
        received.len()
    );
    drop(bufs);
}
