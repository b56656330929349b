//! `futures_core::Stream` for this crate's streams (feature `stream`): the op layer's
//! streams of completions and [`time::Interval`](crate::time::Interval), so that
//! `StreamExt` combinators (`next`, `take`, `filter`, `for_each_concurrent`) and tokio-stream
//! style code work on them. Each forwards to the type's own `poll_next` (`poll_tick`).
//!
//! May not: hold logic.

use std::io;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;

use crate::buf::RecvBuf;
use crate::op::{AcceptStream, Datagram, RecvMsgStream, RecvStream};
use crate::time::{Instant, Interval};

impl Stream for AcceptStream {
    type Item = io::Result<OwnedFd>;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        AcceptStream::poll_next(self.get_mut(), cx)
    }
}

impl Stream for RecvStream {
    type Item = io::Result<RecvBuf>;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        RecvStream::poll_next(self.get_mut(), cx)
    }
}

impl Stream for RecvMsgStream {
    type Item = io::Result<Datagram>;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        RecvMsgStream::poll_next(self.get_mut(), cx)
    }
}

/// Never ends: one item per tick, as tokio-stream's `IntervalStream`.
impl Stream for Interval {
    type Item = Instant;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Instant>> {
        self.get_mut().poll_tick(cx).map(Some)
    }
}
