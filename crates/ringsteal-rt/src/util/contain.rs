//! Running user code (a buffer's `Drop`, an op's `complete`, a waker) from the runtime's own
//! paths without letting a panic in it unwind through them.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`, containing a panic: the panic hook has already reported it (as for a panicking
/// task whose `JoinHandle` nobody reads), and the caller goes on with its work. Returns
/// whether `f` returned normally.
///
/// For user code called from the completion path (reaping CQEs, freeing op cells, waking
/// tasks), where an unwind would lose the rest of a reaped batch or take a shard down
/// without draining its ring.
pub(crate) fn contain_panic(f: impl FnOnce()) -> bool {
    // AssertUnwindSafe: what `f` touches is user data that is dropped or handed on as a
    // whole; the runtime's own state is not left half-updated by it.
    catch_unwind(AssertUnwindSafe(f)).is_ok()
}
