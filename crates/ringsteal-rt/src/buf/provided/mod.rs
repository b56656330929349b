//! Provided buffers: memory a shard lends the kernel up front (a buffer ring registered with
//! `IORING_REGISTER_PBUF_RING`), from which a multishot receive picks a buffer each time data
//! arrives, so that a thousand idle connections pin no memory of their own.
//!
//! [`RecvBuf`] is what a receive stream yields: one buffer of data, owned. Dropping it hands
//! the buffer back to its shard's ring, from whatever thread drops it; a stream stalled for
//! want of buffers is woken once enough have come back (`ledger.rs`). The memory stays valid
//! while a `RecvBuf` is held, even after the runtime has shut down (`group.rs`).
//!
//! Files: `group.rs` (the one user of `ringsteal_uring::BufRing`: registration, taking and
//! recycling buffers, retirement at shutdown), `ledger.rs` (the kernel-free accounting:
//! buffers in use, waiters, retirement).

mod group;
mod ledger;

pub(crate) use group::BufGroup;
pub(crate) use ledger::WaiterKey;

use std::fmt;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;
use std::task::Waker;

use super::IoBuf;

/// Data a receive stream delivered: a provided buffer (lent back to its shard's buffer ring
/// when dropped) or, where the runtime receives without provided buffers, a plain heap
/// buffer. Dereferences to the received bytes.
///
/// Hold it as long as needed, on any thread; but each one held is a buffer the shard's
/// multishot receives cannot use. A stream that finds the shard's ring empty receives into
/// heap buffers (an allocation per receive) until half of the shard's buffers are free
/// again, so holding more than half of them for long costs every stream of the shard its
/// batching ([`Builder::recv_buffers`](crate::Builder::recv_buffers)); it never stalls one.
/// It is also an [`IoBuf`], so it can be sent on as it is (an echo without a copy).
///
/// ```
/// use std::io::Write;
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (rx, mut tx) = std::os::unix::net::UnixStream::pair().unwrap();
///     tx.write_all(b"hello").unwrap();
///     let mut stream = op::recv_multishot(&SharedFd::new(rx.into()));
///     let buf: ringsteal_rt::buf::RecvBuf = stream.next().await.unwrap().unwrap();
///     assert_eq!(&buf[..], b"hello");
///     assert_eq!(buf.to_vec(), b"hello");
/// });
/// ```
pub struct RecvBuf {
    inner: Inner,
}

enum Inner {
    Provided {
        group: Arc<BufGroup>,
        bid: u16,
        ptr: NonNull<u8>,
        len: usize,
    },
    Heap(Vec<u8>),
}

// SAFETY: a provided buffer is plain memory the kernel no longer writes (it is out of the
// ring while held) and is only read through `&self`; giving it back locks the group.
unsafe impl Send for RecvBuf {}
// SAFETY: as above: shared access only reads.
unsafe impl Sync for RecvBuf {}

impl RecvBuf {
    /// A provided buffer the application now holds.
    ///
    /// # Safety
    /// `ptr` points at `len` initialised bytes of `group`'s buffer `bid`, which the kernel
    /// handed back and which stays mapped while `group` lives.
    pub(crate) unsafe fn provided(
        group: Arc<BufGroup>,
        bid: u16,
        ptr: NonNull<u8>,
        len: usize,
    ) -> Self {
        Self {
            inner: Inner::Provided {
                group,
                bid,
                ptr,
                len,
            },
        }
    }

    /// Data received into a buffer of the heap (the paths without provided buffers).
    pub(crate) fn heap(data: Vec<u8>) -> Self {
        Self {
            inner: Inner::Heap(data),
        }
    }

    /// The received bytes, copied into a `Vec` (the buffer itself goes back when `self` is
    /// dropped).
    pub fn to_vec(&self) -> Vec<u8> {
        self[..].to_vec()
    }

    /// True if this is a provided buffer of a shard's buffer ring (false: a heap buffer, on
    /// the fallback paths).
    pub fn is_provided(&self) -> bool {
        matches!(self.inner, Inner::Provided { .. })
    }

    /// Gives the buffer back, pushing any waker that must be woken into `wakers` rather than
    /// waking it here (for the driver, which may not wake anything while it reaps).
    pub(crate) fn release_into(mut self, wakers: &mut Vec<Waker>) {
        // `self` holds nothing afterwards: its drop gives nothing back.
        wakers.extend(self.give_back());
    }

    fn give_back(&mut self) -> Vec<Waker> {
        match std::mem::replace(&mut self.inner, Inner::Heap(Vec::new())) {
            Inner::Provided { group, bid, .. } => group.give_back(bid),
            Inner::Heap(_) => Vec::new(),
        }
    }
}

impl Drop for RecvBuf {
    fn drop(&mut self) {
        // Dropped inside the driver (in an op's cell that a reap frees), the wakes wait for
        // the reap to end (`util/wake_later.rs`).
        crate::util::wake_later::wake_all(self.give_back());
    }
}

impl Deref for RecvBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.inner {
            // SAFETY: see `provided`: the bytes stay initialised and mapped while held, and
            // the kernel does not write a buffer that is out of its ring.
            Inner::Provided { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts(ptr.as_ptr(), *len)
            },
            Inner::Heap(v) => v,
        }
    }
}

/// Data that did not come from a receive (bytes kept from an earlier read, say) in the
/// same form as received data: a heap buffer.
///
/// ```
/// let buf = ringsteal_rt::buf::RecvBuf::from(b"kept".to_vec());
/// assert_eq!(&buf[..], b"kept");
/// assert!(!buf.is_provided());
/// ```
impl From<Vec<u8>> for RecvBuf {
    fn from(data: Vec<u8>) -> Self {
        Self::heap(data)
    }
}

impl AsRef<[u8]> for RecvBuf {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

// SAFETY: the bytes stay at the same address while the value lives, however it moves (they
// are in the group's mapping or a Vec's heap storage), and all `len` of them are initialised.
unsafe impl IoBuf for RecvBuf {
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

impl fmt::Debug for RecvBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecvBuf")
            .field("len", &self.len())
            .field("provided", &self.is_provided())
            .finish()
    }
}
