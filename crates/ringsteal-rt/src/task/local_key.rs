//! Task-local values: [`task_local!`](crate::task_local) declares a [`LocalKey`], whose
//! [`scope`](LocalKey::scope) runs a future with a value that code anywhere inside it reads
//! through the key, as tokio's `task_local!`.
//!
//! The value lives in the scope's future and is swapped into a thread-local slot for each poll
//! (and swapped back when the poll ends, a panic included), so it follows the future across
//! polls, whatever thread polls it, and nested scopes of one key shadow each other. Nothing
//! here knows about the runtime: it works under any executor.
//!
//! Owns: the key, the scope's future and the swap. May not: spawn or schedule.

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Declares task-local keys: `static NAME: Type;`, one or more, each with its visibility and
/// attributes. A key has no value until a [`scope`](LocalKey::scope) gives it one.
///
/// ```
/// ringsteal_rt::task_local! {
///     /// The id of the request being served.
///     pub static REQUEST_ID: u64;
/// }
///
/// async fn handler() -> String {
///     format!("serving request {}", REQUEST_ID.get())
/// }
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// let out = rt.block_on(REQUEST_ID.scope(42, handler()));
/// assert_eq!(out, "serving request 42");
/// ```
#[macro_export]
macro_rules! task_local {
    () => {};
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty; $($rest:tt)*) => {
        $crate::__task_local_key!($(#[$attr])* $vis $name, $t);
        $crate::task_local!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty) => {
        $crate::__task_local_key!($(#[$attr])* $vis $name, $t);
    };
}

/// One key of [`task_local!`]: its thread-local slot, wrapped.
#[doc(hidden)]
#[macro_export]
macro_rules! __task_local_key {
    ($(#[$attr:meta])* $vis:vis $name:ident, $t:ty) => {
        $(#[$attr])*
        $vis static $name: $crate::task::LocalKey<$t> = {
            ::std::thread_local! {
                static __SLOT: ::std::cell::RefCell<::std::option::Option<$t>> =
                    const { ::std::cell::RefCell::new(::std::option::Option::None) };
            }
            $crate::task::LocalKey { slot: __SLOT }
        };
    };
}

/// A task-local key, declared with [`task_local!`](crate::task_local).
///
/// ```
/// ringsteal_rt::task_local! { static DEPTH: u32; }
///
/// assert!(DEPTH.try_with(|d| *d).is_err(), "no scope yet");
/// DEPTH.sync_scope(1, || {
///     DEPTH.sync_scope(2, || assert_eq!(DEPTH.get(), 2)); // the inner scope shadows
///     assert_eq!(DEPTH.get(), 1);
/// });
/// ```
pub struct LocalKey<T: 'static> {
    /// The thread-local slot that holds the value of the scope being polled.
    #[doc(hidden)]
    pub slot: std::thread::LocalKey<RefCell<Option<T>>>,
}

impl<T: 'static> LocalKey<T> {
    /// Runs `future` with `value` for this key: code polled inside it reads the value through
    /// the key. Tasks it spawns do not inherit it (scope their futures too).
    ///
    /// ```
    /// ringsteal_rt::task_local! { static USER: String; }
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(USER.scope("ada".to_string(), async {
    ///     ringsteal_rt::yield_now().await; // the value is there after every await
    ///     USER.with(|user| assert_eq!(user, "ada"));
    /// }));
    /// ```
    ///
    /// The inner future is dropped inside the scope too, as tokio's: a `Drop` in it that
    /// reads the key (a request id in a guard's log line) finds the value when the scope is
    /// cut short (a timeout, an abort, a `select!` that drops the losing branch).
    ///
    /// # Panics
    /// Polled inside [`with`](Self::with) of the same key (the value is borrowed there).
    pub fn scope<F: Future>(&'static self, value: T, future: F) -> TaskLocalFuture<T, F> {
        TaskLocalFuture {
            key: self,
            value: Some(value),
            future: Some(future),
        }
    }

    /// Runs `f` with `value` for this key, synchronously.
    ///
    /// # Panics
    /// Called inside [`with`](Self::with) of the same key (the value is borrowed there).
    pub fn sync_scope<R>(&'static self, value: T, f: impl FnOnce() -> R) -> R {
        let mut value = Some(value);
        self.enter(&mut value, Borrowed::Panic, f)
    }

    /// Calls `f` with the value of the current scope.
    ///
    /// # Panics
    /// Outside any scope of this key, as tokio's does ([`try_with`](Self::try_with) does
    /// not).
    pub fn with<R>(&'static self, f: impl FnOnce(&T) -> R) -> R {
        match self.try_with(f) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

    /// Calls `f` with the value of the current scope, or fails outside any scope.
    pub fn try_with<R>(&'static self, f: impl FnOnce(&T) -> R) -> Result<R, AccessError> {
        self.slot
            .try_with(|slot| slot.borrow().as_ref().map(f))
            .ok()
            .flatten()
            .ok_or(AccessError)
    }

    /// A copy of the value of the current scope.
    ///
    /// # Panics
    /// Outside any scope of this key.
    pub fn get(&'static self) -> T
    where
        T: Clone,
    {
        self.with(T::clone)
    }

    /// A copy of the value of the current scope, or [`AccessError`] outside any scope, as
    /// tokio's `try_get`.
    ///
    /// ```
    /// ringsteal_rt::task_local! {
    ///     static USER: u32;
    /// }
    ///
    /// assert!(USER.try_get().is_err());
    /// USER.sync_scope(7, || assert_eq!(USER.try_get().unwrap(), 7));
    /// ```
    pub fn try_get(&'static self) -> Result<T, AccessError>
    where
        T: Clone,
    {
        self.try_with(T::clone)
    }

    /// Swaps `value` into the slot for the duration of `f`, and back afterwards (also when
    /// `f` panics), so that it ends up where it was and the slot holds what it held.
    ///
    /// Where the value cannot go in, `f` runs without it (reads in it fail as outside any
    /// scope): once this thread's slot is gone (in another thread-local's destructor as the
    /// thread exits, where a panic would abort the process), and, with
    /// [`Borrowed::RunWithout`], while the slot is borrowed by `with`.
    fn enter<R>(
        &'static self,
        value: &mut Option<T>,
        borrowed: Borrowed,
        f: impl FnOnce() -> R,
    ) -> R {
        struct Restore<'a, T: 'static> {
            key: &'static LocalKey<T>,
            value: &'a mut Option<T>,
        }
        impl<T: 'static> Drop for Restore<'_, T> {
            fn drop(&mut self) {
                // It went in, so it comes out: the slot is not borrowed by a `with` that
                // began inside `f` (that one ended with `f`), and is still there.
                let _ = self.key.swap(self.value);
            }
        }
        match self.swap(value) {
            Swapped::Done => {}
            Swapped::Borrowed if borrowed == Borrowed::Panic => {
                panic!("a task-local scope began or ended inside `with` of the same key")
            }
            Swapped::Borrowed | Swapped::Gone => return f(),
        }
        let _restore = Restore { key: self, value };
        f()
    }

    /// Swaps `value` with the slot's content, if the slot is there and free.
    fn swap(&'static self, value: &mut Option<T>) -> Swapped {
        self.slot
            .try_with(|slot| match slot.try_borrow_mut() {
                Ok(mut slot) => {
                    std::mem::swap(&mut *slot, value);
                    Swapped::Done
                }
                Err(_) => Swapped::Borrowed,
            })
            .unwrap_or(Swapped::Gone)
    }
}

/// What [`LocalKey::enter`] does when the slot is borrowed by `with`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Borrowed {
    /// Panic: a scope entered inside `with` of its own key is a mistake in the program.
    Panic,
    /// Run without the value: the drop of a scope's future must not panic.
    RunWithout,
}

/// What [`LocalKey::swap`] did.
enum Swapped {
    Done,
    /// The slot is borrowed by `with`.
    Borrowed,
    /// The thread's slot has been destroyed (thread exit).
    Gone,
}

impl<T: 'static> fmt::Debug for LocalKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LocalKey { .. }")
    }
}

/// The future of [`LocalKey::scope`]: the inner future, polled with its value for the key.
/// It is `Send` when the value and the future are, so it can be spawned.
///
/// ```
/// ringsteal_rt::task_local! { static TRACE: &'static str; }
///
/// let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
/// rt.block_on(async {
///     let task = ringsteal_rt::spawn(TRACE.scope("req-7", async { TRACE.get() }));
///     assert_eq!(task.await.unwrap(), "req-7");
/// });
/// ```
pub struct TaskLocalFuture<T: 'static, F> {
    key: &'static LocalKey<T>,
    /// The scope's value while the future is not being polled (the slot holds it meanwhile).
    value: Option<T>,
    /// The inner future: `Some` until this future is dropped (its `Drop` drops it in the
    /// scope, in place).
    future: Option<F>,
}

impl<T: 'static, F: Future> Future for TaskLocalFuture<T, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `future` is pinned structurally: `poll` reaches it only through the pin,
        // nothing moves it out (no method hands it out), and `Drop` drops it in place
        // (`Option::take` would move it; setting the option to `None` does not). `key` and
        // `value` are not pinned: moving them is fine.
        let this = unsafe { self.get_unchecked_mut() };
        let Self { key, value, future } = this;
        let Some(future) = future.as_mut() else {
            unreachable!("the inner future is only gone once this future is dropped")
        };
        // SAFETY: as above.
        let future = unsafe { Pin::new_unchecked(future) };
        key.enter(value, Borrowed::Panic, || future.poll(cx))
    }
}

impl<T: 'static, F> Drop for TaskLocalFuture<T, F> {
    fn drop(&mut self) {
        if !std::mem::needs_drop::<F>() || self.future.is_none() {
            return;
        }
        let Self { key, value, future } = self;
        // In place (the pin's drop guarantee), inside the scope; without the value only
        // where it cannot go in (the slot borrowed or gone), never with a panic. Were the
        // inner drop to panic, the field drop that follows finds `None`.
        key.enter(value, Borrowed::RunWithout, || *future = None);
    }
}

impl<T: 'static, F> fmt::Debug for TaskLocalFuture<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TaskLocalFuture { .. }")
    }
}

/// A task-local key read outside any scope of it.
///
/// ```
/// ringsteal_rt::task_local! { static KEY: u8; }
///
/// let err = KEY.try_with(|k| *k).unwrap_err();
/// assert!(err.to_string().contains("outside any scope"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessError;

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("task-local value read outside any scope of its key (see LocalKey::scope)")
    }
}

impl std::error::Error for AccessError {}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};

    crate::task_local! {
        static NUMBER: u32;
        static NAME: String;
    }

    struct Noop;
    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }

    /// A future that is pending once, then reads the key.
    async fn read_after_a_pause() -> u32 {
        let mut paused = false;
        std::future::poll_fn(|cx| {
            if std::mem::replace(&mut paused, true) {
                Poll::Ready(())
            } else {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        })
        .await;
        NUMBER.get()
    }

    #[test]
    fn two_scopes_polled_in_turn_each_see_their_own_value() {
        let waker = Waker::from(Arc::new(Noop));
        let mut cx = Context::from_waker(&waker);
        let mut a = pin!(NUMBER.scope(1, read_after_a_pause()));
        let mut b = pin!(NUMBER.scope(2, read_after_a_pause()));
        assert!(a.as_mut().poll(&mut cx).is_pending());
        assert!(b.as_mut().poll(&mut cx).is_pending());
        assert!(NUMBER.try_with(|_| ()).is_err(), "no scope between polls");
        assert_eq!(b.as_mut().poll(&mut cx), Poll::Ready(2));
        assert_eq!(a.as_mut().poll(&mut cx), Poll::Ready(1));
    }

    #[test]
    fn nested_scopes_shadow_and_restore_and_a_panic_restores_too() {
        NUMBER.sync_scope(1, || {
            assert_eq!(NUMBER.get(), 1);
            NUMBER.sync_scope(2, || assert_eq!(NUMBER.get(), 2));
            assert_eq!(NUMBER.get(), 1);
            let panicked = std::panic::catch_unwind(|| NUMBER.sync_scope(3, || panic!("inside")));
            assert!(panicked.is_err());
            assert_eq!(NUMBER.get(), 1, "restored after the panic");
            NAME.sync_scope("n".into(), || assert_eq!(NAME.get(), "n"));
        });
        assert_eq!(NUMBER.try_with(|n| *n), Err(super::AccessError));
    }

    #[test]
    #[should_panic(expected = "outside any scope")]
    fn with_outside_a_scope_panics_with_a_clear_message() {
        NUMBER.with(|_| ());
    }

    /// Records, when dropped, what the key read then.
    struct ReadsOnDrop(std::sync::mpsc::Sender<Option<u32>>);

    impl Drop for ReadsOnDrop {
        fn drop(&mut self) {
            let _ = self.0.send(NUMBER.try_get().ok());
        }
    }

    #[test]
    fn a_scope_cut_short_drops_its_future_inside_the_scope() {
        let waker = Waker::from(Arc::new(Noop));
        let mut cx = Context::from_waker(&waker);
        let (tx, rx) = std::sync::mpsc::channel();
        // Polled once (the guard lives in the future's state), then dropped: a timeout or
        // an abort does this.
        let guard = ReadsOnDrop(tx.clone());
        let mut scoped = Box::pin(NUMBER.scope(7, async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        }));
        assert!(scoped.as_mut().poll(&mut cx).is_pending());
        drop(scoped);
        assert_eq!(
            rx.try_recv(),
            Ok(Some(7)),
            "the drop read the scope's value"
        );
        // Never polled: the guard is a captured variable, dropped in the scope as well.
        let guard = ReadsOnDrop(tx.clone());
        drop(NUMBER.scope(8, async move { drop(guard) }));
        assert_eq!(rx.try_recv(), Ok(Some(8)));
        // And an outer scope is what the key holds again afterwards.
        NUMBER.sync_scope(1, || {
            let guard = ReadsOnDrop(tx);
            drop(NUMBER.scope(9, async move { drop(guard) }));
            assert_eq!(NUMBER.get(), 1);
        });
        assert_eq!(rx.try_recv(), Ok(Some(9)));
        assert!(NUMBER.try_get().is_err(), "no scope left behind");
    }

    #[test]
    fn a_scope_dropped_inside_with_of_its_key_drops_its_future_without_a_panic() {
        let (tx, rx) = std::sync::mpsc::channel();
        NUMBER.sync_scope(1, || {
            let guard = ReadsOnDrop(tx);
            let scoped = NUMBER.scope(2, async move { drop(guard) });
            // The slot is borrowed by `with`: the inner future is dropped outside the
            // scope (it reads the outer value), and nothing panics.
            NUMBER.with(move |_| drop(scoped));
        });
        assert_eq!(rx.try_recv(), Ok(Some(1)));
    }

    /// A thread-local whose destructor enters a scope of `NAME` as the thread exits. (Its
    /// slot holds a `String`, so it has a destructor: the slot of a key whose value needs
    /// no drop, `NUMBER`'s, is never destroyed.)
    struct ScopesAtExit(std::sync::mpsc::Sender<(Option<String>, Option<String>)>);

    impl Drop for ScopesAtExit {
        fn drop(&mut self) {
            let in_sync = NAME.sync_scope("sync".into(), || NAME.try_get().ok());
            let waker = Waker::from(Arc::new(Noop));
            let mut cx = Context::from_waker(&waker);
            let polled = match pin!(NAME.scope("polled".into(), async { NAME.try_get().ok() }))
                .poll(&mut cx)
            {
                Poll::Ready(v) => v,
                Poll::Pending => unreachable!("the future is ready at once"),
            };
            let _ = self.0.send((in_sync, polled));
        }
    }

    thread_local! {
        static AT_EXIT: std::cell::RefCell<Option<ScopesAtExit>> = const { std::cell::RefCell::new(None) };
    }

    #[test]
    fn a_scope_entered_after_the_slot_is_gone_runs_without_the_value_not_an_abort() {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            // `AT_EXIT` is used first, the key's slot after: destructors run in the reverse
            // order, so the slot is gone when `ScopesAtExit` enters its scopes.
            AT_EXIT.with(|slot| *slot.borrow_mut() = Some(ScopesAtExit(tx)));
            NAME.sync_scope("live".into(), || assert_eq!(NAME.get(), "live"));
        })
        .join()
        .expect("the thread exited without a panic");
        assert_eq!(rx.recv(), Ok((None, None)), "read as outside any scope");
    }
}
