//! Small building blocks with no runtime knowledge.

pub(crate) mod affinity;
pub(crate) mod block_cache;
mod cache_padded;
mod contain;
mod deadline;
mod monotonic;
mod park_on;
mod queue;
mod rand;
pub(crate) mod sigmask;
mod thread;
pub(crate) mod wake_later;

pub(crate) use cache_padded::CachePadded;
pub(crate) use contain::contain_panic;
pub(crate) use deadline::{deadline_after, NEVER};
pub(crate) use monotonic::monotonic_ns;
pub(crate) use park_on::park_on;
pub(crate) use queue::{drain_queue, retry_steal};
pub(crate) use rand::{mix64, FastRand};
pub(crate) use thread::thread_builder;
