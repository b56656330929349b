//! A linked `READ` + `WRITE` pair (`IOSQE_IO_LINK`): copies a chunk between files with one
//! submission and no round trip through user space between the two.

use std::io;
use std::os::fd::AsRawFd;

use ringsteal_uring::opcode;

use crate::buf::{BufResult, IoBufMut};
use crate::op::limits::sqe_len;
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

/// The operation of [`copy_linked`]: yields `(read, written)` and the buffer.
///
/// ```
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (src, dst) = (temp_file("copy-src"), temp_file("copy-dst"));
///     op::write_at(&src, "chunk of data", 0).await.0.unwrap();
///     let (res, _buf) = op::copy_linked(&src, 0, &dst, 100, Vec::with_capacity(5), 5).await;
///     assert_eq!(res.unwrap(), (5, 5)); // read 5 of src, wrote them at 100 of dst
///     let (n, got) = op::read_at(&dst, Vec::with_capacity(8), 100).await;
///     assert_eq!(&got[..n.unwrap()], b"chunk");
/// });
/// # fn temp_file(name: &str) -> SharedFd {
/// #     let path = std::env::temp_dir().join(format!("ringsteal-doc-{name}-{}", std::process::id()));
/// #     let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
/// #     std::fs::remove_file(&path).unwrap();
/// #     SharedFd::new(f.into())
/// # }
/// ```
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
            // Clamped as in `ReadAt::complete`.
            Ok(n) => (n as usize).min(self.buf.bytes_total()),
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

    /// Between two descriptors that
    /// [`complete_on_their_own`](SharedFd::completes_on_its_own) (not onto a FIFO, which may
    /// wait for a reader for ever).
    fn holds_paused_clock(&self) -> bool {
        self.src.completes_on_its_own() && self.dst.completes_on_its_own()
    }
}
