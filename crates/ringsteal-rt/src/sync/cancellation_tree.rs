//! The tree behind [`CancellationToken`](super::CancellationToken): nodes, their links, and
//! the three things that change it: adding a child, cancelling a subtree, and a node leaving
//! when its last token is dropped.
//!
//! Owns: each node's flag, its count of token handles, its parent link and its children
//! (held weakly, so a freed child leaves its parent's list) and the wakers waiting on it.
//!
//! The rules:
//! - **A node without handles leaves the tree.** When its last token goes, its children are
//!   moved to its parent (or become roots), so `t = t.child_token()` in a loop keeps one node
//!   per live token instead of a chain of every node ever made. Nothing can cancel a node
//!   with no handles except an ancestor, and moving its children to that ancestor's list keeps
//!   them in reach of exactly the same cancels.
//! - **Locks are taken ancestor first**: a parent, then the node, then each child in turn.
//!   A node's ancestors only ever shrink (a move hands a child to its grandparent), so two
//!   threads never wait for each other's locks in opposite orders.
//! - **Cancelling marks before it locks** (the flag, then the node's lock to take its
//!   children and waiters). A move looks at the parent's flag under the parent's lock: if it
//!   is set, a cancel is under way above, and the children stay where that cancel will find
//!   them.
//! - **No `Arc` of a node is dropped under a lock**: the last one runs [`Node`]'s `Drop`,
//!   which locks its parent.

use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::{Arc, Weak};
use std::task::Waker;

use crate::loom::sync::atomic::{AtomicBool, AtomicUsize};
use crate::loom::sync::Mutex;

pub(super) struct Node {
    cancelled: AtomicBool,
    /// `CancellationToken` values for this node. Never rises from zero: a new handle is
    /// made only from an existing one.
    handles: AtomicUsize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    parent: Option<Parent>,
    children: Slots<Weak<Node>>,
    waiters: Slots<Waker>,
}

/// A node's place in its parent's list of children.
struct Parent {
    node: Arc<Node>,
    index: usize,
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

    #[cfg(test)]
    fn live(&self) -> usize {
        self.items.iter().filter(|i| i.is_some()).count()
    }
}

impl Node {
    /// A root with one handle.
    pub(super) fn root() -> Arc<Node> {
        Arc::new(Node {
            cancelled: AtomicBool::new(false),
            handles: AtomicUsize::new(1),
            inner: Mutex::default(),
        })
    }

    /// A child with one handle, cancelled when `parent` is; a cancelled root if `parent`
    /// already is cancelled.
    pub(super) fn child_of(parent: &Arc<Node>) -> Arc<Node> {
        let mut inner = parent.inner.lock();
        if parent.is_cancelled() {
            drop(inner);
            let child = Node::root();
            child.cancelled.store(true, Release);
            return child;
        }
        Arc::new_cyclic(|weak: &Weak<Node>| {
            let index = inner.children.insert(weak.clone());
            let link = Parent {
                node: parent.clone(),
                index,
            };
            Node {
                cancelled: AtomicBool::new(false),
                handles: AtomicUsize::new(1),
                inner: Mutex::new(Inner {
                    parent: Some(link),
                    ..Inner::default()
                }),
            }
        })
    }

    pub(super) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Acquire)
    }

    /// One more handle (a clone of a token that holds one).
    pub(super) fn add_handle(&self) {
        self.handles.fetch_add(1, Relaxed);
    }

    /// One handle fewer; the last one takes the node out of the tree.
    pub(super) fn drop_handle(self: &Arc<Self>) {
        if self.handles.fetch_sub(1, AcqRel) == 1 {
            leave_tree(self);
        }
    }

    /// Registers (or refreshes) a waiter in `slot`; false if the node is cancelled.
    pub(super) fn wait(&self, slot: &mut Option<usize>, waker: &Waker) -> bool {
        let mut inner = self.inner.lock();
        // Checked under the lock: cancel sets the flag before it takes the waiters.
        if self.is_cancelled() {
            return false;
        }
        // A replaced waker is dropped after the lock: its drop is user code, which may drop
        // a token of this tree (whose leaving would lock this node).
        let _replaced = match slot.and_then(|i| inner.waiters.get_mut(i)) {
            Some(w) if w.will_wake(waker) => None,
            Some(w) => Some(std::mem::replace(w, waker.clone())),
            None => {
                *slot = Some(inner.waiters.insert(waker.clone()));
                None
            }
        };
        drop(inner);
        true
    }

    pub(super) fn forget_waiter(&self, slot: usize) {
        // Dropped after the lock, as in `wait`.
        let removed = self.inner.lock().waiters.remove(slot);
        drop(removed);
    }
}

/// Cancels `node` and its subtree, depth first with an explicit stack (a chain of tokens can
/// be arbitrarily deep). A node is marked before its children, so for an instant another
/// thread may see a token cancelled and its child not yet.
pub(super) fn cancel(node: &Arc<Node>) {
    let mut pending = vec![node.clone()];
    while let Some(node) = pending.pop() {
        if node.cancelled.swap(true, AcqRel) {
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

/// Takes `node`, whose last handle is gone, out of the tree: its children move to its parent
/// (or become roots), and the node is freed once nothing else holds it. A cancelled node,
/// or one under a cancel in progress, keeps its children for that cancel to reach.
fn leave_tree(node: &Arc<Node>) {
    // Arcs released once every lock is let go (a last one would lock its parent).
    let mut release: Vec<Arc<Node>> = Vec::new();
    loop {
        let parent: Option<Arc<Node>> = node.inner.lock().parent.as_ref().map(|p| p.node.clone());
        let mut parent_inner = parent.as_ref().map(|p| p.inner.lock());
        let mut inner = node.inner.lock();
        let still_parent = match (&inner.parent, &parent) {
            (Some(link), Some(p)) => Arc::ptr_eq(&link.node, p),
            (None, None) => true,
            _ => false,
        };
        if !still_parent {
            // The parent left the tree between the two locks and handed this node up.
            drop(inner);
            drop(parent_inner);
            release.extend(parent);
            continue;
        }
        let cancel_under_way =
            node.is_cancelled() || parent.as_ref().is_some_and(|p| p.is_cancelled());
        if !cancel_under_way {
            for child in inner.children.drain().filter_map(|w| w.upgrade()) {
                let mut child_inner = child.inner.lock();
                let link = match (&parent, parent_inner.as_mut()) {
                    (Some(p), Some(p_inner)) => Some(Parent {
                        node: p.clone(),
                        index: p_inner.children.insert(Arc::downgrade(&child)),
                    }),
                    _ => None,
                };
                let old = std::mem::replace(&mut child_inner.parent, link);
                drop(child_inner);
                release.extend(old.map(|link| link.node));
                release.push(child);
            }
        }
        drop(inner);
        drop(parent_inner);
        release.extend(parent);
        return;
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        // Leave the parent's list; if this node held the parent's last reference, free the
        // parent here too, and so on up: a recursive drop of a long chain would overflow
        // the stack.
        let mut link = self.inner.lock().parent.take();
        while let Some(Parent { node, index }) = link {
            node.inner.lock().children.remove(index);
            link = Arc::into_inner(node).and_then(|node| {
                let grandparent = node.inner.lock().parent.take();
                grandparent
            });
        }
    }
}

#[cfg(test)]
impl Node {
    /// Live children and live waiters.
    pub(super) fn counts(&self) -> (usize, usize) {
        let inner = self.inner.lock();
        (inner.children.live(), inner.waiters.live())
    }

    /// The slots ever used for children and waiters (live or free).
    pub(super) fn slots(&self) -> (usize, usize) {
        let inner = self.inner.lock();
        (inner.children.items.len(), inner.waiters.items.len())
    }
}

/// Loom models of the tree (`scripts/loom.sh`).
#[cfg(all(test, loom))]
#[path = "cancellation_tree_loom_tests.rs"]
mod loom_tests;
