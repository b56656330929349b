//! Vectored buffers for `readv`/`writev`: a list of owned buffers.

use super::io_buf::{IoBuf, IoBufMut};

/// Buffers the kernel reads in order (`writev`).
///
/// # Safety
/// Every buffer must satisfy [`IoBuf`]'s contract.
pub unsafe trait IoVecBuf: Unpin + Send + 'static {
    /// One `iovec` per buffer, over its initialised bytes.
    fn iovecs(&self) -> Vec<libc::iovec>;
}

/// Buffers the kernel fills in order (`readv`).
///
/// # Safety
/// Every buffer must satisfy [`IoBufMut`]'s contract.
pub unsafe trait IoVecBufMut: IoVecBuf {
    /// One `iovec` per buffer, over its whole capacity.
    fn iovecs_mut(&mut self) -> Vec<libc::iovec>;

    /// Marks the first `n` bytes (across the buffers, in order) initialised.
    ///
    /// # Safety
    /// Those bytes must have been written.
    unsafe fn set_init(&mut self, n: usize);
}

// SAFETY: each element is an IoBuf; the iovecs describe their initialised bytes.
unsafe impl<T: IoBuf> IoVecBuf for Vec<T> {
    fn iovecs(&self) -> Vec<libc::iovec> {
        self.iter()
            .map(|b| libc::iovec {
                iov_base: b.stable_ptr() as *mut libc::c_void,
                iov_len: b.bytes_init(),
            })
            .collect()
    }
}

// SAFETY: each element is an IoBufMut; the iovecs describe their capacity.
unsafe impl<T: IoBufMut> IoVecBufMut for Vec<T> {
    fn iovecs_mut(&mut self) -> Vec<libc::iovec> {
        self.iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.stable_mut_ptr() as *mut libc::c_void,
                iov_len: b.bytes_total(),
            })
            .collect()
    }

    unsafe fn set_init(&mut self, mut n: usize) {
        for b in self.iter_mut() {
            let take = n.min(b.bytes_total());
            // SAFETY: the caller says the first n bytes across buffers were written.
            unsafe { b.set_init(take) };
            n -= take;
            if n == 0 {
                break;
            }
        }
    }
}

// SAFETY: both elements are IoBufs; the iovecs describe their initialised bytes, in order.
unsafe impl<A: IoBuf, B: IoBuf> IoVecBuf for (A, B) {
    fn iovecs(&self) -> Vec<libc::iovec> {
        [
            (self.0.stable_ptr(), self.0.bytes_init()),
            (self.1.stable_ptr(), self.1.bytes_init()),
        ]
        .into_iter()
        .map(|(p, n)| libc::iovec {
            iov_base: p as *mut libc::c_void,
            iov_len: n,
        })
        .collect()
    }
}
