//! An owned memory mapping, unmapped on drop.
//!
//! Owns: one `mmap` region (ring memory shared with the kernel, or anonymous memory for a
//! provided-buffer ring). May not: interpret what is inside it.

use std::io;
use std::os::fd::RawFd;
use std::ptr::NonNull;

/// A mapping of `len` bytes at `ptr`, unmapped when dropped.
#[derive(Debug)]
pub(crate) struct Mmap {
    ptr: NonNull<libc::c_void>,
    len: usize,
}

// SAFETY: the mapping is plain memory; who may touch it and with which ordering is decided
// by the owners (Ring, BufRing), which are themselves Send but not Sync.
unsafe impl Send for Mmap {}

impl Mmap {
    /// Maps `len` bytes of the io_uring object `fd` at `offset` (`IORING_OFF_*`), shared and
    /// populated.
    pub(crate) fn ring(fd: RawFd, len: usize, offset: i64) -> io::Result<Self> {
        // SAFETY: a fresh shared mapping of a ring fd at a kernel-defined offset; no existing
        // memory is affected (addr is null) and the result is checked.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                offset,
            )
        };
        Self::checked(ptr, len)
    }

    /// Maps `len` bytes of zeroed anonymous memory, page aligned; with `populate`, faulted
    /// in at once (`MAP_POPULATE`: for small memory touched at once anyway), else page by
    /// page as it is first touched (for large buffers, which may never all be used).
    pub(crate) fn anonymous(len: usize, populate: bool) -> io::Result<Self> {
        let populate = if populate { libc::MAP_POPULATE } else { 0 };
        // SAFETY: a fresh private anonymous mapping; nothing existing is affected.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | populate,
                -1,
                0,
            )
        };
        Self::checked(ptr, len)
    }

    fn checked(ptr: *mut libc::c_void, len: usize) -> io::Result<Self> {
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Self {
            ptr: NonNull::new(ptr).ok_or_else(|| io::Error::other("mmap returned null"))?,
            len,
        })
    }

    /// The start of the mapping.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr().cast()
    }

    /// A pointer `offset` bytes into the mapping, cast to `T`.
    ///
    /// # Safety
    /// `offset + size_of::<T>()` must lie within the mapping and be aligned for `T`.
    pub(crate) unsafe fn at<T>(&self, offset: u32) -> *mut T {
        debug_assert!(offset as usize + std::mem::size_of::<T>() <= self.len);
        // SAFETY: the caller keeps `offset` inside the mapping.
        unsafe { self.as_ptr().add(offset as usize).cast() }
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly what mmap returned, and the owner drops the mapping
        // only when nothing (kernel or user) uses it any longer.
        unsafe {
            libc::munmap(self.ptr.as_ptr(), self.len);
        }
    }
}
