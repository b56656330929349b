//! The shard's provided-buffer group (`buf/provided/`): registered on this ring the first time
//! a stream asks for it, retired when the driver is dropped.
//!
//! Owns: whether the group exists, failed to register (then streams receive into heap
//! buffers instead, and registration is not retried), or was never needed; and the ring's
//! hand-over at the end. May not: take or recycle buffers (the group does, from any thread).

use std::mem::ManuallyDrop;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use super::Driver;
use crate::buf::provided::BufGroup;

/// The state of a shard's buffer group.
#[derive(Default)]
pub(crate) enum GroupSlot {
    /// No stream has asked for it yet.
    #[default]
    Unused,
    Registered(Arc<BufGroup>),
    /// Registration failed (memlock, or a kernel without buffer rings): don't retry.
    Refused,
}

impl Driver {
    /// The shard's buffer group of `count` buffers of `len` bytes, registered on first use.
    /// `None` if the kernel refused it. Runs on the shard's thread (the ring's issuer).
    pub(crate) fn recv_group(
        &mut self,
        count: u16,
        len: u32,
        in_use: &Arc<AtomicU64>,
    ) -> Option<Arc<BufGroup>> {
        if let GroupSlot::Unused = self.bufs {
            self.bufs = match BufGroup::register(&self.ring, count, len, in_use.clone()) {
                Ok(group) => GroupSlot::Registered(group),
                Err(_) => GroupSlot::Refused,
            };
        }
        match &self.bufs {
            GroupSlot::Registered(group) => Some(group.clone()),
            _ => None,
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // SAFETY: the ring is taken out once, here, and the driver is never used again.
        let ring = unsafe { ManuallyDrop::take(&mut self.ring) };
        let ring = match std::mem::take(&mut self.bufs) {
            // Every request that selects from the group has had its last CQE: it may go (or
            // keep the ring open for buffers still held).
            GroupSlot::Registered(group) if self.in_flight == 0 => group.retire(ring),
            GroupSlot::Registered(group) => {
                // The shutdown drain gave up: the kernel may still write into the group's
                // buffers after the ring is closed, until it has cancelled those requests.
                // Never free that memory.
                std::mem::forget(group);
                Some(ring)
            }
            _ => Some(ring),
        };
        drop(ring);
    }
}
