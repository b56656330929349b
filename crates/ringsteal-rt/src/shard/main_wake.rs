//! The waker of the future given to `block_on`: a flag the shard loop checks each tick, plus
//! a doorbell when it is set from another thread while the shard sleeps.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::task::Wake;

use super::context;
use crate::shared::Shared;

pub(crate) struct MainWake {
    woken: AtomicBool,
    shared: Arc<Shared>,
    shard: usize,
}

impl MainWake {
    pub(crate) fn new(shared: Arc<Shared>, shard: usize) -> Self {
        // Set, so the future is polled once at the start.
        Self {
            woken: AtomicBool::new(true),
            shared,
            shard,
        }
    }

    /// Clears and returns the flag.
    pub(crate) fn take(&self) -> bool {
        self.woken.load(SeqCst) && self.woken.swap(false, SeqCst)
    }

    pub(crate) fn is_set(&self) -> bool {
        self.woken.load(SeqCst)
    }
}

impl Wake for MainWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, SeqCst);
        let here = context::with_shard_of(Arc::as_ptr(&self.shared), |cur| {
            cur.is_some_and(|s| s.index == self.shard)
        });
        if !here {
            self.shared.notify(self.shard);
        }
    }
}
