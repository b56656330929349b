//! [`TaskGroup`]: a set of tasks spawned together, cancelled together, joined together.

use std::collections::{BTreeMap, VecDeque};
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use super::group_finished::{announcing, announcing_fn, Finished};
use crate::error::SpawnError;
use crate::placement::Placement;
use crate::runtime::RuntimeHandle;
use crate::sync::CancellationToken;
use crate::task::{AbortHandle, Id, JoinError, JoinHandle};

/// Tasks with one lifetime: spawn them with any placement, stop them cooperatively through
/// the group's [`token`](Self::token) or forcibly with [`abort_all`](Self::abort_all), and
/// collect the results as tasks finish with [`join_next`](Self::join_next) (like tokio's
/// `JoinSet`) or all at once, in spawn order, with [`join_all`](Self::join_all). Dropping the
/// group aborts what it still holds, unless it was [`detach`](Self::detach)ed.
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
    /// Tasks not yet joined, by the group's own number (not the task [`Id`]), which grows
    /// in spawn order.
    handles: BTreeMap<u64, JoinHandle<T>>,
    next_id: u64,
    /// Where the group's own tasks announce that they finished.
    finished: Arc<Finished>,
    /// Announced ids whose handle was still pending when last polled.
    announced: VecDeque<u64>,
    /// Ids of handles added with [`insert`](Self::insert): they cannot announce, so
    /// `join_next` polls them every time.
    inserted: VecDeque<u64>,
    /// Results a [`join_all`](Self::join_all) collected before it was dropped, in spawn
    /// order; returned first by the next join.
    joined: VecDeque<Result<(Id, T), JoinError>>,
    detached: bool,
}

impl<T: 'static> Default for TaskGroup<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: 'static> TaskGroup<T> {
    /// An empty group with a fresh token.
    pub fn new() -> Self {
        Self::with_token(CancellationToken::new())
    }

    /// An empty group whose token is `token` (e.g. a child of a wider scope's token).
    pub fn with_token(token: CancellationToken) -> Self {
        Self {
            token,
            handles: BTreeMap::new(),
            next_id: 0,
            finished: Arc::default(),
            announced: VecDeque::new(),
            inserted: VecDeque::new(),
            joined: VecDeque::new(),
            detached: false,
        }
    }

    /// The token [`cancel`](Self::cancel) cancels: give clones to the group's tasks.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// Spawns into the group on the current runtime, with default placement (see
    /// [`crate::spawn`]). Returns a handle that aborts the task, as tokio's
    /// `JoinSet::spawn` does.
    ///
    /// # Panics
    /// Outside a ringsteal runtime.
    pub fn spawn<F>(&mut self, future: F) -> AbortHandle
    where
        T: Send,
        F: Future<Output = T> + Send + 'static,
    {
        let runtime = RuntimeHandle::current();
        let placement = runtime.default_placement();
        let (id, future) = self.announced_future(future);
        self.keep(id, runtime.spawn_with(placement, future))
    }

    /// Spawns with a placement into the group on the current runtime.
    ///
    /// # Panics
    /// Outside a ringsteal runtime, or if the placement names a shard that does not exist.
    pub fn spawn_with<F>(&mut self, placement: Placement, future: F) -> AbortHandle
    where
        T: Send,
        F: Future<Output = T> + Send + 'static,
    {
        let (id, future) = self.announced_future(future);
        let handle = RuntimeHandle::current().spawn_with(placement, future);
        self.keep(id, handle)
    }

    /// Spawns a `!Send` future into the group, on the current shard, as tokio's
    /// `JoinSet::spawn_local` (see [`crate::spawn_local`]).
    ///
    /// ```
    /// use std::rc::Rc;
    /// use ringsteal_rt::task::TaskGroup;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let mut group = TaskGroup::new();
    ///     let shared = Rc::new(20);
    ///     let s = shared.clone();
    ///     group.spawn_local(async move { *s + 1 });
    ///     group.spawn_blocking(|| 21);
    ///     let mut sum = 0;
    ///     while let Some(res) = group.join_next().await {
    ///         sum += res.unwrap();
    ///     }
    ///     assert_eq!(sum, 42);
    ///
    ///     // Outputs may be `!Send` too, as with tokio's `JoinSet::spawn_local`.
    ///     let mut local = TaskGroup::new();
    ///     local.spawn_local(async { Rc::new(1) });
    ///     assert_eq!(*local.join_next().await.unwrap().unwrap(), 1);
    /// });
    /// ```
    ///
    /// # Panics
    /// Off a shard (outside a task or `block_on`).
    pub fn spawn_local<F>(&mut self, future: F) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        let id = self.next_id;
        self.next_id += 1;
        let future = announcing(future, id, self.finished.clone());
        self.keep(id, crate::spawn_local(future))
    }

    /// Runs a blocking closure on the runtime's blocking pool as one of the group's tasks,
    /// as tokio's `JoinSet::spawn_blocking` (see [`crate::spawn_blocking`]). Aborting it
    /// keeps it from starting; once it runs, it runs to the end.
    ///
    /// # Panics
    /// Outside a ringsteal runtime.
    pub fn spawn_blocking<F>(&mut self, f: F) -> AbortHandle
    where
        T: Send,
        F: FnOnce() -> T + Send + 'static,
    {
        let id = self.next_id;
        self.next_id += 1;
        let f = announcing_fn(f, id, self.finished.clone());
        self.keep(id, RuntimeHandle::current().spawn_blocking(f))
    }

    /// Keeps `handle` under the group's `id` and returns an abort handle for it.
    fn keep(&mut self, id: u64, handle: JoinHandle<T>) -> AbortHandle {
        let abort = handle.abort_handle();
        self.handles.insert(id, handle);
        abort
    }

    /// The next id, and `future` wrapped to announce it when it finishes.
    fn announced_future<F>(&mut self, future: F) -> (u64, impl Future<Output = T> + Send)
    where
        T: Send,
        F: Future<Output = T> + Send + 'static,
    {
        let id = self.next_id;
        self.next_id += 1;
        (id, announcing(future, id, self.finished.clone()))
    }

    /// Spawns with a placement, reporting a bad shard or a missing runtime as an error.
    pub fn try_spawn_with<F>(
        &mut self,
        placement: Placement,
        future: F,
    ) -> Result<AbortHandle, SpawnError>
    where
        T: Send,
        F: Future<Output = T> + Send + 'static,
    {
        let runtime = RuntimeHandle::try_current().ok_or(SpawnError::NotOnShard)?;
        let (id, future) = self.announced_future(future);
        let handle = runtime.try_spawn_with(placement, future)?;
        Ok(self.keep(id, handle))
    }

    /// Adds an already spawned task to the group. (Such a task cannot tell the group when it
    /// finishes, so each [`join_next`](Self::join_next) polls its handle; prefer spawning
    /// through the group.)
    pub fn insert(&mut self, handle: JoinHandle<T>) {
        let id = self.next_id;
        self.next_id += 1;
        self.handles.insert(id, handle);
        self.inserted.push_back(id);
    }

    /// Cancels the group's token: tasks that watch it stop at their own pace.
    pub fn cancel(&self) {
        self.token.cancel();
    }

    /// Aborts every task still in the group (each ends at its next `.await`).
    pub fn abort_all(&self) {
        self.handles.values().for_each(JoinHandle::abort);
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
        while let Some(mut first) = self.handles.first_entry() {
            let id = first.get().id();
            let result = first.get_mut().await;
            first.remove();
            self.joined.push_back(result.map(|out| (id, out)));
        }
        self.finished.clear();
        self.announced.clear();
        self.inserted.clear();
        self.joined
            .drain(..)
            .map(|result| result.map(|(_, out)| out))
            .collect()
    }

    /// Waits for the next task to finish and returns its result (in the order tasks finish);
    /// `None` once the group is empty. Cancel-safe: dropped before it completes, it loses no
    /// result and leaves every task in the group.
    ///
    /// ```
    /// use ringsteal_rt::task::TaskGroup;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
    /// rt.block_on(async {
    ///     let mut group = TaskGroup::new();
    ///     for i in 0..10u64 {
    ///         group.spawn(async move { i * i });
    ///     }
    ///     let mut sum = 0;
    ///     while let Some(result) = group.join_next().await {
    ///         sum += result.unwrap();
    ///     }
    ///     assert_eq!(sum, 285);
    ///     assert!(group.is_empty());
    /// });
    /// ```
    pub async fn join_next(&mut self) -> Option<Result<T, JoinError>> {
        poll_fn(|cx| self.poll_join_next(cx)).await
    }

    /// [`join_next`](Self::join_next), with the finished task's [`Id`] beside its output (a
    /// failed task's id is in its [`JoinError`]), as tokio's `JoinSet::join_next_with_id`.
    ///
    /// ```
    /// use ringsteal_rt::task::TaskGroup;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let mut group = TaskGroup::new();
    ///     let id = group.spawn(async { 5 }).id();
    ///     assert_eq!(group.join_next_with_id().await.unwrap().unwrap(), (id, 5));
    /// });
    /// ```
    pub async fn join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        poll_fn(|cx| self.poll_join_next_with_id(cx)).await
    }

    /// The result of a task that has finished, without waiting: `None` if none has (or the
    /// group is empty), as tokio's `JoinSet::try_join_next`.
    ///
    /// ```
    /// use ringsteal_rt::task::TaskGroup;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let mut group = TaskGroup::new();
    ///     group.spawn(async { 7 });
    ///     assert!(group.try_join_next().is_none(), "it has not run yet");
    ///     ringsteal_rt::yield_now().await;
    ///     assert_eq!(group.try_join_next().unwrap().unwrap(), 7);
    /// });
    /// ```
    pub fn try_join_next(&mut self) -> Option<Result<T, JoinError>> {
        without_id(self.try_join_next_with_id())
    }

    /// [`try_join_next`](Self::try_join_next), with the task's [`Id`] beside its output.
    pub fn try_join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        let waker = Waker::from(Arc::new(NoWake));
        match self.poll_join_next_with_id(&mut Context::from_waker(&waker)) {
            Poll::Ready(result) => result,
            Poll::Pending => None,
        }
    }

    /// Aborts every task and waits until all have ended, as tokio's `JoinSet::shutdown`;
    /// the group is empty afterwards. Results are dropped, those of tasks that had finished
    /// included.
    pub async fn shutdown(&mut self) {
        self.abort_all();
        drop(self.join_all().await);
    }

    /// Polls for the next finished task: [`join_next`](Self::join_next) without the future.
    pub fn poll_join_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, JoinError>>> {
        self.poll_join_next_with_id(cx).map(without_id)
    }

    /// Polls for the next finished task, with its [`Id`]:
    /// [`join_next_with_id`](Self::join_next_with_id) without the future.
    pub fn poll_join_next_with_id(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<(Id, T), JoinError>>> {
        if let Some(result) = self.joined.pop_front() {
            return Poll::Ready(Some(result));
        }
        if self.handles.is_empty() {
            return Poll::Ready(None);
        }
        // Register before taking, so an announcement made in between still wakes us.
        self.finished.register(cx.waker());
        self.finished.take(&mut self.announced);
        if let Some(result) = Self::first_ready(&mut self.handles, &mut self.announced, cx) {
            return Poll::Ready(Some(result));
        }
        match Self::first_ready(&mut self.handles, &mut self.inserted, cx) {
            Some(result) => Poll::Ready(Some(result)),
            None => Poll::Pending,
        }
    }

    /// Polls the handles named in `ids`, oldest first (dropping ids already joined), and
    /// takes the first finished one out of the group, keeping the others in their order, so
    /// that results come out in the order their tasks announced they finished. A pending
    /// handle keeps `cx`'s waker, which wakes us when its task stores its output. (The
    /// first id is nearly always the one taken: its task announced itself as it finished.)
    fn first_ready(
        handles: &mut BTreeMap<u64, JoinHandle<T>>,
        ids: &mut VecDeque<u64>,
        cx: &mut Context<'_>,
    ) -> Option<Result<(Id, T), JoinError>> {
        let mut i = 0;
        while i < ids.len() {
            let Some(handle) = handles.get_mut(&ids[i]) else {
                ids.remove(i);
                continue;
            };
            let task = handle.id();
            if let Poll::Ready(result) = Pin::new(handle).poll(cx) {
                let id = ids.remove(i).expect("in range");
                handles.remove(&id);
                return Some(result.map(|out| (task, out)));
            }
            i += 1;
        }
        None
    }

    /// Takes every task out of the group without aborting it, as tokio's
    /// `JoinSet::detach_all`: they run on, nobody joins them, and the group is empty (a
    /// result that was waiting to be joined goes too). They still see the group's
    /// [`token`](Self::token), if they were given it.
    ///
    /// ```
    /// use ringsteal_rt::task::TaskGroup;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let (tx, rx) = std::sync::mpsc::channel();
    ///     let mut group = TaskGroup::new();
    ///     group.spawn(async move { tx.send("still ran").unwrap() });
    ///     group.detach_all();
    ///     assert!(group.is_empty() && group.join_next().await.is_none());
    ///     drop(group); // no abort: the task is no longer the group's
    ///     ringsteal_rt::yield_now().await;
    ///     assert_eq!(rx.recv().unwrap(), "still ran");
    /// });
    /// ```
    pub fn detach_all(&mut self) {
        // Dropping a handle detaches its task. Announcements still on their way name ids
        // no longer held, which `first_ready` drops.
        self.handles.clear();
        self.announced.clear();
        self.inserted.clear();
        self.joined.clear();
    }

    /// Lets the tasks run on after the group is dropped.
    pub fn detach(mut self) {
        self.detached = true;
    }
}

impl<T> Drop for TaskGroup<T> {
    fn drop(&mut self) {
        if !self.detached {
            self.handles.values().for_each(JoinHandle::abort);
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

/// A joined result without its task's id.
fn without_id<T>(joined: Option<Result<(Id, T), JoinError>>) -> Option<Result<T, JoinError>> {
    joined.map(|result| result.map(|(_, out)| out))
}

/// The waker of [`TaskGroup::try_join_next`]'s single poll: nothing waits on it.
struct NoWake;

impl Wake for NoWake {
    fn wake(self: Arc<Self>) {}
}
