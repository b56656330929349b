//! [`JoinError`]: why a task produced no output.

use std::any::Any;
use std::fmt;

use super::id::Id;

/// A task did not complete: it was aborted (or the runtime shut down), or it panicked.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let handle = ringsteal_rt::spawn(async { panic!("boom") });
///     let err = handle.await.unwrap_err();
///     assert!(err.is_panic());
///     let payload = err.into_panic();
///     assert_eq!(*payload.downcast_ref::<&str>().unwrap(), "boom");
/// });
/// ```
pub struct JoinError {
    id: Id,
    repr: Repr,
}

enum Repr {
    Cancelled,
    Panic(SyncPanic),
}

/// A panic payload made `Sync` by what a shared reference may do with it: only
/// [`downcast_ref_sync`](Self::downcast_ref_sync).
struct SyncPanic(Box<dyn Any + Send + 'static>);

// SAFETY: through `&SyncPanic` (so from several threads at once, through a `&JoinError`) the
// only access is `downcast_ref_sync`: `type_id`, which reads no payload data, and then a
// shared reference to a `T: Sync`, which may be shared. Everything else takes the payload by
// value (`into_panic`).
unsafe impl Sync for SyncPanic {}

impl SyncPanic {
    /// The payload as a `T`, for `Sync` types only (see the `Sync` impl).
    fn downcast_ref_sync<T: Any + Sync>(&self) -> Option<&T> {
        self.0.downcast_ref::<T>()
    }
}

impl JoinError {
    pub(crate) fn cancelled(id: Id) -> Self {
        Self {
            id,
            repr: Repr::Cancelled,
        }
    }

    pub(crate) fn panic(id: Id, payload: Box<dyn Any + Send + 'static>) -> Self {
        Self {
            id,
            repr: Repr::Panic(SyncPanic(payload)),
        }
    }

    /// The id of the task that failed (as tokio's `JoinError::id`).
    ///
    /// ```
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let handle = ringsteal_rt::spawn(std::future::pending::<()>());
    ///     let id = handle.id();
    ///     handle.abort();
    ///     assert_eq!(handle.await.unwrap_err().id(), id);
    /// });
    /// ```
    pub fn id(&self) -> Id {
        self.id
    }

    /// True if the task was aborted or dropped by shutdown before it finished.
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled)
    }

    /// True if the task panicked.
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(_))
    }

    /// The panic payload. Panics if the task was cancelled; see
    /// [`try_into_panic`](Self::try_into_panic).
    pub fn into_panic(self) -> Box<dyn Any + Send + 'static> {
        self.try_into_panic()
            .expect("`JoinError::into_panic` called on a cancelled task's error")
    }

    /// The panic payload, or the error back if the task was cancelled.
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send + 'static>, JoinError> {
        match self.repr {
            Repr::Panic(p) => Ok(p.0),
            Repr::Cancelled => Err(self),
        }
    }
}

fn panic_message(p: &SyncPanic) -> Option<&str> {
    p.downcast_ref_sync::<&str>()
        .copied()
        .or_else(|| p.downcast_ref_sync::<String>().map(String::as_str))
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => write!(f, "task {} was cancelled", self.id),
            Repr::Panic(p) => match panic_message(p) {
                Some(msg) => write!(f, "task {} panicked with message {msg:?}", self.id),
                None => write!(f, "task {} panicked", self.id),
            },
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => write!(f, "JoinError::Cancelled({:?})", self.id),
            Repr::Panic(p) => match panic_message(p) {
                Some(msg) => write!(f, "JoinError::Panic({:?}, {msg:?})", self.id),
                None => write!(f, "JoinError::Panic({:?}, ..)", self.id),
            },
        }
    }
}

impl std::error::Error for JoinError {}

impl From<JoinError> for std::io::Error {
    fn from(err: JoinError) -> Self {
        std::io::Error::other(err)
    }
}
