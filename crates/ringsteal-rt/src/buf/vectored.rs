//! Vectored buffers for `readv`/`writev`: a list of owned buffers.

use super::io_buf::{IoBuf, IoBufMut};

/// Buffers the kernel reads in order (`writev`).
///
/// # Safety
/// Every buffer must satisfy [`IoBuf`]'s contract, and the iovecs returned must describe
/// memory of those buffers only (each within its `stable_ptr .. stable_ptr + bytes_init`).
/// An operation keeps the iovecs it took until it completes, so [`IoBuf`]'s rule for
/// wrappers applies to the list as a whole: no safe method may add, remove, swap or resize a
/// buffer of a value whose iovecs an operation may hold.
pub unsafe trait IoVecBuf: Unpin + Send + 'static {
    /// One `iovec` per buffer, over its initialised bytes.
    fn iovecs(&self) -> Vec<libc::iovec>;
}

/// Buffers the kernel fills in order (`readv`).
///
/// # Safety
/// Every buffer must satisfy [`IoBufMut`]'s contract; the iovecs of `iovecs_mut` must each
/// lie within one buffer's `stable_mut_ptr .. stable_mut_ptr + bytes_total`, in order, and
/// `set_init(n)`, for `n` at most their total length, must mark initialised only bytes
/// those iovecs cover (never more than a buffer's `bytes_total`).
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
