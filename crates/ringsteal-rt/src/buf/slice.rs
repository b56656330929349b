//! [`Slice`]: a range of an owned buffer that still owns the whole buffer.

use std::ops::{Bound, Deref, DerefMut, RangeBounds};

use super::io_buf::{IoBuf, IoBufMut};

/// `buf[begin..end]`, owning `buf`. Reads fill from `begin`; writes send
/// `begin..min(end, initialised)`.
///
/// ```
/// use ringsteal_rt::buf::IoBuf;
///
/// let slice = vec![0u8; 16].slice(4..8);
/// assert_eq!((slice.begin(), slice.end()), (4, 8));
/// let whole: Vec<u8> = slice.into_inner();
/// assert_eq!(whole.len(), 16);
/// ```
#[derive(Debug)]
pub struct Slice<T> {
    buf: T,
    begin: usize,
    end: usize,
}

impl<T: IoBuf> Slice<T> {
    pub(crate) fn new(buf: T, range: impl RangeBounds<usize>) -> Self {
        let begin = match range.start_bound() {
            Bound::Included(&n) => n,
            Bound::Excluded(&n) => n + 1,
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&n) => n + 1,
            Bound::Excluded(&n) => n,
            Bound::Unbounded => buf.bytes_total(),
        };
        assert!(
            begin <= end && end <= buf.bytes_total(),
            "slice range {begin}..{end} out of bounds for a buffer of {} bytes",
            buf.bytes_total()
        );
        Self { buf, begin, end }
    }
}

impl<T> Slice<T> {
    /// Start offset in the underlying buffer.
    pub fn begin(&self) -> usize {
        self.begin
    }

    /// End offset in the underlying buffer.
    pub fn end(&self) -> usize {
        self.end
    }

    /// The underlying buffer.
    pub fn get_ref(&self) -> &T {
        &self.buf
    }

    /// The underlying buffer, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.buf
    }

    /// Gives the whole buffer back.
    pub fn into_inner(self) -> T {
        self.buf
    }
}

// SAFETY: a sub-range of a stable buffer is stable; initialised bytes are clipped to the range.
unsafe impl<T: IoBuf> IoBuf for Slice<T> {
    fn stable_ptr(&self) -> *const u8 {
        // SAFETY: begin <= bytes_total, checked at construction.
        unsafe { self.buf.stable_ptr().add(self.begin) }
    }
    fn bytes_init(&self) -> usize {
        self.buf.bytes_init().clamp(self.begin, self.end) - self.begin
    }
    fn bytes_total(&self) -> usize {
        self.end - self.begin
    }
}

// SAFETY: as above, for writes within the range.
unsafe impl<T: IoBufMut> IoBufMut for Slice<T> {
    fn stable_mut_ptr(&mut self) -> *mut u8 {
        // SAFETY: as in stable_ptr.
        unsafe { self.buf.stable_mut_ptr().add(self.begin) }
    }
    unsafe fn set_init(&mut self, pos: usize) {
        // SAFETY: forwarded; pos is relative to begin.
        unsafe { self.buf.set_init(self.begin + pos) }
    }
}

impl<T: IoBuf> Deref for Slice<T> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: the first bytes_init() bytes of the slice are initialised.
        unsafe { std::slice::from_raw_parts(self.stable_ptr(), self.bytes_init()) }
    }
}

impl<T: IoBufMut> DerefMut for Slice<T> {
    fn deref_mut(&mut self) -> &mut [u8] {
        let len = self.bytes_init();
        // SAFETY: as in Deref, and we hold the buffer exclusively.
        unsafe { std::slice::from_raw_parts_mut(self.stable_mut_ptr(), len) }
    }
}
