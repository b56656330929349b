//! Vectored buffers for `readv`/`writev`: a list of owned buffers.

use super::io_buf::{IoBuf, IoBufMut};

/// Buffers the kernel reads in order (`writev`): a `Vec` of [`IoBuf`]s or a pair of them
/// (a header and a body), sent with one request.
///
/// ```
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let file = tempfile_fd();
///     let parts = (b"HTTP/1.1 200 OK\r\n".to_vec(), "\r\nbody");
///     let (n, _parts) = op::writev_at(&file, parts, 0).await;
///     assert_eq!(n.unwrap(), 23);
///     let (n, all) = op::read_at(&file, Vec::with_capacity(64), 0).await;
///     assert_eq!(&all[..n.unwrap()], b"HTTP/1.1 200 OK\r\n\r\nbody");
/// });
/// # fn tempfile_fd() -> SharedFd {
/// #     let path = std::env::temp_dir().join(format!("ringsteal-doc-iovec-{}", std::process::id()));
/// #     let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
/// #     std::fs::remove_file(&path).unwrap();
/// #     SharedFd::new(f.into())
/// # }
/// ```
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

/// Buffers the kernel fills in order (`readv`): each up to its capacity before the next.
///
/// ```
/// use std::io::Write;
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let mut f = std::fs::File::from(tempfile_fd());
///     f.write_all(b"headbody").unwrap();
///     let fd = SharedFd::new(f.into());
///     let bufs = vec![Vec::with_capacity(4), Vec::with_capacity(16)];
///     let (n, bufs) = op::readv_at(&fd, bufs, 0).await;
///     assert_eq!(n.unwrap(), 8);
///     assert_eq!((&bufs[0][..], &bufs[1][..]), (&b"head"[..], &b"body"[..]));
/// });
/// # fn tempfile_fd() -> std::os::fd::OwnedFd {
/// #     let path = std::env::temp_dir().join(format!("ringsteal-doc-readv-{}", std::process::id()));
/// #     let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
/// #     std::fs::remove_file(&path).unwrap();
/// #     f.into()
/// # }
/// ```
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

/// `bufs` without its first bytes: what is left to write after a short vectored write.
/// [`advance`](Self::advance) by what each write took, until [`remaining`](Self::remaining)
/// is zero, then take the buffers back.
///
/// ```
/// use ringsteal_rt::buf::{Advance, IoVecBuf};
///
/// let mut rest = Advance::new((b"head".to_vec(), b"body".to_vec()));
/// rest.advance(5);
/// assert_eq!(rest.remaining(), 3);
/// assert_eq!(rest.iovecs().len(), 1);
/// let (head, body) = rest.into_inner();
/// assert_eq!((head, body), (b"head".to_vec(), b"body".to_vec()));
/// ```
#[derive(Debug)]
pub struct Advance<B> {
    bufs: B,
    skip: usize,
    total: usize,
}

impl<B: IoVecBuf> Advance<B> {
    /// All of `bufs`.
    pub fn new(bufs: B) -> Self {
        let total = bufs.iovecs().iter().map(|i| i.iov_len).sum();
        Self {
            bufs,
            skip: 0,
            total,
        }
    }

    /// Drops the next `n` bytes (capped at what remains).
    pub fn advance(&mut self, n: usize) {
        self.skip = self.skip.saturating_add(n).min(self.total);
    }

    /// Bytes not yet skipped.
    pub fn remaining(&self) -> usize {
        self.total - self.skip
    }

    /// The buffers, whole.
    pub fn into_inner(self) -> B {
        self.bufs
    }
}

// SAFETY: the iovecs are a suffix of `bufs`' own (trimmed at the front), so they describe
// initialised bytes of buffers `bufs` owns.
unsafe impl<B: IoVecBuf> IoVecBuf for Advance<B> {
    fn iovecs(&self) -> Vec<libc::iovec> {
        let mut skip = self.skip;
        let mut out = Vec::new();
        for iov in self.bufs.iovecs() {
            if skip >= iov.iov_len {
                skip -= iov.iov_len;
                continue;
            }
            out.push(libc::iovec {
                // SAFETY: skip < iov_len, so the pointer stays inside this buffer.
                iov_base: unsafe { iov.iov_base.cast::<u8>().add(skip) }.cast(),
                iov_len: iov.iov_len - skip,
            });
            skip = 0;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents<B: IoVecBuf>(b: &B) -> Vec<Vec<u8>> {
        b.iovecs()
            .iter()
            .map(|i| {
                // SAFETY: each iovec points into `b`'s buffers, alive here.
                unsafe { std::slice::from_raw_parts(i.iov_base.cast::<u8>(), i.iov_len) }.to_vec()
            })
            .collect()
    }

    #[test]
    fn advance_skips_whole_and_partial_buffers() {
        let mut a = Advance::new((b"abc".to_vec(), b"defg".to_vec()));
        assert_eq!(contents(&a), [b"abc".to_vec(), b"defg".to_vec()]);
        a.advance(2);
        assert_eq!(contents(&a), [b"c".to_vec(), b"defg".to_vec()]);
        a.advance(1);
        assert_eq!(contents(&a), [b"defg".to_vec()]);
        a.advance(2);
        assert_eq!(contents(&a), [b"fg".to_vec()]);
        a.advance(100);
        assert_eq!(a.remaining(), 0);
        assert!(contents(&a).is_empty());
        a.advance(usize::MAX); // capped at what remains, no overflow
        assert_eq!(a.remaining(), 0);
    }
}
