//! One single-shot `IORING_OP_RECV` that selects a provided buffer of the polling shard's
//! group (`IOSQE_BUFFER_SELECT`): the kernel picks the buffer only when data arrives, so a
//! receive that waits holds no memory. The armed request and its end are [`Multishot`]'s
//! (one SQE, its last CQE the only one); what waits on it, and what an abandoned one keeps,
//! is the caller's (`io/provided_read.rs`).
//!
//! May not: fall back to another receive (the caller reads otherwise when there is no
//! group), or re-arm.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use ringsteal_uring::{io_uring_sqe, opcode};

use super::cell::{Release, Source};
use super::{recv_group, Multishot, Polled};
use crate::buf::provided::BufGroup;
use crate::buf::RecvBuf;
use crate::op::SharedFd;
use crate::shard::context;

/// The completion of a [`RecvOnce`]: the receive's result (bytes, 0 at end of stream, or
/// `-errno`; `-ENOBUFS` if no buffer of the group was free), its CQE flags, and the buffer it
/// filled, which goes back to its ring when dropped.
pub(crate) struct Once {
    pub(crate) res: i32,
    pub(crate) flags: u32,
    pub(crate) buf: Option<RecvBuf>,
}

impl Release for Once {
    fn release(self, wakers: &mut Vec<Waker>) {
        if let Some(buf) = self.buf {
            buf.release_into(wakers);
        }
    }
}

/// The request: the descriptor and the group it selects from.
pub(crate) struct ProvidedOnce {
    fd: SharedFd,
    group: Arc<BufGroup>,
}

// SAFETY: the SQE names only the descriptor and a buffer group registered on the ring it is
// submitted to (armed on the group's own shard; the group stays registered until the shard's
// last CQE); a single-shot receive ends with one CQE, without F_MORE.
unsafe impl Source for ProvidedOnce {
    type Item = Once;

    fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn prepare(&mut self) -> io_uring_sqe {
        // Length 0: the selected buffer's own length.
        opcode::recv(self.fd.as_raw_fd(), std::ptr::null_mut(), 0, 0)
            .with_buf_group(self.group.id())
    }

    unsafe fn item(&self, res: i32, flags: u32) -> Once {
        Once {
            res,
            flags,
            // SAFETY: a CQE of a request that selected from `group` on its own ring, once.
            buf: unsafe { self.group.take(res, flags) },
        }
    }
}

/// One receive into a provided buffer, armed on the first poll on the polling shard.
pub(crate) struct RecvOnce {
    fd: SharedFd,
    request: Multishot<ProvidedOnce>,
}

impl RecvOnce {
    pub(crate) fn new(fd: &SharedFd) -> Self {
        Self {
            fd: fd.clone(),
            request: Multishot::new(),
        }
    }

    /// The receive's completion; on the first poll, `Ready(Err(None))` if there is nothing to
    /// select from (not polled on a shard, or the shard has no provided buffers: the kernel
    /// or the builder lacks them), and `Ready(Err(Some(e)))` if the request could not be
    /// submitted. Nothing is armed after either.
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Result<Once, Option<io::Error>>> {
        if !self.request.is_armed() {
            let armed = context::with_shard(|shard| {
                let shard = shard?;
                let group = recv_group(shard)?;
                let source = ProvidedOnce {
                    fd: self.fd.clone(),
                    group,
                };
                Some(
                    self.request
                        .arm(shard, source, cx.waker())
                        .map_err(|(_, e)| e),
                )
            });
            match armed {
                None => return Poll::Ready(Err(None)),
                Some(Err(e)) => return Poll::Ready(Err(Some(e))),
                Some(Ok(())) => {}
            }
        }
        match self.request.poll_next(cx) {
            Poll::Pending => Poll::Pending,
            // A single-shot receive posts one CQE, its last: never an item of its own.
            Poll::Ready(Polled::Item(once) | Polled::Ended(once, _)) => Poll::Ready(Ok(once)),
        }
    }

    /// True while the request is in the kernel (armed, its completion not yet taken).
    pub(crate) fn is_armed(&self) -> bool {
        self.request.is_armed()
    }

    /// Cancels the armed request; its completion, whenever it comes, goes to `sink`, which
    /// is dropped after it (on whichever thread reaps it).
    pub(crate) fn abandon(&mut self, sink: impl FnMut(Once, &mut Vec<Waker>) + Send + 'static) {
        self.request.abandon(Some(Box::new(sink)));
    }
}
