//! Typed errors of the runtime API: [`BuildError`] and [`SpawnError`].

use std::fmt;
use std::io;

/// Why [`Builder::build`](crate::Builder::build) failed. Its `Display` names the cause and
/// the fix; it converts into an [`io::Error`] for `?` in functions that return one.
///
/// ```
/// use ringsteal_rt::{BuildError, Runtime};
///
/// match Runtime::builder().shards(0).build() {
///     Err(BuildError::Config(why)) => assert!(why.contains("shards")),
///     other => panic!("zero shards cannot build: {other:?}"),
/// }
/// // On a machine without io_uring (a container's seccomp profile, say), `build` returns
/// // `BuildError::Unavailable` with the cause and the fix in its text.
/// if let Err(e) = Runtime::builder().shards(1).build() {
///     eprintln!("{e}");
/// }
/// ```
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
                write!(f, "cannot build a ringsteal runtime: the io_uring of shard {shard} failed: {source}")?;
                if matches!(source.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) {
                    f.write_str(
                        ". Fix: raise the open-file limit (`ulimit -n`) or close descriptors: \
                         each shard needs a descriptor for its ring, and one for its eventfd \
                         where that wakes it",
                    )?;
                }
                Ok(())
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

/// Why a task could not be spawned: returned by the `try_` spawn functions, where the
/// others panic (or, at shutdown, hand back a cancelled [`JoinHandle`](crate::JoinHandle)).
///
/// ```
/// use ringsteal_rt::{Placement, Runtime, SpawnError};
///
/// let rt = Runtime::builder().shards(2).build().unwrap();
/// let err = rt.handle().try_spawn_with(Placement::Pinned(5), async {}).unwrap_err();
/// assert_eq!(err, SpawnError::NoSuchShard { shard: 5, shards: 2 });
/// // Off the runtime's threads, with no runtime entered, there is no runtime to spawn on.
/// let outside = ringsteal_rt::try_spawn_with(Placement::Pinned(0), async {}).unwrap_err();
/// assert_eq!(outside, SpawnError::NotOnShard);
/// assert!(outside.to_string().contains("not on a ringsteal runtime"));
/// ```
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
    /// No runtime to spawn on here: a local spawn (`spawn_local`) on a thread that is not
    /// a shard, or any other spawn (`try_spawn_with`, `TaskGroup::try_spawn_with`) outside a
    /// runtime (not in a task, a `spawn_blocking` closure or a `RuntimeHandle::enter`).
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
                f.write_str(
                    "not on a ringsteal runtime: spawn from a task (spawn_local: a task on a \
                     shard), a spawn_blocking closure or inside RuntimeHandle::enter",
                )
            }
        }
    }
}

impl std::error::Error for SpawnError {}
