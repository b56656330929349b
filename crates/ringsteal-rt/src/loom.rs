//! Switches the atomics of the kernel-free protocols (task state, wake flags, the sleep/wake
//! protocol, the lanes' state word) to loom's model-checked versions under `--cfg loom`, and
//! to std's otherwise. `Ordering` is std's in both cases (loom re-exports it). `Mutex` is
//! parking_lot's outside loom (std's under Miri) and loom's, behind parking_lot's `lock()`
//! signature, under it.

#[cfg(not(loom))]
pub(crate) mod sync {
    #[cfg(not(miri))]
    pub(crate) use parking_lot::Mutex;

    /// Under Miri, std's mutex with parking_lot's API: parking_lot parks a contended lock
    /// through a word lock that turns integers into pointers, which Miri's strict provenance
    /// refuses, so tests that contend a lock on two threads could not run there.
    #[cfg(miri)]
    #[derive(Default)]
    pub(crate) struct Mutex<T>(std::sync::Mutex<T>);

    #[cfg(miri)]
    impl<T> Mutex<T> {
        pub(crate) const fn new(value: T) -> Self {
            Self(std::sync::Mutex::new(value))
        }

        pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, T> {
            self.0
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        }

        pub(crate) fn into_inner(self) -> T {
            self.0
                .into_inner()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        }
    }

    pub(crate) mod atomic {
        pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicUsize};
    }
}

#[cfg(loom)]
pub(crate) mod sync {
    /// loom's mutex with parking_lot's API: `lock()` returns the guard (no poisoning).
    #[derive(Default)]
    pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

    impl<T> Mutex<T> {
        pub(crate) fn new(value: T) -> Self {
            Self(loom::sync::Mutex::new(value))
        }

        pub(crate) fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
            self.0
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        }

        pub(crate) fn into_inner(self) -> T {
            self.0
                .into_inner()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        }
    }

    pub(crate) mod atomic {
        pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicUsize};
    }
}
