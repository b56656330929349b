//! [`LocalOn`]: a `!Send` future created on its shard by a `Send` closure, so it can be
//! placed on another shard (`spawn_local_on`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Holds the closure until the first poll (on the target shard), then the future it made.
pub(crate) struct LocalOn<C, F> {
    state: State<C, F>,
}

enum State<C, F> {
    Closure(Option<C>),
    Future(F),
}

// SAFETY: before the first poll only the `Send` closure exists, and that is the only time
// the task crosses threads (into the target shard's inbox). The `!Send` future is created by
// the first poll, on the target shard, and is polled and dropped only there: the task is
// bound to that shard (its home) and only tasks spawned `Stealable` move once started
// (`Header::movable`, never set for these). A task that never started is
// dropped with only the closure inside.
unsafe impl<C: Send, F> Send for LocalOn<C, F> {}

impl<C, F> LocalOn<C, F> {
    pub(crate) fn new(make: C) -> Self {
        Self {
            state: State::Closure(Some(make)),
        }
    }
}

impl<C, F> Future for LocalOn<C, F>
where
    C: FnOnce() -> F,
    F: Future,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: the future inside is never moved once created (we only replace the closure
        // state before it exists), so structural pinning holds.
        let this = unsafe { self.get_unchecked_mut() };
        if let State::Closure(make) = &mut this.state {
            let make = make.take().expect("LocalOn closure is taken once");
            this.state = State::Future(make());
        }
        match &mut this.state {
            // SAFETY: see above: the future stays where it was created.
            State::Future(f) => unsafe { Pin::new_unchecked(f) }.poll(cx),
            State::Closure(_) => unreachable!(),
        }
    }
}
