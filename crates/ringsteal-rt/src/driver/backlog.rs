//! SQEs waiting for room in the SQ while the kernel refuses submissions (`EBUSY`/`EAGAIN`
//! from `io_uring_enter` until completions are reaped). Failing them instead would fail ops
//! that merely came at a busy moment, or lose cancels.

use std::collections::VecDeque;

use ringsteal_uring::{io_uring_sqe, Ring};

/// Most SQEs that must sit in consecutive SQ slots (an op's linked SQEs).
pub(super) const GROUP: usize = crate::op::raw::MAX_SQES;

/// Groups of SQEs in push order; each group goes to the SQ whole.
#[derive(Default)]
pub(super) struct Backlog {
    groups: VecDeque<([io_uring_sqe; GROUP], u8)>,
    sqes: u32,
}

impl Backlog {
    pub(super) fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// SQEs waiting.
    pub(super) fn len(&self) -> u32 {
        self.sqes
    }

    /// Keeps `sqes` (at most [`GROUP`], to go into consecutive slots) for later.
    pub(super) fn push(&mut self, sqes: &[io_uring_sqe]) {
        let mut group = [io_uring_sqe::zeroed(); GROUP];
        group[..sqes.len()].copy_from_slice(sqes);
        self.groups.push_back((group, sqes.len() as u8));
        self.sqes += sqes.len() as u32;
    }

    /// Takes every waiting SQE, oldest first, into `out` (a lost ring fails them).
    pub(super) fn take_all(&mut self, out: &mut Vec<io_uring_sqe>) {
        for (group, n) in self.groups.drain(..) {
            out.extend_from_slice(&group[..usize::from(n)]);
        }
        self.sqes = 0;
    }

    /// Moves waiting groups, oldest first, into the SQ while it has room.
    ///
    /// # Safety
    /// As for `Ring::push_all`: every SQE here must have been queued under that contract
    /// (what it points at stays valid until its CQE).
    pub(super) unsafe fn flush_into(&mut self, ring: &mut Ring) {
        while let Some((group, n)) = self.groups.front() {
            let n = usize::from(*n);
            // SAFETY: forwarded from the caller.
            if !unsafe { ring.push_all(&group[..n]) } {
                return;
            }
            self.sqes -= n as u32;
            self.groups.pop_front();
        }
    }
}
