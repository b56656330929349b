//! [`CancellationToken`]: a cancellation signal shared by a tree of tokens.
//!
//! Owns: the tree (each node holds its parent strongly and its children weakly, so a dropped
//! child leaves its parent's list) and the wakers of tasks waiting in
//! [`cancelled`](CancellationToken::cancelled). Cancelling a node cancels its whole subtree,
//! never its ancestors. Locks are taken one node at a time (a parent never holds its lock
//! while cancelling a child), so cancellation cannot deadlock.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Waker};

use parking_lot::Mutex;

/// A token that can be cancelled once; clones share it, children follow it.
///
/// ```
/// use ringsteal_rt::sync::CancellationToken;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
/// rt.block_on(async {
///     let root = CancellationToken::new();
///     let child = root.child_token();
///     let worker = ringsteal_rt::spawn(async move {
///         child.cancelled().await;
///         "stopped"
///     });
///     root.cancel();
///     assert_eq!(worker.await.unwrap(), "stopped");
///     assert!(root.is_cancelled());
/// });
/// ```
#[derive(Clone)]
pub struct CancellationToken {
    node: Arc<Node>,
}

struct Node {
    cancelled: AtomicBool,
    parent: Option<(Arc<Node>, usize)>,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    children: Slots<Weak<Node>>,
    waiters: Slots<Waker>,
}

/// A vector of optional slots with a free list: O(1) insert and remove by index.
struct Slots<T> {
    items: Vec<Option<T>>,
    free: Vec<usize>,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slots<T> {
    fn insert(&mut self, item: T) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.items[i] = Some(item);
                i
            }
            None => {
                self.items.push(Some(item));
                self.items.len() - 1
            }
        }
    }

    fn remove(&mut self, i: usize) -> Option<T> {
        let item = self.items.get_mut(i)?.take();
        if item.is_some() {
            self.free.push(i);
        }
        item
    }

    fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.items.get_mut(i)?.as_mut()
    }

    fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.free.clear();
        self.items.drain(..).flatten()
    }
}

impl Default for CancellationToken {
    fn default() -> Self {
        Self::new()
    }
}

impl CancellationToken {
    /// A new, uncancelled root token.
    pub fn new() -> Self {
        Self {
            node: Arc::new(Node {
                cancelled: AtomicBool::new(false),
                parent: None,
                inner: Mutex::default(),
            }),
        }
    }

    /// A token cancelled when this one is (or on its own); cancelling it does not cancel this
    /// one. A child of a cancelled token starts cancelled.
    pub fn child_token(&self) -> CancellationToken {
        let mut inner = self.node.inner.lock();
        if self.is_cancelled() {
            drop(inner);
            let child = CancellationToken::new();
            child.cancel();
            return child;
        }
        let child = Arc::new_cyclic(|weak: &Weak<Node>| {
            let index = inner.children.insert(weak.clone());
            Node {
                cancelled: AtomicBool::new(false),
                parent: Some((self.node.clone(), index)),
                inner: Mutex::default(),
            }
        });
        CancellationToken { node: child }
    }

    /// Cancels this token and every token below it; wakes every task waiting in
    /// [`cancelled`](Self::cancelled). Idempotent.
    pub fn cancel(&self) {
        cancel_node(&self.node);
    }

    /// True once cancelled (directly or through an ancestor).
    pub fn is_cancelled(&self) -> bool {
        self.node.cancelled.load(Ordering::Acquire)
    }

    /// Completes when the token is cancelled.
    pub fn cancelled(&self) -> WaitForCancellation<'_> {
        WaitForCancellation {
            token: self,
            slot: None,
        }
    }

    /// Like [`cancelled`](Self::cancelled), owning a clone of the token (`'static`).
    pub fn cancelled_owned(self) -> WaitForCancellationOwned {
        WaitForCancellationOwned {
            token: self,
            slot: None,
        }
    }

    /// A guard that cancels the token when dropped (unless [`DropGuard::disarm`]ed).
    pub fn drop_guard(self) -> DropGuard {
        DropGuard { token: Some(self) }
    }

    /// Runs `fut` until it completes (`Some(output)`) or the token is cancelled (`None`).
    ///
    /// Biased towards cancellation, where tokio-util's is biased towards the future: if the
    /// token is cancelled by the time of a poll, the result is `None` even when `fut` would
    /// have been ready then (its output, a message taken from a channel, say, is dropped
    /// with it), so a loop over an always-ready future ends at `cancel`. A port that must not
    /// lose such an output checks `is_cancelled()` itself and polls the future first.
    pub async fn run_until_cancelled<F: Future>(&self, fut: F) -> Option<F::Output> {
        let mut fut = std::pin::pin!(fut);
        let mut cancelled = std::pin::pin!(self.cancelled());
        std::future::poll_fn(|cx| {
            // Cancellation first: a future that is always ready (a busy channel) must not
            // keep the loop around it running after `cancel`.
            if cancelled.as_mut().poll(cx).is_ready() {
                return Poll::Ready(None);
            }
            fut.as_mut().poll(cx).map(Some)
        })
        .await
    }

    /// Polls for cancellation, keeping the waiter slot in `slot`.
    fn poll_cancelled(&self, slot: &mut Option<usize>, cx: &mut Context<'_>) -> Poll<()> {
        if self.is_cancelled() {
            return Poll::Ready(());
        }
        let mut inner = self.node.inner.lock();
        // Re-check under the lock: cancel sets the flag before it takes the waiters.
        if self.is_cancelled() {
            return Poll::Ready(());
        }
        match slot.and_then(|i| inner.waiters.get_mut(i)) {
            Some(w) if w.will_wake(cx.waker()) => {}
            Some(w) => *w = cx.waker().clone(),
            None => *slot = Some(inner.waiters.insert(cx.waker().clone())),
        }
        Poll::Pending
    }

    fn forget_waiter(&self, slot: Option<usize>) {
        if let Some(i) = slot {
            self.node.inner.lock().waiters.remove(i);
        }
    }
}

/// Cancels `node` and its subtree, depth first with an explicit stack (a chain of tokens can
/// be arbitrarily deep). A node is marked before its children, so for an instant another
/// thread may see a token cancelled and its child not yet.
fn cancel_node(node: &Arc<Node>) {
    let mut pending = vec![node.clone()];
    while let Some(node) = pending.pop() {
        if node.cancelled.swap(true, Ordering::AcqRel) {
            continue;
        }
        let waiters: Vec<Waker> = {
            let mut inner = node.inner.lock();
            pending.extend(inner.children.drain().filter_map(|w| w.upgrade()));
            inner.waiters.drain().collect()
        };
        waiters.into_iter().for_each(Waker::wake);
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        // Leave the parent's list; if this node held the parent's last reference, free the
        // parent here too, and so on up: a recursive drop of a long chain would overflow
        // the stack.
        let mut link = self.parent.take();
        while let Some((parent, index)) = link {
            parent.inner.lock().children.remove(index);
            link = Arc::into_inner(parent).and_then(|mut node| node.parent.take());
        }
    }
}

impl std::fmt::Debug for CancellationToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancellationToken")
            .field("is_cancelled", &self.is_cancelled())
            .finish()
    }
}

/// The future of [`CancellationToken::cancelled`]: completes when the token (or an ancestor)
/// is cancelled, at once if it already is. Dropped before that, it unregisters its waker.
///
/// ```
/// use ringsteal_rt::sync::CancellationToken;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
/// rt.block_on(async {
///     let token = CancellationToken::new();
///     let child = token.child_token();
///     let worker = ringsteal_rt::spawn(async move {
///         child.cancelled().await;
///         "stopped"
///     });
///     token.cancel();
///     assert_eq!(worker.await.unwrap(), "stopped");
/// });
/// ```
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct WaitForCancellation<'a> {
    token: &'a CancellationToken,
    slot: Option<usize>,
}

impl Future for WaitForCancellation<'_> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        this.token.poll_cancelled(&mut this.slot, cx)
    }
}

impl Drop for WaitForCancellation<'_> {
    fn drop(&mut self) {
        self.token.forget_waiter(self.slot.take());
    }
}

/// The future of [`CancellationToken::cancelled_owned`]: as [`WaitForCancellation`], but it
/// owns its token, so it is `'static` and can be stored or moved into a task.
///
/// ```
/// use ringsteal_rt::sync::CancellationToken;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let token = CancellationToken::new();
///     let stop = token.clone().cancelled_owned(); // borrows nothing
///     let waiter = ringsteal_rt::spawn(stop);
///     token.cancel();
///     waiter.await.unwrap();
/// });
/// ```
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct WaitForCancellationOwned {
    token: CancellationToken,
    slot: Option<usize>,
}

impl Future for WaitForCancellationOwned {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        this.token.poll_cancelled(&mut this.slot, cx)
    }
}

impl Drop for WaitForCancellationOwned {
    fn drop(&mut self) {
        self.token.forget_waiter(self.slot.take());
    }
}

/// Cancels its token when dropped. From [`CancellationToken::drop_guard`]: tie the tasks a
/// scope started to the scope, so that leaving it (by return, `?` or panic) stops them.
///
/// ```
/// use ringsteal_rt::sync::CancellationToken;
///
/// let token = CancellationToken::new();
/// {
///     let _guard = token.clone().drop_guard();
///     assert!(!token.is_cancelled());
/// } // dropped: cancelled
/// assert!(token.is_cancelled());
///
/// let kept = CancellationToken::new();
/// let still = kept.clone().drop_guard().disarm(); // disarmed: no cancel
/// assert!(!still.is_cancelled() && !kept.is_cancelled());
/// ```
#[derive(Debug)]
pub struct DropGuard {
    token: Option<CancellationToken>,
}

impl DropGuard {
    /// Gives the token back without cancelling it.
    pub fn disarm(mut self) -> CancellationToken {
        self.token
            .take()
            .expect("a DropGuard holds its token until disarmed or dropped")
    }
}

impl Drop for DropGuard {
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            token.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn poll<F: Future + Unpin>(f: &mut F, w: &Arc<Count>) -> Poll<F::Output> {
        let waker = Waker::from(w.clone());
        Pin::new(f).poll(&mut Context::from_waker(&waker))
    }

    #[test]
    fn cancelling_a_parent_cancels_every_descendant_but_not_the_reverse() {
        let root = CancellationToken::new();
        let a = root.child_token();
        let b = a.child_token();
        let c = root.child_token();
        b.cancel();
        assert!(b.is_cancelled() && !a.is_cancelled() && !root.is_cancelled());
        root.cancel();
        assert!(a.is_cancelled() && c.is_cancelled());
        assert!(
            root.child_token().is_cancelled(),
            "a child of a cancelled token starts cancelled"
        );
    }

    #[test]
    fn waiters_are_woken_once_and_ready_after_cancel() {
        let token = CancellationToken::new();
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let mut wait = token.cancelled();
        assert!(poll(&mut wait, &count).is_pending());
        assert!(poll(&mut wait, &count).is_pending());
        token.cancel();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert!(poll(&mut wait, &count).is_ready());
    }

    #[test]
    fn dropped_children_and_waiters_leave_no_entries_behind() {
        let root = CancellationToken::new();
        for _ in 0..1000 {
            let child = root.child_token();
            let count = Arc::new(Count(AtomicUsize::new(0)));
            let mut w = root.cancelled();
            assert!(poll(&mut w, &count).is_pending());
            drop(w);
            drop(child);
        }
        let inner = root.node.inner.lock();
        assert!(inner.children.items.len() <= 1 && inner.waiters.items.len() <= 1);
    }

    #[test]
    fn a_drop_guard_cancels_unless_disarmed() {
        let t = CancellationToken::new();
        drop(t.clone().drop_guard());
        assert!(t.is_cancelled());
        let u = CancellationToken::new();
        let back = u.clone().drop_guard().disarm();
        drop(back);
        assert!(!u.is_cancelled());
    }
}
