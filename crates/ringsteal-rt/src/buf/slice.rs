//! [`Slice`]: a range of an owned buffer that still owns the whole buffer.

use std::ops::{Bound, Deref, DerefMut, RangeBounds};

use super::io_buf::{IoBuf, IoBufMut};

/// `buf[begin..end]`, owning `buf`. Reads fill from `begin`; writes send
/// `begin..min(end, initialised)`. A read into a slice that begins past the buffer's
/// initialised bytes zeroes the gap, so the buffer's initialised length can grow to the end
/// of what was read without exposing uninitialised memory.
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
        let total = buf.bytes_total();
        // `..=usize::MAX` and `(Excluded(usize::MAX), ..)` overflow: out of bounds, like any
        // range past the buffer (wrapping would turn them into small, wrong ranges).
        let begin = match range.start_bound() {
            Bound::Included(&n) => Some(n),
            Bound::Excluded(&n) => n.checked_add(1),
            Bound::Unbounded => Some(0),
        };
        let end = match range.end_bound() {
            Bound::Included(&n) => n.checked_add(1),
            Bound::Excluded(&n) => Some(n),
            Bound::Unbounded => Some(total),
        };
        match (begin, end) {
            (Some(begin), Some(end)) if begin <= end && end <= total => Self { buf, begin, end },
            _ => panic!(
                "slice range {:?}..{:?} out of bounds for a buffer of {total} bytes",
                range.start_bound(),
                range.end_bound()
            ),
        }
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
    ///
    /// Unsafe because the slice's range was checked against the buffer when the slice was
    /// made, and is trusted from then on: replacing or shrinking the buffer through this
    /// reference would let an operation on the slice write past the buffer's memory (see
    /// [`IoBuf`]'s rule for wrappers). To change the buffer, take it back with
    /// [`into_inner`](Self::into_inner) and slice it again.
    ///
    /// ```compile_fail,E0133
    /// use ringsteal_rt::buf::IoBuf;
    ///
    /// let mut slice = Vec::<u8>::with_capacity(4096).slice(..);
    /// // Would leave a 4096-byte range over a 16-byte allocation: refused in safe code.
    /// *slice.get_mut() = Vec::with_capacity(16);
    /// ```
    ///
    /// # Safety
    /// While the slice lives, the buffer's storage must stay where it is and at least
    /// [`end`](Self::end) bytes large: [`IoBuf::stable_ptr`] must not change and
    /// [`IoBuf::bytes_total`] must not drop below `end()`. Writing bytes in place, or
    /// growing the initialised length within the capacity, keeps to that.
    ///
    /// ```
    /// use ringsteal_rt::buf::IoBuf;
    ///
    /// let mut slice = vec![0u8; 8].slice(2..4);
    /// // SAFETY: writes in place; the Vec neither moves nor shrinks.
    /// let whole = unsafe { slice.get_mut() };
    /// whole[0] = 7;
    /// assert_eq!(slice.into_inner()[0], 7);
    /// ```
    pub unsafe fn get_mut(&mut self) -> &mut T {
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
        debug_assert!(pos <= self.end - self.begin, "set_init past the slice");
        if pos == 0 {
            return;
        }
        // Marking `begin + pos` bytes initialised claims the bytes before the slice too. If
        // the buffer's initialised bytes end before the slice begins, the gap between them
        // was never written (a read into `Vec::with_capacity(n).slice(4..)`): zero it, so
        // that the claim is true and the buffer never exposes uninitialised memory.
        let init = self.buf.bytes_init();
        if init < self.begin {
            // SAFETY: init < begin <= bytes_total(), and the pointer is valid for writes of
            // bytes_total() bytes (IoBufMut contract).
            unsafe {
                self.buf
                    .stable_mut_ptr()
                    .add(init)
                    .write_bytes(0, self.begin - init)
            };
        }
        // SAFETY: the bytes before `begin` are initialised (they were, or were just zeroed);
        // the caller guarantees the `pos` bytes from `begin`.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What a read of `data` into `buf` does to it, minus the kernel.
    fn fake_read<B: IoBufMut>(buf: &mut B, data: &[u8]) {
        assert!(data.len() <= buf.bytes_total());
        // SAFETY: within bytes_total(), which the pointer is valid for.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), buf.stable_mut_ptr(), data.len());
            buf.set_init(data.len());
        }
    }

    #[test]
    fn a_read_into_a_slice_past_the_initialised_bytes_zeroes_the_gap() {
        let mut slice = Vec::with_capacity(16).slice(4..8);
        fake_read(&mut slice, b"abcd");
        // Under Miri, reading an unwritten gap here would be reported as UB.
        assert_eq!(slice.into_inner(), b"\0\0\0\0abcd");
    }

    #[test]
    fn a_read_into_a_slice_within_the_initialised_bytes_keeps_them() {
        let mut v = Vec::with_capacity(16);
        v.extend_from_slice(b"0123456");
        let mut slice = v.slice(2..4);
        fake_read(&mut slice, b"ab");
        assert_eq!(slice.into_inner(), b"01ab456");
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn a_range_ending_at_usize_max_inclusive_is_out_of_bounds_not_empty() {
        let _ = vec![0u8; 8].slice(..=usize::MAX);
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn a_range_starting_after_usize_max_is_out_of_bounds_not_the_whole_buffer() {
        let _ = vec![0u8; 8].slice((Bound::Excluded(usize::MAX), Bound::Unbounded));
    }

    #[test]
    fn a_slice_over_the_whole_capacity_reads_into_all_of_it() {
        let mut slice = Vec::with_capacity(8).slice(..);
        assert_eq!(slice.bytes_total(), 8);
        fake_read(&mut slice, b"01234567");
        assert_eq!(slice.into_inner(), b"01234567");
    }

    #[test]
    fn an_empty_read_into_a_slice_claims_nothing() {
        let mut slice = Vec::<u8>::with_capacity(16).slice(4..8);
        fake_read(&mut slice, b"");
        assert!(slice.into_inner().is_empty());
    }
}
