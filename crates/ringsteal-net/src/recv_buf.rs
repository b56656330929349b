//! tokio's `try_recv_buf` and `try_recv_buf_from` on the datagram sockets: one datagram,
//! without waiting, into the next chunk of a `bytes::BufMut`, which then advances past it.
//! A datagram a dropped receive kept comes first (`kept_datagrams.rs`), as for `try_recv`.
//!
//! Owns: the step from a `BufMut`'s chunk (memory not initialised yet) to the receive and
//! back. May not: wait.

use std::io;
use std::mem::MaybeUninit;

use bytes::BufMut;
use ringsteal_rt::op::{SharedFd, SockAddr};

use crate::kept_datagrams::{self, KeptDatagrams};

/// Receives one datagram into `buf`'s next chunk (a full `Vec` or `BytesMut` grows its
/// chunk first), cut to the chunk's length as a receive cuts a longer datagram, and
/// advances `buf` past it. Yields its length and sender. `WouldBlock` if none is queued.
pub(crate) fn try_recv_buf<B: BufMut>(
    fd: &SharedFd,
    kept: &KeptDatagrams,
    buf: &mut B,
) -> io::Result<(usize, SockAddr)> {
    // SAFETY: both writers below (the kept datagram's copy and `recvfrom`) write only bytes
    // into the chunk and never read it.
    let dst: &mut [MaybeUninit<u8>] = unsafe { buf.chunk_mut().as_uninit_slice_mut() };
    if dst.is_empty() {
        return Err(kept_datagrams::no_room());
    }
    let got = match kept.take_into_uninit(dst) {
        Some(got) => got,
        None => ringsteal_rt::io::try_recv_from_uninit(fd, dst)?,
    };
    // SAFETY: the first got.0 bytes of the chunk were just written (got.0 <= its length:
    // both writers cut the datagram to it).
    unsafe { buf.advance_mut(got.0) };
    Ok(got)
}
