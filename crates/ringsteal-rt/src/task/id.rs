//! [`Id`]: a task's identity, as tokio's `task::Id`; and [`id`] / [`try_id`], the id of the
//! task being polled.
//!
//! Owns: handing out ids and the thread-local "current task" slot, for tasks polled off a
//! shard (the blocking pool) and futures dropped outside a poll; a shard marks the task it
//! polls in its own `Polling`, which `try_id` asks second. May not: keep a task alive or
//! reach it through its id.
//!
//! Ids come from one process-wide counter, taken in blocks of [`BLOCK`] per thread, so a spawn
//! touches a shared cache line once per [`BLOCK`] spawns, not every time. No two tasks of the
//! process ever get the same id (a `u64` does not wrap in practice), so an id may be kept in a
//! map after its task has finished.

use std::cell::Cell;
use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

/// Ids a thread takes from the process-wide counter at a time.
const BLOCK: u64 = 1024;

/// The first id of the next block any thread takes.
static NEXT_BLOCK: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's current block: the next id to give out, and the end of the block.
    static BLOCK_LEFT: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
    /// The id of the task this thread is polling (or dropping), 0 for none.
    static CURRENT: Cell<u64> = const { Cell::new(0) };
}

/// The identity of a task, unique among every task the process spawns (as tokio's
/// `task::Id`: printable, hashable and ordered as its number, which says nothing about the
/// order tasks were spawned in across threads).
///
/// Get it from a [`JoinHandle`](super::JoinHandle), an [`AbortHandle`](super::AbortHandle), a
/// [`JoinError`](super::JoinError), or from inside the task with [`id`] / [`try_id`].
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
/// rt.block_on(async {
///     let handle = ringsteal_rt::spawn(async { ringsteal_rt::task::id() });
///     let id = handle.id();
///     assert_eq!(handle.await.unwrap(), id);
///     // `block_on`'s own future is not a task.
///     assert_eq!(ringsteal_rt::task::try_id(), None);
/// });
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id(NonZeroU64);

impl Id {
    /// A fresh id.
    pub(crate) fn next() -> Self {
        let n = BLOCK_LEFT.with(|left| {
            let (mut next, mut end) = left.get();
            if next == end {
                next = NEXT_BLOCK.fetch_add(BLOCK, Ordering::Relaxed);
                end = next + BLOCK;
            }
            left.set((next + 1, end));
            next
        });
        // The counter starts at 1 and only grows (2^64 ids are never handed out).
        Self(NonZeroU64::new(n).unwrap_or(NonZeroU64::MIN))
    }

    /// The id as a number (as tokio's `Id` prints it).
    pub fn as_u64(self) -> u64 {
        self.0.get()
    }

    pub(crate) fn from_u64(n: u64) -> Option<Self> {
        NonZeroU64::new(n).map(Self)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id({})", self.0)
    }
}

/// The id of the task being polled on this thread.
///
/// # Panics
/// Outside a task, as tokio's `task::id`: in `block_on`'s own future, or on a thread that is
/// not polling one. [`try_id`] returns `None` there instead.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let a = ringsteal_rt::spawn(async { ringsteal_rt::task::id() });
///     let b = ringsteal_rt::spawn(async { ringsteal_rt::task::id() });
///     assert_ne!(a.await.unwrap(), b.await.unwrap());
/// });
/// ```
#[track_caller]
pub fn id() -> Id {
    try_id().expect("`ringsteal::task::id` called outside a task")
}

/// The id of the task being polled on this thread, or `None` outside a task (including in
/// `block_on`'s own future).
///
/// ```
/// assert_eq!(ringsteal_rt::task::try_id(), None);
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// let inside = rt.block_on(async {
///     ringsteal_rt::spawn(async { ringsteal_rt::task::try_id() }).await
/// });
/// assert!(inside.unwrap().is_some());
/// ```
pub fn try_id() -> Option<Id> {
    // A task polled by the blocking pool, or one whose future is dropped outside a poll
    // (`CurrentId`); else the task the thread's shard is polling (its `Polling`).
    CURRENT
        .with(|c| Id::from_u64(c.get()))
        .or_else(crate::shard::context::polled_task_id)
}

/// Marks `id` as the task being polled on this thread until dropped, then restores what was
/// there before.
pub(crate) struct CurrentId {
    prev: u64,
}

impl CurrentId {
    pub(crate) fn enter(id: Id) -> Self {
        Self {
            prev: CURRENT.with(|c| c.replace(id.as_u64())),
        }
    }
}

impl Drop for CurrentId {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.prev));
    }
}
