//! Reads and writes that never wait, for tokio's `try_read` / `try_write` (and their
//! `_vectored` forms) on a stream (one non-blocking system call in the stream's lane, or
//! `WouldBlock` at once) and its `try_recv_from` / `try_send_to` on a datagram socket (one
//! non-blocking system call).
//!
//! The lane is taken only if it is free (`Lane::try_acquire`), so such a call can neither
//! overtake nor split an owned-buffer request of the same direction: while one holds the
//! lane (a read in flight, a receive stream, a cancelled read the kernel has not finished
//! with) the call returns `WouldBlock`, as tokio's does when the socket is not ready.
//!
//! May not: wait, or register a waker (waiting is `readable`/`writable`'s job).

use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::AsRawFd;

use super::sys;
use crate::io::Lane;
use crate::op::{SharedFd, SockAddr};

/// Reads into `buf` without waiting: the bytes an abandoned read of the stream kept first,
/// else what the socket has queued (`Ok(0)`: the end of the stream, or an empty `buf`).
/// `WouldBlock` if the socket has nothing queued or `read_lane` is held by a request.
///
/// ```
/// use ringsteal_rt::io::{try_read_in_lane, Lane};
/// use ringsteal_rt::op::SharedFd;
///
/// let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
/// let (a, lane) = (SharedFd::new(a.into()), Lane::new());
/// let mut buf = [0; 8];
/// let err = try_read_in_lane(&a, &lane, &mut buf).unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock); // nothing queued yet
/// std::io::Write::write_all(&mut &b, b"hi").unwrap();
/// assert_eq!(try_read_in_lane(&a, &lane, &mut buf).unwrap(), 2);
/// assert_eq!(&buf[..2], b"hi");
/// ```
pub fn try_read_in_lane(fd: &SharedFd, read_lane: &Lane, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: both writers (the kept bytes' copy and `recv`) write only bytes.
    try_read_in_lane_uninit(fd, read_lane, unsafe { as_uninit(buf) })
}

/// As [`try_read_in_lane`], into memory that need not be initialised (for example a
/// `bytes::BufMut`'s `chunk_mut`): on `Ok(n)` the first `n` bytes of `dst` are initialised.
/// Nothing in `dst` is read.
///
/// ```
/// use std::mem::MaybeUninit;
/// use ringsteal_rt::io::{try_read_in_lane_uninit, Lane};
/// use ringsteal_rt::op::SharedFd;
///
/// let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
/// let (a, lane) = (SharedFd::new(a.into()), Lane::new());
/// std::io::Write::write_all(&mut &b, b"hi").unwrap();
/// let mut buf = [MaybeUninit::<u8>::uninit(); 8];
/// assert_eq!(try_read_in_lane_uninit(&a, &lane, &mut buf).unwrap(), 2);
/// // SAFETY: the read initialised the first two bytes.
/// assert_eq!(unsafe { [buf[0].assume_init(), buf[1].assume_init()] }, *b"hi");
/// ```
pub fn try_read_in_lane_uninit(
    fd: &SharedFd,
    read_lane: &Lane,
    dst: &mut [MaybeUninit<u8>],
) -> io::Result<usize> {
    try_recv_in_lane(fd, read_lane, dst, false)
}

/// A read (`peek`: a copy that takes nothing) of the kept bytes, else of the socket.
fn try_recv_in_lane(
    fd: &SharedFd,
    read_lane: &Lane,
    dst: &mut [MaybeUninit<u8>],
    peek: bool,
) -> io::Result<usize> {
    let Some(mut guard) = read_lane.try_acquire() else {
        return Err(in_flight("read"));
    };
    if dst.is_empty() {
        return Ok(0);
    }
    if guard.has_leftover() {
        return Ok(match peek {
            true => guard.peek_leftover_into(dst),
            false => guard.take_leftover_into(dst),
        });
    }
    if let Some(end) = guard.take_end() {
        // What an abandoned read met (a reset, the end of stream): once, as it would have.
        if peek && end.is_ok() {
            guard.keep_end(None);
        }
        return end;
    }
    let flags = if peek { libc::MSG_PEEK } else { 0 };
    sys::recv(fd.as_raw_fd(), dst, flags)
}

/// As [`try_read_in_lane`], but takes nothing: the bytes an abandoned read of the stream
/// kept first (copied, still kept), else what the socket has queued (`recv(2)` with
/// `MSG_PEEK`, so the next read gets them again). `WouldBlock` if the socket has nothing
/// queued or `read_lane` is held by a request.
///
/// ```
/// use ringsteal_rt::io::{try_peek_in_lane, try_read_in_lane, Lane};
/// use ringsteal_rt::op::SharedFd;
///
/// let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
/// let (a, lane) = (SharedFd::new(a.into()), Lane::new());
/// std::io::Write::write_all(&mut &b, b"hi").unwrap();
/// let mut buf = [0; 8];
/// assert_eq!(try_peek_in_lane(&a, &lane, &mut buf).unwrap(), 2);
/// assert_eq!(try_read_in_lane(&a, &lane, &mut buf).unwrap(), 2, "still there");
/// ```
pub fn try_peek_in_lane(fd: &SharedFd, read_lane: &Lane, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: both writers (the kept bytes' copy and `recv`) write only bytes.
    try_recv_in_lane(fd, read_lane, unsafe { as_uninit(buf) }, true)
}

/// Writes from `buf` without waiting: what the socket takes at once (possibly short).
/// `WouldBlock` if its send buffer is full or `write_lane` is held by a request.
///
/// ```
/// use ringsteal_rt::io::{try_write_in_lane, Lane};
/// use ringsteal_rt::op::SharedFd;
///
/// let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
/// let (a, lane) = (SharedFd::new(a.into()), Lane::new());
/// assert_eq!(try_write_in_lane(&a, &lane, b"hi").unwrap(), 2);
/// let held = lane.try_acquire().unwrap(); // as a write in flight holds it
/// let err = try_write_in_lane(&a, &lane, b"later").unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock);
/// drop(held);
/// let mut got = [0; 2];
/// std::io::Read::read_exact(&mut &b, &mut got).unwrap();
/// assert_eq!(&got, b"hi");
/// ```
pub fn try_write_in_lane(fd: &SharedFd, write_lane: &Lane, buf: &[u8]) -> io::Result<usize> {
    let Some(_guard) = write_lane.try_acquire() else {
        return Err(in_flight("write"));
    };
    if buf.is_empty() {
        return Ok(0);
    }
    sys::send(fd.as_raw_fd(), buf)
}

/// As [`try_read_in_lane`], into several buffers in order (`recvmsg`, `readv`'s socket
/// form): one non-blocking call fills them as far as the socket has bytes (the first
/// `IOV_MAX`, 1024, of them; `Ok(0)` only at the end of the stream or if those are all
/// empty). Bytes an abandoned read kept go into the first non-empty buffer alone (a short
/// read, as a vectored read may be).
///
/// ```
/// use std::io::IoSliceMut;
/// use ringsteal_rt::io::{try_read_vectored_in_lane, Lane};
/// use ringsteal_rt::op::SharedFd;
///
/// let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
/// let (a, lane) = (SharedFd::new(a.into()), Lane::new());
/// std::io::Write::write_all(&mut &b, b"header+body").unwrap();
/// let (mut head, mut body) = ([0; 7], [0; 16]);
/// let mut bufs = [IoSliceMut::new(&mut head), IoSliceMut::new(&mut body)];
/// assert_eq!(try_read_vectored_in_lane(&a, &lane, &mut bufs).unwrap(), 11);
/// assert_eq!(&head, b"header+");
/// assert_eq!(&body[..4], b"body");
/// ```
pub fn try_read_vectored_in_lane(
    fd: &SharedFd,
    read_lane: &Lane,
    bufs: &mut [IoSliceMut<'_>],
) -> io::Result<usize> {
    let Some(mut guard) = read_lane.try_acquire() else {
        return Err(in_flight("read"));
    };
    // One call takes at most `IOV_MAX` buffers: the rest are not part of this read.
    let len = bufs.len().min(sys::IOV_MAX);
    let bufs = &mut bufs[..len];
    let Some(first) = bufs.iter_mut().find(|b| !b.is_empty()) else {
        return Ok(0);
    };
    if guard.has_leftover() {
        // SAFETY: the kept bytes' copy writes only bytes.
        return Ok(guard.take_leftover_into(unsafe { as_uninit(first) }));
    }
    if let Some(end) = guard.take_end() {
        return end;
    }
    sys::recv_vectored(fd.as_raw_fd(), bufs)
}

/// As [`try_write_in_lane`], from several buffers in order (`sendmsg`): what the socket
/// takes at once, possibly short.
///
/// ```
/// use std::io::IoSlice;
/// use ringsteal_rt::io::{try_write_vectored_in_lane, Lane};
/// use ringsteal_rt::op::SharedFd;
///
/// let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
/// let (a, lane) = (SharedFd::new(a.into()), Lane::new());
/// let bufs = [IoSlice::new(b"head "), IoSlice::new(b"body")];
/// assert_eq!(try_write_vectored_in_lane(&a, &lane, &bufs).unwrap(), 9);
/// let mut got = [0; 9];
/// std::io::Read::read_exact(&mut &b, &mut got).unwrap();
/// assert_eq!(&got, b"head body");
/// ```
pub fn try_write_vectored_in_lane(
    fd: &SharedFd,
    write_lane: &Lane,
    bufs: &[IoSlice<'_>],
) -> io::Result<usize> {
    let Some(_guard) = write_lane.try_acquire() else {
        return Err(in_flight("write"));
    };
    let bufs = &bufs[..bufs.len().min(sys::IOV_MAX)];
    if bufs.iter().all(|b| b.is_empty()) {
        return Ok(0);
    }
    sys::send_vectored(fd.as_raw_fd(), bufs)
}

/// Receives one datagram into `buf` without waiting, with the address it came from (a
/// datagram longer than `buf` is cut to it, as `recv_from` does). `WouldBlock` if none is
/// queued. Datagram sockets keep no lanes: each datagram goes whole to one receiver.
///
/// ```
/// use ringsteal_rt::io::{try_recv_from, try_send_to};
/// use ringsteal_rt::op::SharedFd;
///
/// let (a, b) = std::os::unix::net::UnixDatagram::pair().unwrap();
/// let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
/// let mut buf = [0; 8];
/// let err = try_recv_from(&b, &mut buf).unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock);
/// assert_eq!(try_send_to(&a, b"dgram", None).unwrap(), 5);
/// let (n, from) = try_recv_from(&b, &mut buf).unwrap();
/// assert_eq!(&buf[..n], b"dgram");
/// assert!(from.is_empty(), "the peer of a pair has no address to give");
/// ```
pub fn try_recv_from(fd: &SharedFd, buf: &mut [u8]) -> io::Result<(usize, SockAddr)> {
    // SAFETY: `recvfrom` writes only bytes.
    try_recv_from_uninit(fd, unsafe { as_uninit(buf) })
}

/// As [`try_recv_from`], into memory that need not be initialised (for example a
/// `bytes::BufMut`'s `chunk_mut`): on `Ok((n, _))` the first `n` bytes of `dst` are
/// initialised. Nothing in `dst` is read.
///
/// ```
/// use std::mem::MaybeUninit;
/// use ringsteal_rt::io::{try_recv_from_uninit, try_send_to};
/// use ringsteal_rt::op::SharedFd;
///
/// let (a, b) = std::os::unix::net::UnixDatagram::pair().unwrap();
/// let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
/// try_send_to(&a, b"one", None).unwrap();
/// let mut buf = [MaybeUninit::<u8>::uninit(); 8];
/// assert_eq!(try_recv_from_uninit(&b, &mut buf).unwrap().0, 3);
/// ```
pub fn try_recv_from_uninit(
    fd: &SharedFd,
    dst: &mut [MaybeUninit<u8>],
) -> io::Result<(usize, SockAddr)> {
    let mut from = SockAddr::empty();
    let n = sys::recv_from(fd.as_raw_fd(), dst, &mut from, false)?;
    Ok((n, from))
}

/// As [`try_recv_from`], but the datagram stays queued (`MSG_PEEK`): the next receive gets it
/// again.
///
/// ```
/// use ringsteal_rt::io::{try_peek_from, try_recv_from, try_send_to};
/// use ringsteal_rt::op::SharedFd;
///
/// let (a, b) = std::os::unix::net::UnixDatagram::pair().unwrap();
/// let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
/// try_send_to(&a, b"once", None).unwrap();
/// let mut buf = [0; 8];
/// assert_eq!(try_peek_from(&b, &mut buf).unwrap().0, 4);
/// assert_eq!(try_recv_from(&b, &mut buf).unwrap().0, 4, "still there");
/// ```
pub fn try_peek_from(fd: &SharedFd, buf: &mut [u8]) -> io::Result<(usize, SockAddr)> {
    // SAFETY: `recvfrom` writes only bytes.
    let dst = unsafe { as_uninit(buf) };
    let mut from = SockAddr::empty();
    let n = sys::recv_from(fd.as_raw_fd(), dst, &mut from, true)?;
    Ok((n, from))
}

/// Sends `buf` as one datagram to `to` (the connected address if `None`) without waiting.
/// `WouldBlock` if the socket's send buffer is full.
///
/// ```
/// use ringsteal_rt::io::try_send_to;
/// use ringsteal_rt::op::{SharedFd, SockAddr};
///
/// let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
/// let tx = SharedFd::new(std::net::UdpSocket::bind("127.0.0.1:0").unwrap().into());
/// let to = SockAddr::from_std(&rx.local_addr().unwrap());
/// assert_eq!(try_send_to(&tx, b"hello", Some(&to)).unwrap(), 5);
/// let mut buf = [0; 8];
/// assert_eq!(rx.recv(&mut buf).unwrap(), 5);
/// ```
pub fn try_send_to(fd: &SharedFd, buf: &[u8], to: Option<&SockAddr>) -> io::Result<usize> {
    sys::send_to(fd.as_raw_fd(), buf, to)
}

/// `buf` viewed as possibly uninitialised bytes, for the system-call helpers (`sys.rs`),
/// which take that type.
///
/// # Safety
/// Whatever writes through the result must write only initialised bytes (a copy, or the
/// kernel's `recv`), so that `buf` stays initialised.
unsafe fn as_uninit(buf: &mut [u8]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: `MaybeUninit<u8>` has `u8`'s layout; the caller keeps the bytes initialised.
    unsafe { &mut *(buf as *mut [u8] as *mut [MaybeUninit<u8>]) }
}

fn in_flight(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::WouldBlock,
        format!("a {what} of this stream is in flight"),
    )
}

#[cfg(test)]
mod tests {
    use std::io::{ErrorKind, Read, Write};
    use std::os::unix::net::UnixStream;

    use super::*;

    fn pair() -> (SharedFd, UnixStream) {
        let (a, b) = UnixStream::pair().unwrap();
        (SharedFd::new(a.into()), b)
    }

    #[test]
    #[cfg_attr(miri, ignore = "send and recv are system calls Miri does not model")]
    fn kept_bytes_come_before_the_socket_and_a_held_lane_would_block() {
        let (a, mut b) = pair();
        let lane = Lane::new();
        b.write_all(b"socket").unwrap();
        lane.try_acquire().unwrap().unread(b"kept");
        let mut buf = [0; 16];
        assert_eq!(try_read_in_lane(&a, &lane, &mut buf).unwrap(), 4);
        assert_eq!(&buf[..4], b"kept");
        let held = lane.try_acquire().unwrap();
        let err = try_read_in_lane(&a, &lane, &mut buf).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::WouldBlock);
        drop(held);
        assert_eq!(try_read_in_lane(&a, &lane, &mut buf).unwrap(), 6);
        assert_eq!(&buf[..6], b"socket");
        assert!(!lane.is_held(), "the call lets the lane go");
    }

    #[test]
    #[cfg_attr(miri, ignore = "send and recv are system calls Miri does not model")]
    fn the_end_of_the_stream_reads_zero_and_an_empty_buffer_reads_nothing() {
        let (a, mut b) = pair();
        let lane = Lane::new();
        b.write_all(b"x").unwrap();
        assert_eq!(try_read_in_lane(&a, &lane, &mut []).unwrap(), 0);
        drop(b);
        let mut buf = [0; 4];
        assert_eq!(
            try_read_in_lane(&a, &lane, &mut buf).unwrap(),
            1,
            "x is still there"
        );
        assert_eq!(try_read_in_lane(&a, &lane, &mut buf).unwrap(), 0);
    }

    #[test]
    #[cfg_attr(miri, ignore = "send and recv are system calls Miri does not model")]
    fn a_full_socket_would_block_and_a_closed_peer_is_an_error() {
        let (a, b) = pair();
        let lane = Lane::new();
        let chunk = vec![1u8; 64 * 1024];
        let mut sent = 0;
        let err = loop {
            match try_write_in_lane(&a, &lane, &chunk) {
                Ok(n) => sent += n,
                Err(e) => break e,
            }
            assert!(sent < 1 << 30, "the socket never filled");
        };
        assert_eq!(err.kind(), ErrorKind::WouldBlock);
        let mut drained = vec![0; sent];
        (&b).read_exact(&mut drained).unwrap();
        drop(b);
        let err = try_write_in_lane(&a, &lane, b"late").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::BrokenPipe, "no SIGPIPE, an error");
    }
}
