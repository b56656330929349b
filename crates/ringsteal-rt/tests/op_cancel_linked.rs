//! Cancelling a linked op (`op::copy_linked`: a READ linked to a WRITE) after its first
//! request has completed: the cancel must reach the second one, which otherwise runs on in
//! the kernel, holding both descriptors and the buffer (here, a write blocked on a full pipe
//! that nobody drains). With the runtime running, the buffer must come back to the driver and
//! be freed; at shutdown without `IORING_ASYNC_CANCEL_ANY` (as on 5.15–5.18), the drain must
//! end promptly instead of waiting out its deadline and leaking the op.

mod op_support;

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ringsteal_rt::op::{self, SharedFd};
use ringsteal_rt::Placement;

use op_support::*;

/// Bytes the linked copy moves.
const CHUNK: usize = 16;
/// A byte the full pipe is filled with (the copied bytes are different).
const FILLER: u8 = b'f';

/// A pipe whose buffer is full: a write to it waits until someone reads. Returns
/// `(read end, write end, bytes in it)`; both ends blocking.
fn full_pipe() -> (OwnedFd, SharedFd, usize) {
    let (rx, tx) = pipe();
    set_nonblocking(&tx, true);
    let chunk = [FILLER; 4096];
    let mut filled = 0;
    loop {
        // SAFETY: writes from a live local buffer.
        let n = unsafe { libc::write(tx.as_raw_fd(), chunk.as_ptr().cast(), chunk.len()) };
        if n < 0 {
            assert_eq!(
                std::io::Error::last_os_error().raw_os_error(),
                Some(libc::EAGAIN)
            );
            break;
        }
        filled += n as usize;
    }
    // Blocking again: io_uring answers a write to an O_NONBLOCK pipe with EAGAIN at once
    // instead of waiting for room.
    set_nonblocking(&tx, false);
    (rx, SharedFd::new(tx), filled)
}

fn set_nonblocking(fd: &impl AsRawFd, on: bool) {
    // SAFETY: F_GETFL/F_SETFL on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        let flags = if on {
            flags | libc::O_NONBLOCK
        } else {
            flags & !libc::O_NONBLOCK
        };
        assert_eq!(libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags), 0);
    }
}

/// Bytes waiting in a pipe.
fn queued(fd: &impl AsRawFd) -> usize {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int into `n`.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut n) };
    assert_eq!(rc, 0);
    n as usize
}

/// Everything left in a pipe, read without blocking.
fn drain(fd: &OwnedFd) -> Vec<u8> {
    set_nonblocking(fd, true);
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: reads into a live local buffer.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            return out;
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
}

/// Starts a linked copy from an empty pipe into a full one, feeds the source, and waits
/// until the read has taken the bytes: from then on only the write is in flight, waiting
/// for room. Returns the op, still in flight.
async fn copy_stuck_in_its_write(
    probe: &Arc<Probe>,
    src: &SharedFd,
    src_tx: &OwnedFd,
    dst: &SharedFd,
) -> op::Op<op::CopyLinked<TrackedBuf>> {
    let mut copy = op::copy_linked(src, u64::MAX, dst, u64::MAX, probe.buf(0, CHUNK), CHUNK);
    submit(&mut copy).await;
    write_fd(src_tx, &[b'c'; CHUNK]);
    // The watchdog bounds this.
    while queued(src) != 0 {
        ringsteal_rt::yield_now().await;
    }
    // Let the read's completion reach the driver too (it usually has).
    for _ in 0..4 {
        ringsteal_rt::yield_now().await;
    }
    assert!(
        poll_once(&mut copy).await.is_pending(),
        "the write into a full pipe completed"
    );
    copy
}

#[test]
fn dropping_a_linked_copy_whose_read_completed_cancels_its_write() {
    for config in ALL_MODES {
        on_every_shard(config, |shard| async move {
            let handle = ringsteal_rt::RuntimeHandle::current();
            let (probe, notify) = Probe::with_notify(handle);
            let (src, src_tx) = pipe();
            let src = SharedFd::new(src);
            let (dst_rx, dst, filled) = full_pipe();
            let copy = copy_stuck_in_its_write(&probe, &src, &src_tx, &dst).await;
            drop(copy);
            // The write must end (cancelled) and free the cell with the buffer in it.
            let mut got = 0;
            while got < 1 {
                let (res, _) = op::read_at(&notify, Vec::with_capacity(1), u64::MAX)
                    .with_timeout(OP_GUARD)
                    .await;
                got += res.unwrap_or_else(|e| {
                    panic!("shard {shard}: the linked write was never cancelled ({e})")
                });
            }
            assert_eq!(probe.drops(), 1);
            assert_eq!(
                dst.holders(),
                1,
                "the write's hold on the descriptor is gone"
            );
            let left = drain(&dst_rx);
            assert_eq!(
                left.len(),
                filled,
                "shard {shard}: the cancelled write wrote"
            );
            assert!(left.iter().all(|&b| b == FILLER));
        });
    }
}

#[test]
fn without_cancel_any_shutdown_cancels_a_linked_write_promptly_and_frees_its_buffer() {
    const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);
    const PROMPT: Duration = Duration::from_secs(10);
    for config in [
        Config::new(2),
        Config::new(2).eventfd(),
        Config::new(2).sqpoll(),
    ] {
        watchdog(&format!("{config:?}"), move || {
            let rt = config
                .builder()
                .shutdown_cancel_any(false)
                .shutdown_timeout(SHUTDOWN_TIMEOUT)
                .build()
                .unwrap();
            let probe = Probe::new(rt.handle());
            let (src, src_tx) = pipe();
            let src = SharedFd::new(src);
            let (_dst_rx, dst, _) = full_pipe();
            let (p, d) = (probe.clone(), dst.clone());
            rt.block_on(async move {
                let stuck = Arc::new(AtomicBool::new(false));
                let s = stuck.clone();
                // Shard 1 keeps the op in a task; shutdown drops it there.
                drop(ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                    let copy = copy_stuck_in_its_write(&p, &src, &src_tx, &d).await;
                    s.store(true, SeqCst);
                    let _keep = copy;
                    std::future::pending::<()>().await;
                }));
                // The watchdog bounds this.
                while !stuck.load(SeqCst) {
                    ringsteal_rt::yield_now().await;
                }
            });
            let start = Instant::now();
            drop(rt);
            let took = start.elapsed();
            assert!(took < PROMPT, "{config:?}: shutdown took {took:?}");
            assert_eq!(probe.drops(), 1, "{config:?}: the buffer was leaked");
            assert_eq!(dst.holders(), 1);
        });
    }
}
