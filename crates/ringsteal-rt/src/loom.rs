//! Switches the atomics of the kernel-free protocols (task state, wake flags) to loom's
//! model-checked versions under `--cfg loom`, and to std's otherwise.

#[cfg(not(loom))]
pub(crate) mod sync {
    pub(crate) use std::sync::atomic;
}

#[cfg(loom)]
pub(crate) mod sync {
    pub(crate) use loom::sync::atomic;
}
