//! The I/O traits for in-memory values, as std has `Read for &[u8]` and `Write for Vec<u8>`:
//! a byte slice is a source, a `Vec<u8>` a sink. Useful in tests and to collect output.
//!
//! May not: touch the kernel; runs under Miri.

use std::future::{ready, Future};
use std::io;

use super::traits::{AsyncReadOwned, AsyncWriteOwned};
use crate::buf::{BufResult, IoBuf, IoBufMut};

impl AsyncReadOwned for &[u8] {
    /// Copies from the front of the slice and advances it.
    fn read<B: IoBufMut>(
        &mut self,
        mut buf: B,
    ) -> impl Future<Output = BufResult<usize, B>> + Send {
        let n = self.len().min(buf.bytes_total());
        // SAFETY: `buf` is valid for bytes_total() >= n bytes of writes and is not borrowed
        // from `self`'s memory (it is owned); the n bytes are then initialised.
        unsafe {
            std::ptr::copy_nonoverlapping(self.as_ptr(), buf.stable_mut_ptr(), n);
            buf.set_init(n);
        }
        *self = &self[n..];
        ready((Ok(n), buf))
    }
}

impl AsyncWriteOwned for Vec<u8> {
    /// Appends all of `buf`.
    fn write<B: IoBuf>(&mut self, buf: B) -> impl Future<Output = BufResult<usize, B>> + Send {
        // SAFETY: the first bytes_init() bytes of an IoBuf are initialised.
        let bytes = unsafe { std::slice::from_raw_parts(buf.stable_ptr(), buf.bytes_init()) };
        self.extend_from_slice(bytes);
        ready((Ok(bytes.len()), buf))
    }

    fn shutdown(&mut self) -> impl Future<Output = io::Result<()>> + Send {
        ready(Ok(()))
    }
}
