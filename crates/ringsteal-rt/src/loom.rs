//! Switches the atomics of the kernel-free protocols (task state, wake flags, the sleep/wake
//! protocol) to loom's model-checked versions under `--cfg loom`, and to std's otherwise.
//! `Ordering` is std's in both cases (loom re-exports it).

#[cfg(not(loom))]
pub(crate) mod sync {
    pub(crate) mod atomic {
        pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicUsize};
    }
}

#[cfg(loom)]
pub(crate) mod sync {
    pub(crate) mod atomic {
        pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicUsize};
    }
}
