//! tokio's `try_recv_buf` and `try_recv_buf_from` on the datagram sockets: one datagram,
//! without waiting, into the next chunk of a `bytes::BufMut`, which then advances past it.
//! A datagram a dropped receive kept comes first (`kept_datagrams.rs`), as for `try_recv`.
//! And their waiting forms, tokio's `recv_buf` and `recv_buf_from` ([`until_received`]).
//!
//! Owns: the step from a `BufMut`'s chunk (memory not initialised yet) to the receive and
//! back. May not: wait but for readiness (no owned receive: the caller's buffer never goes
//! with a request).

use std::future::Future;
use std::io;
use std::mem::MaybeUninit;

use bytes::BufMut;
use ringsteal_rt::io::Interest;
use ringsteal_rt::op::SockAddr;

use crate::datagram_poll::DatagramIo;
use crate::kept_datagrams;

/// Receives one datagram into `buf`'s next chunk (a full `Vec` or `BytesMut` grows its
/// chunk first), cut to the chunk's length as a receive cuts a longer datagram, and
/// advances `buf` past it. Yields its length and sender. `WouldBlock` if none is queued.
pub(crate) fn try_recv_buf<B: BufMut>(
    socket: DatagramIo<'_>,
    buf: &mut B,
) -> io::Result<(usize, SockAddr)> {
    // SAFETY: both writers below (the kept datagram's copy and `recvfrom`) write only bytes
    // into the chunk and never read it.
    let dst: &mut [MaybeUninit<u8>] = unsafe { buf.chunk_mut().as_uninit_slice_mut() };
    if dst.is_empty() {
        return Err(kept_datagrams::no_room());
    }
    let got = match socket.kept.take_into_uninit(dst) {
        Some(got) => got,
        None => {
            socket.kept.none_in_flight()?;
            socket.cache.clear_on_would_block(Interest::READABLE, || {
                ringsteal_rt::io::try_recv_from_uninit(socket.fd, dst)
            })?
        }
    };
    // SAFETY: the first got.0 bytes of the chunk were just written (got.0 <= its length:
    // both writers cut the datagram to it).
    unsafe { buf.advance_mut(got.0) };
    Ok(got)
}

/// tokio's `recv_buf` shape: `try_recv` (a kept or queued datagram), and while it says
/// `WouldBlock` (which clears the cached readiness), waits for `readable` and tries again.
/// Cancel-safe: nothing is taken but by the one `try_recv` that succeeds, which does not
/// wait.
pub(crate) async fn until_received<T, R>(
    mut try_recv: impl FnMut() -> io::Result<T>,
    readable: impl Fn() -> R,
) -> io::Result<T>
where
    R: Future<Output = io::Result<()>>,
{
    loop {
        match try_recv() {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => readable().await?,
            done => return done,
        }
    }
}
