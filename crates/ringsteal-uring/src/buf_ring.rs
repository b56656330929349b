//! [`BufRing`]: a provided-buffer ring (`IORING_REGISTER_PBUF_RING`, Linux 5.19) and the
//! buffers it hands to the kernel.
//!
//! Owns: the ring memory (page-aligned, shared with the kernel), the buffer memory, the tail
//! it publishes with `Release`, which buffer ids the application currently holds, and a
//! share of the ring's descriptor, so that it unregisters from its own ring even when
//! dropped after the [`Ring`] (whose descriptor number may name another ring by then).
//! Its memory is unmapped only once the kernel can no longer pick from the group: right
//! after unregistering it, or, if the ring refused that (a `SINGLE_ISSUER` ring dropped on
//! another thread than its issuer), after the ring's descriptor has closed (`ring_share.rs`).
//! May not: be dropped while a request that selects from its group is in flight (the kernel
//! may still write into a buffer it picked): `Ring::push`'s contract puts that on whoever
//! pushed the request; the runtime keeps it by draining first.

use std::io;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;

use crate::abi::*;
use crate::mmap::Mmap;
use crate::register::memlock_hint;
use crate::ring::Ring;
use crate::ring_share::RingShare;
use crate::sys;

/// A provided-buffer ring of `entries` buffers of `buf_len` bytes, registered as group `bgid`.
///
/// It keeps the ring's descriptor open until it is dropped (the io_uring instance lives on
/// that long if the [`Ring`] is dropped first), and unregisters its group from that ring.
///
/// Drop it only once every request that selects from its group has posted its final CQE:
/// such a request may already have taken a buffer's address, and would write into freed
/// memory. Pushing one is `unsafe` ([`Ring::push`]), and keeping the group alive until then
/// is part of that contract; [`leak`](Self::leak) gives up a group whose requests cannot be
/// waited for.
///
/// Dropping it unregisters the group and unmaps its memory. A `SINGLE_ISSUER` ring refuses
/// the unregistration from any thread but its issuer: a `BufRing` dropped on another thread
/// leaves its group registered (its id stays taken) and its memory mapped until the ring's
/// descriptor closes, that is until the [`Ring`] and every `BufRing` on it are dropped;
/// the memory is freed then.
///
/// Every buffer starts out given to the kernel. A request with `IOSQE_BUFFER_SELECT` picks
/// one; its CQE carries `IORING_CQE_F_BUFFER` and the buffer id. The application reads the
/// data with [`take`](Self::take), then gives the buffer back with
/// [`recycle`](Self::recycle).
///
/// ```
/// use ringsteal_uring::{opcode, BufRing, Ring};
/// use std::io::Write;
/// use std::os::fd::AsRawFd;
///
/// let mut ring = Ring::new(8)?;
/// let mut bufs = BufRing::new(&ring, 7, 4, 128)?;
/// let (mut tx, rx) = std::os::unix::net::UnixStream::pair()?;
/// tx.write_all(b"hello")?;
/// // SAFETY: the socket and the buffer ring outlive the request (we reap it below).
/// unsafe { ring.push(&opcode::read_provided(rx.as_raw_fd(), 128, u64::MAX, 7).with_user_data(1)) }.unwrap();
/// ring.submit_and_wait(1)?;
/// let cqe = ring.pop_cqe().unwrap();
/// // SAFETY: `cqe` is a real completion of this ring, reaped once.
/// let (bid, data) = unsafe { bufs.take(&cqe) }.unwrap();
/// assert_eq!(data, b"hello");
/// bufs.recycle(bid);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct BufRing {
    ring_fd: Arc<RingShare>,
    bgid: u16,
    entries: u16,
    buf_len: u32,
    tail: u16,
    /// One bit per buffer id: set while the application holds the buffer.
    held: Vec<u64>,
    /// Taken only by `drop` (or leaked by `leak`).
    ring_mem: ManuallyDrop<Mmap>,
    /// Taken only by `drop` (or leaked by `leak`).
    bufs: ManuallyDrop<Mmap>,
}

// SAFETY: the mappings are plain memory owned by this value, and `take`, `held` and
// `recycle` touch nothing but them (the kernel reads the tail wherever it is written from).
// The one thread-bound call is the unregistration in `drop`, which a `SINGLE_ISSUER` ring
// refuses on any thread but its issuer (`EEXIST`): then the group stays registered, so
// `drop` does not unmap its memory but leaves it to the ring's descriptor, which unmaps it
// only after closing (`ring_share.rs`). The descriptor share is an immutable handle.
unsafe impl Send for BufRing {}

impl BufRing {
    /// Allocates `entries` (a power of two, at most 32768) buffers of `buf_len` bytes,
    /// registers them with `ring` as group `bgid`, and gives them all to the kernel.
    pub fn new(ring: &Ring, bgid: u16, entries: u16, buf_len: u32) -> io::Result<Self> {
        if entries == 0 || !entries.is_power_of_two() || entries > 32768 || buf_len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a provided-buffer ring needs a power-of-two entry count up to 32768 and a non-zero buffer length",
            ));
        }
        let ring_len = usize::from(entries) * std::mem::size_of::<io_uring_buf>();
        let ring_mem = Mmap::anonymous(ring_len.max(4096), true)?;
        // Not populated: `count × len` may be large, and a page costs memory only once the
        // kernel has received into it.
        let bufs = Mmap::anonymous(usize::from(entries) * buf_len as usize, false)?;
        let reg = io_uring_buf_reg {
            ring_addr: ring_mem.as_ptr() as u64,
            ring_entries: u32::from(entries),
            bgid,
            ..Default::default()
        };
        // SAFETY: `reg` is valid for the call; the ring memory it names is owned by the
        // returned BufRing, which unmaps it only once the group is unregistered or the ring
        // closed (its `Drop`).
        unsafe {
            sys::io_uring_register(
                ring.fd(),
                IORING_REGISTER_PBUF_RING,
                (&reg as *const io_uring_buf_reg).cast(),
                1,
            )
        }
        .map_err(memlock_hint)?;
        let mut this = Self {
            ring_fd: ring.shared_fd(),
            bgid,
            entries,
            buf_len,
            tail: 0,
            held: vec![!0u64; usize::from(entries).div_ceil(64)],
            ring_mem: ManuallyDrop::new(ring_mem),
            bufs: ManuallyDrop::new(bufs),
        };
        for bid in 0..entries {
            this.recycle(bid);
        }
        Ok(this)
    }

    /// The buffer group id to name in SQEs.
    pub fn group(&self) -> u16 {
        self.bgid
    }

    /// Number of buffers.
    pub fn entries(&self) -> u16 {
        self.entries
    }

    /// Size of each buffer.
    pub fn buf_len(&self) -> u32 {
        self.buf_len
    }

    /// The buffer id in CQE `flags`, if the CQE used a provided buffer.
    pub fn buffer_id(cqe_flags: u32) -> Option<u16> {
        (cqe_flags & IORING_CQE_F_BUFFER != 0)
            .then_some((cqe_flags >> IORING_CQE_BUFFER_SHIFT) as u16)
    }

    fn is_held(&self, bid: u16) -> bool {
        self.held[usize::from(bid) / 64] & (1 << (bid % 64)) != 0
    }

    fn set_held(&mut self, bid: u16, held: bool) {
        let word = &mut self.held[usize::from(bid) / 64];
        if held {
            *word |= 1 << (bid % 64);
        } else {
            *word &= !(1 << (bid % 64));
        }
    }

    /// Takes the buffer a completion used: returns its id and the `cqe.res` bytes of data, or
    /// `None` if the CQE used no buffer of this ring (or failed).
    ///
    /// # Safety
    /// `cqe` must be a completion the kernel posted for a request that selected from this
    /// group, reaped once; the kernel has then finished writing that buffer.
    pub unsafe fn take(&mut self, cqe: &io_uring_cqe) -> Option<(u16, &[u8])> {
        let bid = Self::buffer_id(cqe.flags)?;
        if bid >= self.entries || self.is_held(bid) {
            return None;
        }
        self.set_held(bid, true);
        let len = usize::try_from(cqe.res)
            .unwrap_or(0)
            .min(self.buf_len as usize);
        // SAFETY: the buffer lies inside `bufs`; the kernel handed it back (caller's contract)
        // and it is marked held, so the kernel cannot pick it until `recycle`.
        let data = unsafe { std::slice::from_raw_parts(self.buf_ptr(bid), len) };
        Some((bid, data))
    }

    /// The contents of a held buffer (`len` bytes, capped at the buffer length).
    pub fn held(&self, bid: u16, len: usize) -> Option<&[u8]> {
        if bid >= self.entries || !self.is_held(bid) {
            return None;
        }
        // SAFETY: the buffer is held by the application, so the kernel does not write it.
        Some(unsafe {
            std::slice::from_raw_parts(self.buf_ptr(bid), len.min(self.buf_len as usize))
        })
    }

    fn buf_ptr(&self, bid: u16) -> *mut u8 {
        // SAFETY: bid < entries, so the offset stays inside the buffer mapping.
        unsafe {
            self.bufs
                .as_ptr()
                .add(usize::from(bid) * self.buf_len as usize)
        }
    }

    /// Gives a held buffer back to the kernel. Returns false (and does nothing) if `bid` is not
    /// held by the application.
    pub fn recycle(&mut self, bid: u16) -> bool {
        if bid >= self.entries || !self.is_held(bid) {
            return false;
        }
        self.set_held(bid, false);
        let mask = self.entries - 1;
        let slot = usize::from(self.tail & mask);
        let entry = io_uring_buf {
            addr: self.buf_ptr(bid) as u64,
            len: self.buf_len,
            bid,
            resv: 0,
        };
        // SAFETY: slot < entries lies inside the ring memory. Only the `addr`, `len` and `bid`
        // fields are written (entry 0's `resv` is the shared tail, written below atomically).
        unsafe {
            let p = self.ring_mem.as_ptr().cast::<io_uring_buf>().add(slot);
            std::ptr::addr_of_mut!((*p).addr).write(entry.addr);
            std::ptr::addr_of_mut!((*p).len).write(entry.len);
            std::ptr::addr_of_mut!((*p).bid).write(entry.bid);
        }
        self.tail = self.tail.wrapping_add(1);
        // SAFETY: the tail is the u16 at byte 14 of the ring memory; Release publishes the
        // entry written above before the kernel can see the new tail.
        unsafe {
            (*self.ring_mem.as_ptr().add(14).cast::<AtomicU16>())
                .store(self.tail, Ordering::Release)
        };
        true
    }
}

impl BufRing {
    /// Lets go of the ring without unregistering the group or unmapping anything: for a
    /// group whose selecting requests may still be in flight when its owner must give up
    /// (a shutdown that could not wait for them). The ring and buffer memory stay mapped for
    /// the rest of the process, since the kernel may still write into it; only this value's
    /// share of the ring's descriptor is dropped, so that closing the [`Ring`] ends the
    /// io_uring instance, whose teardown cancels those requests and unregisters the group.
    ///
    /// ```
    /// use ringsteal_uring::{BufRing, Features, Ring};
    ///
    /// if Features::get()?.pbuf_ring() {
    ///     let ring = Ring::new(4)?;
    ///     let bufs = BufRing::new(&ring, 0, 4, 64)?;
    ///     bufs.leak(); // 256 bytes of buffers stay mapped; the ring may close
    ///     drop(ring);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn leak(self) {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again: the descriptor share is moved out
        // once and dropped; every other field (the mappings, the held bitmap) is leaked.
        drop(unsafe { std::ptr::read(&this.ring_fd) });
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        let reg = io_uring_buf_reg {
            bgid: self.bgid,
            ..Default::default()
        };
        // SAFETY: `reg` is valid for the call; the descriptor is this group's ring's.
        let unregistered = unsafe {
            sys::io_uring_register(
                self.ring_fd.raw(),
                IORING_UNREGISTER_PBUF_RING,
                (&reg as *const io_uring_buf_reg).cast(),
                1,
            )
        }
        .is_ok();
        // SAFETY: the mappings are taken once, here, and the fields are not used again.
        let mappings = unsafe {
            [
                ManuallyDrop::take(&mut self.ring_mem),
                ManuallyDrop::take(&mut self.bufs),
            ]
        };
        if unregistered {
            // The kernel selects no more buffers from this group, and no selecting request
            // is in flight (`Ring::push`'s contract): the memory may go now.
            drop(mappings);
        } else {
            // Still registered (a SINGLE_ISSUER ring refuses other threads): a request could
            // still pick these addresses until the ring ends. Unmapped after it closes.
            self.ring_fd.keep_until_closed(mappings);
        }
    }
}
