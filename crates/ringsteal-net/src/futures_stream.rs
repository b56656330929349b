//! `futures_core::Stream` for [`Incoming`] and [`RecvStream`] (feature `stream`; the
//! datagram sockets' `RecvMsgStream` gets it from `ringsteal-rt`'s feature), so that
//! `StreamExt` combinators and tokio-stream style code work on them (where tokio needs
//! tokio-stream's `TcpListenerStream`, an `Incoming` is a stream already). Each forwards to
//! the type's own `poll_next`.
//!
//! May not: hold logic.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;

use crate::{Incoming, RecvBuf, RecvStream};

impl<S> Stream for Incoming<S> {
    type Item = io::Result<S>;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Incoming::poll_next(self.get_mut(), cx)
    }
}

impl Stream for RecvStream {
    type Item = io::Result<RecvBuf>;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        RecvStream::poll_next(self.get_mut(), cx)
    }
}
