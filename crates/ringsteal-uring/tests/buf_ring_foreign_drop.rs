//! A [`BufRing`] dropped on another thread than its `SINGLE_ISSUER` ring's issuer: the ring
//! refuses the unregistration (`EEXIST`), so the group stays registered and its memory must
//! stay mapped until the ring's descriptor closes, and must be freed then (a runtime's
//! buffers handed back after its shards stopped take that path). The tests run one at a time
//! (they look at which addresses are mapped), in their own process.

mod common;

use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::Mutex;
use std::thread;

use ringsteal_uring::abi::IORING_SETUP_SINGLE_ISSUER;
use ringsteal_uring::{io_uring_cqe, opcode, BufRing, Features, Ring, RingBuilder};

const GROUP: u16 = 7;
const BUF_LEN: u32 = 4096;
const COUNT: u16 = 4;
const DATA: &[u8] = b"KERNEL-WROTE-HERE";

/// One test at a time: a mapping made by one could land where the other looks.
static SERIAL: Mutex<()> = Mutex::new(());

fn single_issuer_ring() -> Option<Ring> {
    let f = Features::get().expect("io_uring is available");
    if !f.pbuf_ring() || !f.setup_flag_accepted(IORING_SETUP_SINGLE_ISSUER) {
        eprintln!("skipped: needs provided-buffer rings (5.19) and SINGLE_ISSUER (6.0)");
        return None;
    }
    Some(RingBuilder::new(8).single_issuer().build().expect("ring"))
}

/// True if the page at `addr` is mapped in this process.
fn is_mapped(addr: *const u8) -> bool {
    let mut vec = 0u8;
    // SAFETY: mincore only reads the page tables for one page and writes one byte to `vec`;
    // it fails with ENOMEM if the page is not mapped.
    unsafe { libc::mincore(addr as *mut libc::c_void, 1, &mut vec) == 0 }
}

/// Receives `data` through group `GROUP` and returns the completion.
fn read_provided(ring: &mut Ring, data: &[u8]) -> io_uring_cqe {
    let (mut tx, rx) = UnixStream::pair().unwrap();
    tx.write_all(data).unwrap();
    let sqe = opcode::read_provided(rx.as_raw_fd(), BUF_LEN, u64::MAX, GROUP).with_user_data(1);
    // SAFETY: the SQE holds no pointer; the socket stays open until its CQE is reaped below,
    // and the group's memory stays mapped (what the tests check).
    unsafe { ring.push(&sqe) }.unwrap();
    common::wait_cqes(ring, 1)[0]
}

/// The address of buffer 0, found by receiving into the group and taking the buffer.
fn buffer_zero(ring: &mut Ring, bufs: &mut BufRing) -> *const u8 {
    let cqe = read_provided(ring, b"x");
    // SAFETY: a completion of this ring for a request that selected from the group, taken once.
    let (bid, data) = unsafe { bufs.take(&cqe) }.expect("a buffer was used");
    assert_eq!(bid, 0, "buffers are handed out in order");
    let ptr = data.as_ptr();
    bufs.recycle(bid);
    ptr
}

#[test]
fn a_buffer_ring_dropped_on_a_thread_its_ring_refuses_keeps_its_memory_until_the_ring_closes() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(mut ring) = single_issuer_ring() else {
        return;
    };
    let mut bufs = BufRing::new(&ring, GROUP, COUNT, BUF_LEN).expect("register group");
    let base = buffer_zero(&mut ring, &mut bufs);
    thread::spawn(move || drop(bufs)).join().unwrap();

    // Unrelated memory mapped since, which would land in a freed hole.
    let len = BUF_LEN as usize * usize::from(COUNT);
    let victims: Vec<*mut u8> = (0..4)
        .map(|_| {
            // SAFETY: a fresh private anonymous mapping, checked, unmapped below.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            assert_ne!(p, libc::MAP_FAILED);
            p.cast()
        })
        .collect();

    // The ring refused the unregistration: the group still hands out its buffers...
    let cqe = read_provided(&mut ring, DATA);
    let corrupted = victims.iter().any(|&v| {
        // SAFETY: `len` readable bytes this test mapped.
        unsafe { std::slice::from_raw_parts(v, len) }
            .windows(DATA.len())
            .any(|w| w == DATA)
    });
    for &v in &victims {
        // SAFETY: mapped above with this length, not used again.
        unsafe { libc::munmap(v.cast(), len) };
    }
    assert!(
        !corrupted,
        "the kernel wrote into memory mapped after the buffer ring was dropped"
    );
    assert_eq!(
        cqe.res,
        DATA.len() as i32,
        "the group's memory was unmapped while the group was still registered (-14 = EFAULT)"
    );
    // ...and they are the group's own memory, still mapped.
    let bid = BufRing::buffer_id(cqe.flags).expect("a buffer was used");
    let at = base.wrapping_add(usize::from(bid) * BUF_LEN as usize);
    assert!(is_mapped(at));
    // SAFETY: mapped (checked above), and the request that wrote it has completed.
    assert_eq!(unsafe { std::slice::from_raw_parts(at, DATA.len()) }, DATA);

    // Closing the ring ends the group: its memory is freed then.
    drop(ring);
    assert!(!is_mapped(base), "the group's memory outlived its ring");
}

#[test]
fn a_buffer_ring_that_outlives_its_ring_and_is_dropped_on_another_thread_frees_its_memory() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(mut ring) = single_issuer_ring() else {
        return;
    };
    let mut bufs = BufRing::new(&ring, GROUP, COUNT, BUF_LEN).expect("register group");
    let base = buffer_zero(&mut ring, &mut bufs);
    let number = ring.fd();
    // What a runtime does when buffers come back after its shards stopped.
    drop(ring);
    thread::spawn(move || drop(bufs)).join().unwrap();
    assert!(!is_mapped(base), "the group's memory was leaked");
    // SAFETY: F_GETFD only reads the descriptor table.
    let open = unsafe { libc::fcntl(number, libc::F_GETFD) } != -1;
    assert!(!open, "the ring's descriptor is still open");
}
