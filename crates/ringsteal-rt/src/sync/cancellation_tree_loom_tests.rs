//! Loom models of the cancellation tree: a node leaving the tree (its last handle dropped)
//! racing a cancel from above, its parent leaving too, or its child leaving. A lost child
//! shows as a token left uncancelled after the root's cancel; a lock order inversion as a
//! deadlock.

use std::sync::Arc;

use loom::thread;

use super::*;

/// A token's handle, as `CancellationToken` keeps it (that type lives a module up).
struct Handle(Arc<Node>);

impl Handle {
    fn root() -> Self {
        Handle(Node::root())
    }
    fn child(&self) -> Self {
        Handle(Node::child_of(&self.0))
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.0.drop_handle();
    }
}

#[test]
fn loom_a_node_leaving_while_the_root_is_cancelled_loses_no_child() {
    loom::model(|| {
        let root = Handle::root();
        let middle = root.child();
        let leaf = middle.child();
        let leaving = thread::spawn(move || drop(middle));
        cancel(&root.0);
        leaving.join().unwrap();
        assert!(leaf.0.is_cancelled());
    });
}

#[test]
fn loom_a_parent_and_its_child_leaving_at_once_keep_the_grandchild_in_reach() {
    loom::model(|| {
        let root = Handle::root();
        let upper = root.child();
        let lower = upper.child();
        let leaf = lower.child();
        let gone = [Arc::downgrade(&upper.0), Arc::downgrade(&lower.0)];
        let first = thread::spawn(move || drop(upper));
        drop(lower);
        first.join().unwrap();
        assert!(
            gone.iter().all(|node| node.upgrade().is_none()),
            "neither node lingers"
        );
        assert_eq!(root.0.counts().0, 1, "the leaf hangs off the root");
        cancel(&root.0);
        assert!(leaf.0.is_cancelled());
    });
}

#[test]
fn loom_a_node_leaving_while_its_parent_is_cancelled_and_its_child_leaves() {
    loom::model(|| {
        let root = Handle::root();
        let middle = root.child();
        let lower = middle.child();
        let leaf = lower.child();
        let canceller = {
            let root = root.0.clone();
            thread::spawn(move || cancel(&root))
        };
        let leaving = thread::spawn(move || drop(middle));
        drop(lower);
        canceller.join().unwrap();
        leaving.join().unwrap();
        assert!(leaf.0.is_cancelled());
    });
}
