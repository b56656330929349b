//! `futures_core::Stream` for [`ReadDir`] (feature `stream`), as tokio-stream's
//! `ReadDirStream`: the entries, then the end (an error ends the listing after it is
//! yielded). Forwards to [`ReadDir::poll_next_entry`].
//!
//! May not: hold logic.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;

use crate::{DirEntry, ReadDir};

impl Stream for ReadDir {
    type Item = io::Result<DirEntry>;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_next_entry(cx).map(Result::transpose)
    }
}
