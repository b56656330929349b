//! `futures_core::Stream` for [`Signal`] (feature `stream`), as tokio-stream's
//! `SignalStream`: one `()` per delivery, forwarded from [`Signal::poll_recv`].
//!
//! May not: hold logic.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;

use crate::Signal;

impl Stream for Signal {
    type Item = ();
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<()>> {
        self.get_mut().poll_recv(cx)
    }
}
