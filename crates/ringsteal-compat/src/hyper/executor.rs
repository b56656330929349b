//! [`Executor`] and [`LocalExecutor`]: `hyper::rt::Executor` over ringsteal's spawn.
//!
//! May not: keep tasks (hyper detaches them; their handles are dropped).

use std::future::Future;

use ringsteal_rt::{Placement, RuntimeHandle};

/// Spawns hyper's tasks on ringsteal: HTTP/2 streams, connection drivers, hyper-util's
/// client pool. Futures must be `Send` (hyper-util's client and `auto` server ask for
/// that); by default they are [`Placement::Stealable`], spawned on the runtime of the
/// thread that calls (hyper calls from the connection's task).
///
/// ```
/// use hyper::rt::Executor as _;
/// use ringsteal_compat::hyper::Executor;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
/// let (tx, rx) = std::sync::mpsc::channel();
/// // A handle makes it usable from threads outside the runtime too.
/// let exec = Executor::with_handle(rt.handle());
/// exec.execute(async move { tx.send(ringsteal_rt::current_shard()).unwrap() });
/// assert!(rx.recv().unwrap().is_some(), "ran on a shard");
/// ```
#[derive(Clone, Debug)]
pub struct Executor {
    handle: Option<RuntimeHandle>,
    placement: Placement,
}

impl Executor {
    /// Spawns on the current thread's runtime, stealable.
    ///
    /// # Panics
    /// `execute` panics if it is called outside a ringsteal runtime; use
    /// [`with_handle`](Self::with_handle) for that.
    pub fn new() -> Self {
        Self {
            handle: None,
            placement: Placement::Stealable,
        }
    }

    /// Spawns on the runtime of `handle`, from any thread.
    pub fn with_handle(handle: RuntimeHandle) -> Self {
        Self {
            handle: Some(handle),
            placement: Placement::Stealable,
        }
    }

    /// Spawns with `placement` instead: [`Placement::Pinned`]`(s)` for a client whose
    /// requests are all made from tasks on shard `s` (one client per shard keeps each
    /// request and its connection's driver on one shard; a client shared across shards
    /// sends responses through another shard's driver), or [`Placement::RoundRobin`] to
    /// spread the drivers of one client's connections (which evens out the drivers, not who
    /// uses them).
    ///
    /// # Panics
    /// `execute` panics (inside hyper's call) if `placement` pins to a shard the runtime does
    /// not have, as `spawn_with` does: a task hyper hands over cannot be refused quietly, or
    /// the connection it drives would hang. Check `Pinned(n)` against
    /// [`RuntimeHandle::shards`] first.
    pub fn placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self
    }
}

impl Default for Executor {
    fn default() -> Self {
        Self::new()
    }
}

impl<F> hyper::rt::Executor<F> for Executor
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, fut: F) {
        match &self.handle {
            Some(handle) => drop(handle.spawn_with(self.placement, fut)),
            None => drop(ringsteal_rt::spawn_with(self.placement, fut)),
        }
    }
}

/// Spawns hyper's tasks on the current shard with no `Send` bound
/// ([`spawn_local`](ringsteal_rt::spawn_local)): for services that hold `Rc`s or
/// `RefCell`s, served with hyper's `server::conn` builders.
///
/// ```
/// use hyper::rt::Executor as _;
/// use ringsteal_compat::hyper::LocalExecutor;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let shared = std::rc::Rc::new(std::cell::Cell::new(0)); // not Send
///     let (tx, rx) = futures::channel::oneshot::channel();
///     let s = shared.clone();
///     LocalExecutor::new().execute(async move {
///         s.set(7);
///         tx.send(()).unwrap();
///     });
///     rx.await.unwrap();
///     assert_eq!(shared.get(), 7);
/// });
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalExecutor {
    _priv: (),
}

impl LocalExecutor {
    /// Spawns on the shard that calls `execute`.
    ///
    /// # Panics
    /// `execute` panics outside a ringsteal shard.
    pub fn new() -> Self {
        Self { _priv: () }
    }
}

impl<F> hyper::rt::Executor<F> for LocalExecutor
where
    F: Future + 'static,
{
    fn execute(&self, fut: F) {
        drop(ringsteal_rt::spawn_local(async move {
            fut.await;
        }));
    }
}
