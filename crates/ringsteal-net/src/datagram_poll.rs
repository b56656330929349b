//! The datagram sockets' receives and sends that do not wait (`try_recv_from`, `try_send_to`,
//! ...), and tokio's `poll_*` methods that wait for them, for code that implements a
//! poll-based trait over a socket (a DNS library's UDP socket trait, a QUIC endpoint's).
//!
//! A `poll_*` call waits with the socket's [`ReadinessCache`], tokio's model: ready at once
//! while the cache says so, else a one-shot `POLL_ADD` kept across calls (only the task of
//! the latest call is woken, as in tokio). Then it tries the system call, and a `WouldBlock`
//! clears what the cache said, so the next call waits for the kernel. The `try_` methods
//! clear it the same way, so a `poll_recv_ready`-then-`try_recv` loop waits instead of
//! spinning. Receives serve a datagram a dropped receive kept first (`kept_datagrams.rs`),
//! without asking the kernel.
//!
//! May not: hold a lane or a buffer across calls; a `Pending` call has taken nothing.

use std::io;
use std::task::{ready, Context, Poll};

use ringsteal_rt::io::{Interest, ReadinessCache};
use ringsteal_rt::op::{SharedFd, SockAddr};

use crate::kept_datagrams::{self, KeptDatagrams};

/// What a datagram socket's non-waiting receives and sends go through.
#[derive(Clone, Copy)]
pub(crate) struct DatagramIo<'a> {
    pub(crate) fd: &'a SharedFd,
    pub(crate) kept: &'a KeptDatagrams,
    pub(crate) cache: &'a ReadinessCache,
}

impl DatagramIo<'_> {
    /// One datagram into `buf` without waiting (or, if `peek`, a copy of it that leaves it
    /// queued), with its sender: a kept one first, then the kernel's. `WouldBlock` if none
    /// is queued.
    pub(crate) fn try_recv_from(
        &self,
        buf: &mut [u8],
        peek: bool,
    ) -> io::Result<(usize, SockAddr)> {
        if buf.is_empty() {
            return Err(kept_datagrams::no_room());
        }
        if let Some(got) = self.kept.copy_into_slice(peek, buf) {
            return Ok(got);
        }
        self.kept.none_in_flight()?;
        self.cache
            .clear_on_would_block(Interest::READABLE, || match peek {
                false => ringsteal_rt::io::try_recv_from(self.fd, buf),
                true => ringsteal_rt::io::try_peek_from(self.fd, buf),
            })
    }

    /// One datagram to `to` (the connected address if `None`) without waiting.
    /// `WouldBlock` if the send buffer is full.
    pub(crate) fn try_send_to(&self, buf: &[u8], to: Option<&SockAddr>) -> io::Result<usize> {
        self.cache.clear_on_would_block(Interest::WRITABLE, || {
            ringsteal_rt::io::try_send_to(self.fd, buf, to)
        })
    }

    /// `f`, the caller's own system call, with the cache cleared on its `WouldBlock`
    /// (`try_io`); refused for reading while a datagram is kept, which `f` cannot see.
    pub(crate) fn try_io<R>(
        &self,
        interest: Interest,
        f: impl FnOnce() -> io::Result<R>,
    ) -> io::Result<R> {
        if interest.is_readable() {
            if self.kept.any() {
                return Err(io::Error::other(
                    "a datagram a dropped receive kept comes first: take it with try_recv",
                ));
            }
            self.kept.none_in_flight()?;
        }
        self.cache.clear_on_would_block(interest, f)
    }

    /// Ready once a receive would not wait: a datagram kept, or the kernel's word.
    pub(crate) fn poll_recv_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.kept.poll_abandoned_ended(cx));
        if self.kept.any() {
            return Poll::Ready(Ok(()));
        }
        self.cache.poll_read_ready(cx, self.fd).map_ok(drop)
    }

    /// Ready once a send would not wait.
    pub(crate) fn poll_send_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.cache.poll_write_ready(cx, self.fd).map_ok(drop)
    }

    /// [`try_recv_from`](Self::try_recv_from) once the socket is ready for it.
    pub(crate) fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
        peek: bool,
    ) -> Poll<io::Result<(usize, SockAddr)>> {
        loop {
            ready!(self.poll_recv_ready(cx))?;
            match self.try_recv_from(buf, peek) {
                // The readiness was cleared: the next round waits for the kernel.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                got => return Poll::Ready(got),
            }
        }
    }

    /// [`try_send_to`](Self::try_send_to) once the socket is ready for it.
    pub(crate) fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        to: Option<&SockAddr>,
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.poll_send_ready(cx))?;
            match self.try_send_to(buf, to) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                sent => return Poll::Ready(sent),
            }
        }
    }
}
