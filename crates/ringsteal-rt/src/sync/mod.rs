//! Synchronisation primitives.

pub(crate) mod atomic_waker;
