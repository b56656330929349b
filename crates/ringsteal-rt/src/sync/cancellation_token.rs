//! [`CancellationToken`]: a cancellation signal shared by a tree of tokens.
//!
//! Owns: the handles to the tree of `cancellation_tree.rs` and the futures that wait on it.
//! Cancelling a token cancels its whole subtree, never its ancestors; a token's node leaves
//! the tree when its last clone is dropped, its children moving up to its parent.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::cancellation_tree::{self as tree, Node};

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
///
/// A token whose clones are all dropped takes no room of its own: its children move up to
/// its parent. So re-deriving a token from the last one, as a reconnect loop might, keeps
/// memory flat:
///
/// ```
/// use ringsteal_rt::sync::CancellationToken;
///
/// let root = CancellationToken::new();
/// let mut current = root.child_token();
/// for _ in 0..100_000 {
///     current = current.child_token(); // the previous token's node is freed here
/// }
/// root.cancel();
/// assert!(current.is_cancelled());
/// ```
pub struct CancellationToken {
    node: Arc<Node>,
}

impl Clone for CancellationToken {
    fn clone(&self) -> Self {
        self.node.add_handle();
        Self {
            node: self.node.clone(),
        }
    }
}

impl Drop for CancellationToken {
    fn drop(&mut self) {
        self.node.drop_handle();
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
        Self { node: Node::root() }
    }

    /// A token cancelled when this one is (or on its own); cancelling it does not cancel this
    /// one. A child of a cancelled token starts cancelled.
    pub fn child_token(&self) -> CancellationToken {
        CancellationToken {
            node: Node::child_of(&self.node),
        }
    }

    /// Cancels this token and every token below it; wakes every task waiting in
    /// [`cancelled`](Self::cancelled). Idempotent.
    pub fn cancel(&self) {
        tree::cancel(&self.node);
    }

    /// True once cancelled (directly or through an ancestor).
    pub fn is_cancelled(&self) -> bool {
        self.node.is_cancelled()
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
        if self.is_cancelled() || !self.node.wait(slot, cx.waker()) {
            return Poll::Ready(());
        }
        Poll::Pending
    }

    fn forget_waiter(&self, slot: Option<usize>) {
        if let Some(i) = slot {
            self.node.forget_waiter(i);
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
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Wake, Waker};

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
        let (children, waiters) = root.node.slots();
        assert!(children <= 1 && waiters <= 1);
    }

    #[test]
    fn a_chain_of_rederived_tokens_keeps_one_node_per_live_token() {
        let root = CancellationToken::new();
        let mut current = root.child_token();
        let first = Arc::downgrade(&current.node);
        for _ in 0..1000 {
            current = current.child_token();
        }
        assert!(
            first.upgrade().is_none(),
            "the first token's node was freed"
        );
        assert_eq!(
            root.node.counts().0,
            1,
            "the root's one child is the live token"
        );
        assert_eq!(
            Arc::strong_count(&root.node),
            2,
            "root and its one child hold it"
        );
        root.cancel();
        assert!(current.is_cancelled());
    }

    #[test]
    fn a_token_dropped_hands_its_children_to_its_parent() {
        let root = CancellationToken::new();
        let middle = root.child_token();
        let (left, right) = (middle.child_token(), middle.child_token());
        let kept = middle.clone();
        drop(middle);
        assert_eq!(
            root.node.counts().0,
            1,
            "a clone keeps the node in the tree"
        );
        let weak = Arc::downgrade(&kept.node);
        drop(kept);
        assert!(weak.upgrade().is_none());
        assert_eq!(
            root.node.counts().0,
            2,
            "both children now hang off the root"
        );
        root.cancel();
        assert!(left.is_cancelled() && right.is_cancelled());
    }

    #[test]
    fn a_dropped_root_leaves_its_children_as_roots() {
        let top = CancellationToken::new();
        let child = top.child_token();
        let grandchild = child.child_token();
        let weak = Arc::downgrade(&top.node);
        drop(top);
        assert!(weak.upgrade().is_none());
        assert!(!child.is_cancelled());
        child.cancel();
        assert!(grandchild.is_cancelled());
    }

    #[test]
    fn a_cancelled_token_dropped_keeps_its_children_cancelled() {
        let root = CancellationToken::new();
        let middle = root.child_token();
        let leaf = middle.child_token();
        middle.cancel();
        drop(middle);
        assert!(leaf.is_cancelled() && !root.is_cancelled());
        assert!(leaf.child_token().is_cancelled());
    }

    /// Threads re-derive chains and drop tokens while another cancels the root: every token
    /// still alive afterwards is cancelled, and nothing deadlocks.
    #[test]
    fn tokens_dropped_on_many_threads_while_the_root_is_cancelled_all_end_cancelled() {
        let rounds = if cfg!(miri) { 3 } else { 200 };
        for _ in 0..rounds {
            let root = CancellationToken::new();
            let workers: Vec<_> = (0..3)
                .map(|_| {
                    let start = root.child_token();
                    std::thread::spawn(move || {
                        let mut kept = Vec::new();
                        let mut current = start;
                        for i in 0..20 {
                            let next = current.child_token();
                            if i % 3 == 0 {
                                kept.push(current);
                            }
                            current = next;
                        }
                        kept.push(current);
                        kept
                    })
                })
                .collect();
            root.cancel();
            for worker in workers {
                for token in worker.join().unwrap() {
                    assert!(token.is_cancelled());
                }
            }
        }
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
