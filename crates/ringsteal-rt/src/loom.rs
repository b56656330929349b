//! Switches the atomics of the kernel-free protocols (task state, wake flags, the sleep/wake
//! protocol, the lanes' state word) to loom's model-checked versions under `--cfg loom`, and
//! to std's otherwise. `Ordering` is std's in both cases (loom re-exports it). `Mutex` is
//! parking_lot's, except under loom (loom's) and Miri (std's), behind parking_lot's API.

/// A mutex of `$sync` (`std::sync` or `loom::sync`) with parking_lot's API: `lock()` and
/// `into_inner()` return the value, not a `Result` (a poisoned lock is used as it is).
#[cfg(any(loom, miri))]
macro_rules! mutex_with_parking_lot_api {
    ($($sync:ident)::+) => {
        #[derive(Default)]
        pub(crate) struct Mutex<T>($($sync)::+::Mutex<T>);

        impl<T> Mutex<T> {
            pub(crate) fn new(value: T) -> Self {
                Self($($sync)::+::Mutex::new(value))
            }

            pub(crate) fn lock(&self) -> $($sync)::+::MutexGuard<'_, T> {
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
    };
}

#[cfg(not(loom))]
pub(crate) mod sync {
    #[cfg(not(miri))]
    pub(crate) use parking_lot::Mutex;

    // Under Miri, std's: parking_lot parks a contended lock through a word lock that turns
    // integers into pointers, which Miri's strict provenance refuses, so tests that contend
    // a lock on two threads could not run there.
    #[cfg(miri)]
    mutex_with_parking_lot_api!(std::sync);

    pub(crate) mod atomic {
        pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize};
    }
}

#[cfg(loom)]
pub(crate) mod sync {
    mutex_with_parking_lot_api!(loom::sync);

    pub(crate) mod atomic {
        pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize};
    }
}

/// `spin_loop`: std's, or loom's (which yields, so a model with a spinning thread ends).
pub(crate) mod hint {
    #[cfg(loom)]
    pub(crate) use loom::hint::spin_loop;
    #[cfg(not(loom))]
    pub(crate) use std::hint::spin_loop;
}
