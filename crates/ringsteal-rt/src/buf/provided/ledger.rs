//! [`Ledger`]: the bookkeeping of one provided-buffer group, without the kernel: how many
//! buffers the application holds, which stalled streams wait for buffers to come back, when
//! enough have come back to wake them, and whether the group is retired (its shard is gone).
//!
//! Owns: the counts, the waiter list and the retire state; every method runs under the
//! group's lock (`group.rs`). May not: touch the buffer ring or wake anyone (it returns the
//! wakers; the caller wakes them after the lock is released, or hands them to the shard).
//! Kernel-free, so it runs under Miri.

use std::task::Waker;

/// Identifies one stalled stream among a group's waiters (so a stream polled again while it
/// waits replaces its waker instead of adding one).
pub(crate) type WaiterKey = u64;

/// What giving a buffer back requires of the caller.
#[derive(Debug, Default)]
pub(crate) struct GiveBack {
    /// Hand the buffer to the kernel again (false once the group is retired).
    pub(crate) recycle: bool,
    /// Stalled streams to wake: enough buffers are free again for them to re-arm.
    pub(crate) wake: Vec<Waker>,
    /// That was the last held buffer of a retired group: release the group's memory now.
    pub(crate) release: bool,
}

/// The accounting of one group of `count` buffers.
#[derive(Debug)]
pub(crate) struct Ledger {
    count: u32,
    /// Free buffers at which stalled streams are woken to re-arm.
    threshold: u32,
    /// Buffers the kernel filled and the application has not given back yet.
    in_use: u32,
    retired: bool,
    waiters: Vec<(WaiterKey, Waker)>,
    next_key: WaiterKey,
}

impl Ledger {
    /// A group of `count` buffers, all free. Stalled streams re-arm once half of them are
    /// free again (at least one): re-arming into a nearly empty ring would only run it dry
    /// again after a buffer or two, one multishot request per buffer.
    pub(crate) fn new(count: u32) -> Self {
        Self {
            count,
            threshold: (count / 2).max(1),
            in_use: 0,
            retired: false,
            waiters: Vec::new(),
            next_key: 0,
        }
    }

    /// Buffers the application holds.
    pub(crate) fn in_use(&self) -> u32 {
        self.in_use
    }

    /// Buffers the kernel may fill.
    pub(crate) fn free(&self) -> u32 {
        self.count - self.in_use
    }

    /// A completion handed buffer to the application. False if every buffer was already
    /// held (a completion naming a buffer twice: never from a correct kernel).
    pub(crate) fn taken(&mut self) -> bool {
        if self.in_use == self.count {
            return false;
        }
        self.in_use += 1;
        true
    }

    /// The application gave a buffer back.
    pub(crate) fn given_back(&mut self) -> GiveBack {
        debug_assert!(self.in_use > 0, "a buffer given back that was not taken");
        self.in_use = self.in_use.saturating_sub(1);
        if self.retired {
            return GiveBack {
                recycle: false,
                wake: Vec::new(),
                release: self.in_use == 0,
            };
        }
        let wake = if self.free() >= self.threshold && !self.waiters.is_empty() {
            self.waiters.drain(..).map(|(_, w)| w).collect()
        } else {
            Vec::new()
        };
        GiveBack {
            recycle: true,
            wake,
            release: false,
        }
    }

    /// A stream whose multishot receive ended for want of buffers asks whether to re-arm.
    /// True: enough buffers are free (or the group is retired: re-arming then fails on its
    /// own, and the stream must not wait for buffers that never come). False: `waker` is
    /// registered under `key` (a key is assigned on the first wait) and is woken by the
    /// [`given_back`](Self::given_back) that makes enough buffers free.
    pub(crate) fn ready_or_wait(&mut self, key: &mut Option<WaiterKey>, waker: &Waker) -> bool {
        if self.retired || self.free() >= self.threshold {
            self.forget(key);
            return true;
        }
        let k = *key.get_or_insert_with(|| {
            self.next_key += 1;
            self.next_key
        });
        match self.waiters.iter_mut().find(|(wk, _)| *wk == k) {
            Some((_, w)) => w.clone_from(waker),
            None => self.waiters.push((k, waker.clone())),
        }
        false
    }

    /// A waiting stream went away (or re-armed): drops its waker.
    pub(crate) fn forget(&mut self, key: &mut Option<WaiterKey>) {
        if let Some(k) = key.take() {
            self.waiters.retain(|(wk, _)| *wk != k);
        }
    }

    /// The group's shard is gone: returns the waiters (to wake: they must not wait for
    /// buffers that will never be recycled) and whether the memory can be released now
    /// (no buffer is held).
    pub(crate) fn retire(&mut self) -> (Vec<Waker>, bool) {
        self.retired = true;
        let wake = self.waiters.drain(..).map(|(_, w)| w).collect();
        (wake, self.in_use == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counter() -> (Arc<Count>, Waker) {
        let c = Arc::new(Count(AtomicUsize::new(0)));
        (c.clone(), Waker::from(c))
    }

    fn take(l: &mut Ledger, n: u32) {
        for _ in 0..n {
            assert!(l.taken());
        }
    }

    #[test]
    fn a_stalled_stream_is_woken_once_half_the_group_is_free_again() {
        let mut l = Ledger::new(8);
        take(&mut l, 8);
        let (c, w) = counter();
        let mut key = None;
        assert!(!l.ready_or_wait(&mut key, &w), "an empty group must stall");
        for _ in 0..3 {
            let g = l.given_back();
            assert!(g.recycle && g.wake.is_empty(), "3 of 8 free is below half");
        }
        let g = l.given_back();
        assert_eq!(g.wake.len(), 1, "4 of 8 free wakes the waiter");
        g.wake.into_iter().for_each(Waker::wake);
        assert_eq!(c.0.load(Ordering::SeqCst), 1);
        // The waiter list is empty now: the next give-back wakes no one.
        assert!(l.given_back().wake.is_empty());
        assert!(l.ready_or_wait(&mut key, &w), "5 of 8 free: re-arm now");
        assert_eq!(key, None);
    }

    #[test]
    fn a_stream_polled_again_while_it_waits_keeps_one_waker() {
        let mut l = Ledger::new(2);
        take(&mut l, 2);
        let (c, w) = counter();
        let mut key = None;
        for _ in 0..5 {
            assert!(!l.ready_or_wait(&mut key, &w));
        }
        let g = l.given_back();
        assert_eq!(g.wake.len(), 1);
        g.wake.into_iter().for_each(Waker::wake);
        assert_eq!(c.0.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_forgotten_waiter_is_not_woken() {
        let mut l = Ledger::new(2);
        take(&mut l, 2);
        let (_, w) = counter();
        let (mut a, mut b) = (None, None);
        assert!(!l.ready_or_wait(&mut a, &w));
        assert!(!l.ready_or_wait(&mut b, &w));
        assert_ne!(a, b);
        l.forget(&mut a);
        assert_eq!(a, None);
        assert_eq!(l.given_back().wake.len(), 1, "only b still waits");
    }

    #[test]
    fn a_group_of_one_buffer_re_arms_as_soon_as_it_is_back() {
        let mut l = Ledger::new(1);
        take(&mut l, 1);
        assert!(!l.taken(), "one buffer cannot be held twice");
        let (_, w) = counter();
        let mut key = None;
        assert!(!l.ready_or_wait(&mut key, &w));
        assert_eq!(l.given_back().wake.len(), 1);
    }

    #[test]
    fn retiring_wakes_every_waiter_and_releases_with_the_last_held_buffer() {
        let mut l = Ledger::new(4);
        take(&mut l, 3);
        let (c, w) = counter();
        let mut key = None;
        assert!(!l.ready_or_wait(&mut key, &w));
        let (wake, release_now) = l.retire();
        assert_eq!(wake.len(), 1);
        wake.into_iter().for_each(Waker::wake);
        assert_eq!(c.0.load(Ordering::SeqCst), 1);
        assert!(!release_now, "3 buffers are still held");
        assert!(
            l.ready_or_wait(&mut key, &w),
            "a retired group never stalls anyone"
        );
        for left in (0..3).rev() {
            let g = l.given_back();
            assert!(!g.recycle, "a retired group's buffers go back to no kernel");
            assert_eq!(g.release, left == 0, "released with the last one only");
        }
        assert_eq!(l.in_use(), 0);
    }

    #[test]
    fn retiring_a_group_nobody_holds_releases_it_at_once() {
        let mut l = Ledger::new(4);
        take(&mut l, 2);
        l.given_back();
        l.given_back();
        assert!(l.retire().1);
    }
}
