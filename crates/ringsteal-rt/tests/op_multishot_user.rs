//! A multishot request of the user's own `Operation` (the trait supports them: a CQE with
//! `IORING_CQE_F_MORE` neither completes nor frees the op; it ends when the request does),
//! dropped after it has posted such a CQE, is cancelled like any other op in flight, and its
//! cell (data, descriptor) is freed once the cancellation completes. A zero-copy send is the
//! one op whose `F_MORE` result means the request is over (only its notification is owed);
//! nothing else may be taken for one.

mod common;

use std::future::Future;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::task::Poll;

use common::under_every_config;
use ringsteal_rt::op::{self, Op, Operation, SharedFd, Sqes};
use ringsteal_uring::opcode;

/// A multishot `POLL_ADD` on an eventfd, reporting each readiness with `F_MORE`.
struct MultishotPoll {
    fd: SharedFd,
    dropped: Arc<AtomicBool>,
}

impl Drop for MultishotPoll {
    fn drop(&mut self) {
        self.dropped.store(true, SeqCst);
    }
}

// SAFETY: a poll references no memory; the op holds the descriptor until its last CQE.
unsafe impl Operation for MultishotPoll {
    type Output = io::Result<u32>;
    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::poll_add(
            self.fd.as_raw_fd(),
            libc::POLLIN as u32,
            true,
        ))
    }
    fn complete(self, results: &[(i32, u32)]) -> io::Result<u32> {
        match results[0].0 {
            r if r < 0 => Err(io::Error::from_raw_os_error(-r)),
            r => Ok(r as u32),
        }
    }
    fn fail(self, err: io::Error) -> io::Result<u32> {
        Err(err)
    }
}

#[test]
fn a_dropped_user_multishot_op_that_posted_more_is_cancelled_and_freed() {
    under_every_config("dropped user multishot op", 1, |config, b| {
        let rt = b.build().unwrap();
        let handle = rt.handle();
        // SAFETY: plain system call; a non-negative result is a new descriptor we own.
        let efd = unsafe { OwnedFd::from_raw_fd(libc::eventfd(0, libc::EFD_CLOEXEC)) };
        let signal = efd.try_clone().unwrap();
        let dropped = Arc::new(AtomicBool::new(false));
        let freed = rt.block_on(async {
            let mut op = Op::new(MultishotPoll {
                fd: SharedFd::new(efd),
                dropped: dropped.clone(),
            });
            std::future::poll_fn(|cx| {
                assert!(Pin::new(&mut op).poll(cx).is_pending());
                Poll::Ready(())
            })
            .await;
            op::nop().await.unwrap(); // submitted and armed
            let one = 1u64;
            // SAFETY: writes 8 bytes from a live u64 to our eventfd.
            let n = unsafe { libc::write(signal.as_raw_fd(), (&one as *const u64).cast(), 8) };
            assert_eq!(n, 8);
            // The readiness CQE (F_MORE) is posted and reaped within these ticks.
            for _ in 0..3 {
                op::nop().await.unwrap();
            }
            drop(op);
            for _ in 0..1000 {
                if dropped.load(SeqCst) {
                    break;
                }
                op::nop().await.unwrap();
            }
            dropped.load(SeqCst)
        });
        assert!(
            freed,
            "{config:?}: the dropped multishot op was never cancelled"
        );
        assert_eq!(handle.stats().shards[0].ops_in_flight, 0, "{config:?}");
        drop(rt);
    });
}
