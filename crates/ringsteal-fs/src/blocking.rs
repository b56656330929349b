//! Calls without an io_uring opcode run on the runtime's blocking pool. Off the runtime
//! they fail like ops do, with an error rather than a panic.

use std::io;

use ringsteal_rt::{JoinHandle, RuntimeHandle};

/// Runs `f` on the current runtime's blocking pool, or fails if there is no runtime here.
pub(crate) fn spawn_blocking<F, R>(f: F) -> io::Result<JoinHandle<R>>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    match RuntimeHandle::try_current() {
        Some(handle) => Ok(handle.spawn_blocking(f)),
        None => Err(off_runtime()),
    }
}

/// The error of an fs call made where no ringsteal runtime runs (the same words as an op's).
pub(crate) fn off_runtime() -> io::Error {
    io::Error::other(
        "ringsteal I/O must be polled on a ringsteal shard (inside a task or Runtime::block_on)",
    )
}
