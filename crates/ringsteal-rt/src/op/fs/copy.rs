//! A linked `READ` + `WRITE` pair (`IOSQE_IO_LINK`): copies a chunk between files with one
//! submission and no round trip through user space between the two.

use std::io;
use std::os::fd::AsRawFd;

use ringsteal_uring::opcode;

use super::sqe_len;
use crate::buf::{BufResult, IoBufMut};
use crate::op::{cqe_result, Op, Operation, SharedFd, Sqes};

/// Reads `len` bytes of `src` at `src_pos` into `buf`, then — linked, in the kernel — writes
/// those `len` bytes to `dst` at `dst_pos`. Yields `(read, written)`.
///
/// The kernel runs the write only if the read filled all `len` bytes; after a short read
/// (end of file) the write is cancelled and `written` is 0, with the bytes that were read in
/// `buf` (its initialised length says how many) for the caller to write.
///
/// # Panics
/// If `len` exceeds the buffer's capacity.
pub fn copy_linked<B: IoBufMut>(
    src: &SharedFd,
    src_pos: u64,
    dst: &SharedFd,
    dst_pos: u64,
    buf: B,
    len: usize,
) -> Op<CopyLinked<B>> {
    assert!(
        len <= buf.bytes_total(),
        "copy_linked: len {len} exceeds the buffer capacity {}",
        buf.bytes_total()
    );
    Op::new(CopyLinked {
        src: src.clone(),
        src_pos,
        dst: dst.clone(),
        dst_pos,
        buf,
        len: sqe_len(len),
    })
}

/// The operation of [`copy_linked`].
#[derive(Debug)]
pub struct CopyLinked<B> {
    src: SharedFd,
    src_pos: u64,
    dst: SharedFd,
    dst_pos: u64,
    buf: B,
    len: u32,
}

// SAFETY: both SQEs point into `buf`, owned by the op until both CQEs arrived.
unsafe impl<B: IoBufMut> Operation for CopyLinked<B> {
    type Output = BufResult<(usize, usize), B>;

    fn prepare(&mut self) -> Sqes {
        let ptr = self.buf.stable_mut_ptr();
        let read = opcode::read(self.src.as_raw_fd(), ptr, self.len, self.src_pos);
        let write = opcode::write(self.dst.as_raw_fd(), ptr, self.len, self.dst_pos);
        Sqes::Linked(read, write)
    }

    fn complete(mut self, results: &[(i32, u32)]) -> Self::Output {
        let read = match cqe_result(results[0].0) {
            Ok(n) => n as usize,
            Err(e) => return (Err(e), self.buf),
        };
        // SAFETY: the kernel wrote `read` bytes at the start of the buffer.
        unsafe { self.buf.set_init(read) };
        let written = match results[1].0 {
            r if r == -libc::ECANCELED && read < self.len as usize => 0,
            r => match cqe_result(r) {
                Ok(n) => n as usize,
                Err(e) => return (Err(e), self.buf),
            },
        };
        (Ok((read, written)), self.buf)
    }

    fn fail(self, err: io::Error) -> Self::Output {
        (Err(err), self.buf)
    }
}
