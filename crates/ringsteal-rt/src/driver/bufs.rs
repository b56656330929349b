//! The shard's provided-buffer group (`buf/provided/`): registered on this ring the first time
//! a stream asks for it, retired when the driver is dropped.
//!
//! Owns: whether the group exists, failed to register (then streams receive into heap
//! buffers instead, and registration is not retried), or was never needed; and retiring it
//! when the ring goes. The ring itself is dropped as any field: a group still holding
//! buffers keeps the io_uring instance alive through its own share of the ring's descriptor
//! (`ringsteal_uring::BufRing`), so it never unregisters from a reused descriptor number.
//! May not: take or recycle buffers (the group does, from any thread).

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
        match std::mem::take(&mut self.bufs) {
            // Every request that selects from the group has had its last CQE (what may be
            // owed still is zero-copy notifications the drain gave up on): it may go now (or
            // stay, mapped and registered, until the buffers still held come back).
            GroupSlot::Registered(group) if self.selects_no_more_buffers() => group.retire(),
            // The shutdown drain gave up: the kernel may still write into the group's buffers
            // until closing the ring (right after this) has cancelled those requests. Never
            // free that memory.
            GroupSlot::Registered(group) => group.abandon(),
            _ => {}
        }
    }
}
