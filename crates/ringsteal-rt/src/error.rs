//! Typed errors of the runtime API: [`BuildError`] and [`SpawnError`].

use std::fmt;
use std::io;

/// Why [`Builder::build`](crate::Builder::build) failed.
#[derive(Debug)]
pub enum BuildError {
    /// io_uring cannot be used on this machine; the text says why and how to fix it.
    Unavailable(ringsteal_uring::SetupError),
    /// A shard's ring could not be set up (after trying every fallback).
    Ring {
        /// The shard.
        shard: usize,
        /// The last error.
        source: io::Error,
    },
    /// The builder's settings cannot work here (e.g. `WakeMechanism::MsgRing` on a kernel
    /// without `IORING_OP_MSG_RING`, or zero shards).
    Config(String),
    /// A shard thread could not be started.
    Thread(io::Error),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Unavailable(e) => write!(f, "cannot build a ringsteal runtime: {e}"),
            BuildError::Ring { shard, source } => {
                write!(f, "cannot build a ringsteal runtime: the io_uring of shard {shard} failed: {source}")
            }
            BuildError::Config(msg) => write!(f, "invalid ringsteal runtime configuration: {msg}"),
            BuildError::Thread(e) => write!(f, "cannot start a ringsteal shard thread: {e}"),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Unavailable(e) => Some(e),
            BuildError::Ring { source, .. } | BuildError::Thread(source) => Some(source),
            BuildError::Config(_) => None,
        }
    }
}

impl From<BuildError> for io::Error {
    fn from(err: BuildError) -> Self {
        let kind = match &err {
            BuildError::Unavailable(e) => io::Error::from(e.clone()).kind(),
            BuildError::Ring { source, .. } | BuildError::Thread(source) => source.kind(),
            BuildError::Config(_) => io::ErrorKind::InvalidInput,
        };
        io::Error::new(kind, err)
    }
}

/// Why a task could not be spawned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpawnError {
    /// The placement names a shard the runtime does not have.
    NoSuchShard {
        /// The shard asked for.
        shard: usize,
        /// How many shards the runtime has.
        shards: usize,
    },
    /// The runtime is shutting down (dropped, or stopped because a shard's own loop kept
    /// failing, a runtime bug: ADR-0019).
    ShuttingDown,
    /// A local spawn was attempted on a thread that is not a shard of this runtime.
    NotOnShard,
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnError::NoSuchShard { shard, shards } => write!(
                f,
                "cannot place a task on shard {shard}: the runtime has {shards} shard{} (0..{shards})",
                if *shards == 1 { "" } else { "s" }
            ),
            SpawnError::ShuttingDown => f.write_str("cannot spawn: the runtime is shutting down"),
            SpawnError::NotOnShard => {
                f.write_str("spawn_local must be called from a task running on a ringsteal shard")
            }
        }
    }
}

impl std::error::Error for SpawnError {}
