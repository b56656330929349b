//! [`IoBuf`] for `bytes::Bytes` and `BytesMut`, [`IoBufMut`] for `BytesMut` (feature
//! `bytes`).

use bytes::{Bytes, BytesMut};

use super::io_buf::{IoBuf, IoBufMut};

// SAFETY: a Bytes' storage (static, or shared on the heap) never moves or changes while any
// handle to it lives, and all of its `len` bytes are initialised.
unsafe impl IoBuf for Bytes {
    fn stable_ptr(&self) -> *const u8 {
        self.as_ptr()
    }
    fn bytes_init(&self) -> usize {
        self.len()
    }
    fn bytes_total(&self) -> usize {
        self.len()
    }
}

// SAFETY: a BytesMut's storage is on the heap and does not move when the handle moves; its
// first `len` bytes are initialised, and `capacity` bytes are allocated.
unsafe impl IoBuf for BytesMut {
    fn stable_ptr(&self) -> *const u8 {
        self.as_ptr()
    }
    fn bytes_init(&self) -> usize {
        self.len()
    }
    fn bytes_total(&self) -> usize {
        self.capacity()
    }
}

// SAFETY: as above; the spare capacity is the handle's own (unique) to write.
unsafe impl IoBufMut for BytesMut {
    fn stable_mut_ptr(&mut self) -> *mut u8 {
        self.as_mut_ptr()
    }
    unsafe fn set_init(&mut self, pos: usize) {
        if pos > self.len() {
            // SAFETY: the caller guarantees the bytes up to pos are initialised and
            // pos <= bytes_total() (the capacity).
            unsafe { self.set_len(pos) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_mut_grows_its_length_as_a_read_fills_it() {
        let mut b = BytesMut::with_capacity(8);
        assert!(b.bytes_total() >= 8);
        // SAFETY: writes within the capacity, then marks them initialised.
        unsafe {
            b.stable_mut_ptr()
                .copy_from_nonoverlapping(b"abc".as_ptr(), 3);
            b.set_init(3);
        }
        assert_eq!(&b[..], b"abc");
        let frozen: Bytes = b.freeze();
        assert_eq!((frozen.bytes_init(), frozen.bytes_total()), (3, 3));
    }
}
