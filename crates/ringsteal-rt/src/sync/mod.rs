//! Synchronisation: [`CancellationToken`] (public) and the runtime's internal primitives.

pub(crate) mod atomic_waker;
mod cancellation_token;
mod cancellation_tree;

pub use cancellation_token::{
    CancellationToken, DropGuard, WaitForCancellation, WaitForCancellationOwned,
};
