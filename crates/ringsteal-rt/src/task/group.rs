//! [`TaskGroup`]: a set of tasks spawned together, cancelled together, joined together.

use std::collections::VecDeque;
use std::future::Future;

use crate::error::SpawnError;
use crate::placement::Placement;
use crate::runtime::RuntimeHandle;
use crate::sync::CancellationToken;
use crate::task::{JoinError, JoinHandle};

/// Tasks with one lifetime: spawn them with any placement, stop them cooperatively through
/// the group's [`token`](Self::token) or forcibly with [`abort_all`](Self::abort_all), and
/// collect every result with [`join_all`](Self::join_all). Dropping the group aborts what it
/// still holds, unless it was [`detach`](Self::detach)ed.
///
/// ```
/// use ringsteal_rt::{task::TaskGroup, Placement};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
/// rt.block_on(async {
///     let mut group = TaskGroup::new();
///     for shard in 0..2 {
///         let token = group.token().clone();
///         group.spawn_with(Placement::Pinned(shard), async move {
///             token.cancelled().await;
///             shard
///         });
///     }
///     group.cancel();
///     let results: Vec<usize> = group.join_all().await.into_iter().map(Result::unwrap).collect();
///     assert_eq!(results, [0, 1]);
/// });
/// ```
pub struct TaskGroup<T> {
    token: CancellationToken,
    /// Tasks not yet joined, in spawn order.
    handles: VecDeque<JoinHandle<T>>,
    /// Results a [`join_all`](Self::join_all) collected before it was dropped; the next one
    /// returns them first.
    joined: Vec<Result<T, JoinError>>,
    detached: bool,
}

impl<T: Send + 'static> Default for TaskGroup<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Send + 'static> TaskGroup<T> {
    /// An empty group with a fresh token.
    pub fn new() -> Self {
        Self::with_token(CancellationToken::new())
    }

    /// An empty group whose token is `token` (e.g. a child of a wider scope's token).
    pub fn with_token(token: CancellationToken) -> Self {
        Self {
            token,
            handles: VecDeque::new(),
            joined: Vec::new(),
            detached: false,
        }
    }

    /// The token [`cancel`](Self::cancel) cancels: give clones to the group's tasks.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// Spawns a stealable task into the group on the current runtime.
    ///
    /// # Panics
    /// Outside a ringsteal runtime.
    pub fn spawn<F>(&mut self, future: F)
    where
        F: Future<Output = T> + Send + 'static,
    {
        self.spawn_with(Placement::Stealable, future);
    }

    /// Spawns with a placement into the group on the current runtime.
    ///
    /// # Panics
    /// Outside a ringsteal runtime, or if the placement names a shard that does not exist.
    pub fn spawn_with<F>(&mut self, placement: Placement, future: F)
    where
        F: Future<Output = T> + Send + 'static,
    {
        self.handles
            .push_back(RuntimeHandle::current().spawn_with(placement, future));
    }

    /// Spawns with a placement, reporting a bad shard or a missing runtime as an error.
    pub fn try_spawn_with<F>(&mut self, placement: Placement, future: F) -> Result<(), SpawnError>
    where
        F: Future<Output = T> + Send + 'static,
    {
        let handle = RuntimeHandle::try_current().ok_or(SpawnError::NotOnShard)?;
        self.handles
            .push_back(handle.try_spawn_with(placement, future)?);
        Ok(())
    }

    /// Adds an already spawned task to the group.
    pub fn insert(&mut self, handle: JoinHandle<T>) {
        self.handles.push_back(handle);
    }

    /// Cancels the group's token: tasks that watch it stop at their own pace.
    pub fn cancel(&self) {
        self.token.cancel();
    }

    /// Aborts every task still in the group (each ends at its next `.await`).
    pub fn abort_all(&self) {
        self.handles.iter().for_each(JoinHandle::abort);
    }

    /// Number of tasks in the group whose results [`join_all`](Self::join_all) has not
    /// returned yet (finished or not).
    pub fn len(&self) -> usize {
        self.handles.len() + self.joined.len()
    }

    /// True if the group holds no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits for every task and returns their results in spawn order; the group is empty
    /// afterwards.
    ///
    /// Cancel-safe: if this future is dropped before it completes (say, by a
    /// [`timeout`](crate::time::timeout)), every task it had not joined stays in the group,
    /// where [`abort_all`](Self::abort_all) and the group's drop still reach it, and the
    /// results it had collected are returned by the next `join_all`.
    pub async fn join_all(&mut self) -> Vec<Result<T, JoinError>> {
        while let Some(handle) = self.handles.front_mut() {
            let result = handle.await;
            self.handles.pop_front();
            self.joined.push(result);
        }
        std::mem::take(&mut self.joined)
    }

    /// Lets the tasks run on after the group is dropped.
    pub fn detach(mut self) {
        self.detached = true;
    }
}

impl<T> Drop for TaskGroup<T> {
    fn drop(&mut self) {
        if !self.detached {
            self.handles.iter().for_each(JoinHandle::abort);
        }
    }
}

impl<T> std::fmt::Debug for TaskGroup<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskGroup")
            .field("len", &(self.handles.len() + self.joined.len()))
            .field("detached", &self.detached)
            .finish()
    }
}
