//! Operations implemented outside ringsteal (the public `unsafe trait Operation`) that set
//! link or skip flags, or whose SQE posts more than one CQE: the runtime clears the flags it
//! owns and completes (and frees) an op only at each SQE's last CQE.

mod op_support;

use std::io;
use std::net::UdpSocket;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use ringsteal_rt::op::{self, Op, Operation, Sqes};
use ringsteal_uring::abi::{
    IORING_CQE_F_MORE, IORING_CQE_F_NOTIF, IOSQE_CQE_SKIP_SUCCESS, IOSQE_IO_HARDLINK, IOSQE_IO_LINK,
};
use ringsteal_uring::opcode;

use op_support::*;

/// A NOP whose SQE asks to be linked to the next SQE and to post no CQE on success.
struct FlaggedNop;

// SAFETY: a NOP references no memory and posts one CQE (once the skip flag is cleared).
unsafe impl Operation for FlaggedNop {
    type Output = io::Result<()>;
    fn prepare(&mut self) -> Sqes {
        Sqes::One(
            opcode::nop().with_flags(IOSQE_IO_LINK | IOSQE_IO_HARDLINK | IOSQE_CQE_SKIP_SUCCESS),
        )
    }
    fn complete(self, results: &[(i32, u32)]) -> io::Result<()> {
        match results[0].0 {
            res if res < 0 => Err(io::Error::from_raw_os_error(-res)),
            _ => Ok(()),
        }
    }
    fn fail(self, err: io::Error) -> io::Result<()> {
        Err(err)
    }
}

/// `IORING_OP_SEND_ZC` of `buf` on a connected socket: two CQEs, the second a notification.
struct SendZc {
    fd: RawFd,
    buf: Vec<u8>,
}

// SAFETY: the buffer is owned by `self`; the kernel is done with it at the notification, the
// SQE's last CQE (the first has IORING_CQE_F_MORE).
unsafe impl Operation for SendZc {
    type Output = ((i32, u32), Vec<u8>);
    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::send_zc(
            self.fd,
            self.buf.as_ptr(),
            self.buf.len() as u32,
            0,
        ))
    }
    fn complete(self, results: &[(i32, u32)]) -> Self::Output {
        (results[0], self.buf)
    }
    fn fail(self, err: io::Error) -> Self::Output {
        panic!("SEND_ZC could not be submitted: {err}")
    }
}

/// Hang guard for an op that never completes (a skipped or lost CQE).
const GUARD: Duration = Duration::from_secs(10);

#[test]
fn link_and_skip_flags_set_by_an_operation_are_cleared() {
    for config in ALL_MODES {
        watchdog(&format!("{config:?}"), move || {
            config.build().block_on(async {
                for _ in 0..4 {
                    // Submitted together: a link from the first would chain the second.
                    let mut flagged = Op::new(FlaggedNop);
                    assert!(poll_once(&mut flagged).await.is_pending());
                    let plain = op::nop();
                    let both = async { (flagged.await, plain.await) };
                    let (a, b) = ringsteal_rt::time::timeout(GUARD, both)
                        .await
                        .expect("a flagged NOP never completed: its CQE was skipped");
                    a.expect("the flagged NOP");
                    b.expect("the NOP behind it");
                }
            });
        });
    }
}

#[test]
fn a_zero_copy_send_completes_at_its_notification_with_its_first_result() {
    for config in ALL_MODES {
        watchdog(&format!("{config:?}"), move || {
            let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
            let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
            tx.connect(rx.local_addr().unwrap()).unwrap();
            let fd = tx.as_raw_fd();
            config.build().block_on(async move {
                for round in 0..8u8 {
                    let buf = vec![round; 512];
                    let send = Op::new(SendZc { fd, buf });
                    let ((res, flags), buf) = ringsteal_rt::time::timeout(GUARD, send)
                        .await
                        .expect("SEND_ZC never completed");
                    if res == -libc::EOPNOTSUPP || res == -libc::EINVAL {
                        eprintln!("SEND_ZC unsupported here ({res}); nothing to check");
                        return;
                    }
                    assert_eq!(res, 512, "the send's own result, not the notification's");
                    assert_ne!(
                        flags & IORING_CQE_F_NOTIF,
                        0,
                        "completed before the notification"
                    );
                    assert_ne!(
                        flags & IORING_CQE_F_MORE,
                        0,
                        "the send's own flags are kept"
                    );
                    assert_eq!(buf, vec![round; 512]);
                    let mut got = [0u8; 1024];
                    assert_eq!(rx.recv(&mut got).unwrap(), 512);
                }
            });
        });
    }
}
