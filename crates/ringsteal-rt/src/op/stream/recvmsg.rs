//! Multishot `IORING_OP_RECVMSG` into provided buffers (6.0): a stream of datagrams, each
//! with its source address, from one SQE; and its fallback, one single-shot `recvmsg` into a
//! heap buffer at a time. The stream's policy is `receiver.rs`'s.
//!
//! A multishot recvmsg writes, at the start of each buffer, an `io_uring_recvmsg_out`
//! header, then `msg_namelen` bytes of room for the address, then `msg_controllen` bytes of
//! room for control data (none asked here), then the payload. The fallback lays its heap
//! buffer out the same way (it writes the header itself), so one parser ([`Datagram`])
//! serves both.

use std::io;
use std::mem::size_of;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::ops::{Deref, Range};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::task::{Context, Poll};

use ringsteal_uring::abi::io_uring_recvmsg_out;
use ringsteal_uring::{io_uring_sqe, opcode};

use super::cell::Source;
use super::receiver::{Event, ReceiveSource, Receiver};
use super::recv::Received;
use super::recv_group;
use crate::buf::provided::BufGroup;
use crate::buf::RecvBuf;
use crate::op::SharedFd;
use crate::shard::Shard;

/// Room for the source address: any socket address fits.
const NAME_LEN: usize = size_of::<libc::sockaddr_storage>();
/// Where the payload starts in a buffer: the header, then the address room.
const PAYLOAD_AT: usize = size_of::<io_uring_recvmsg_out>() + NAME_LEN;

/// Receives datagrams from the socket `fd` as a stream: one multishot `IORING_OP_RECVMSG`
/// selecting from the polling shard's provided buffers, re-armed whenever the kernel ends
/// it, or single-shot `recvmsg` into heap buffers where the runtime has no multishot
/// receive or buffer rings (or its buffers are too small to hold the 144 bytes of header
/// and address room). Each item is one [`Datagram`], with its source address; a datagram
/// larger than the buffer's payload room (`Builder::recv_buffers` length minus 144, also
/// while the shard's provided buffers have run out and datagrams come in heap buffers; the
/// whole length on the fallbacks) is truncated and says so ([`Datagram::is_truncated`]).
/// Errors end the stream.
///
/// ```
/// use std::net::UdpSocket;
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
///     let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
///     tx.send_to(b"datagram", rx.local_addr().unwrap()).unwrap();
///     let mut stream = op::recvmsg_multishot(&SharedFd::new(rx.into()));
///     let d = stream.next().await.unwrap().unwrap();
///     assert_eq!(&d[..], b"datagram");
///     assert_eq!(d.source(), Some(tx.local_addr().unwrap()));
/// });
/// ```
pub fn recvmsg_multishot(fd: &SharedFd) -> RecvMsgStream {
    RecvMsgStream(Receiver::new(fd))
}

/// The stream of [`recvmsg_multishot`]: `poll_next`, or `next().await`. It holds the
/// socket's descriptor (a clone of the `SharedFd`) while it lives: the socket stays open
/// until the stream is dropped too.
///
/// ```
/// use std::os::unix::net::UnixDatagram;
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (rx, tx) = UnixDatagram::pair().unwrap();
///     let mut stream: op::RecvMsgStream = op::recvmsg_multishot(&SharedFd::new(rx.into()));
///     tx.send(b"a").unwrap();
///     tx.send(b"bc").unwrap();
///     assert_eq!(stream.next().await.unwrap().unwrap().payload(), b"a");
///     assert_eq!(stream.next().await.unwrap().unwrap().payload(), b"bc");
/// });
/// ```
#[derive(Debug)]
pub struct RecvMsgStream(Receiver<RecvMsgSource>);

impl RecvMsgStream {
    /// The next datagram (or the error that ended the stream).
    pub fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<Datagram>>> {
        self.0.poll_next(cx)
    }

    /// The next datagram (or the error that ended the stream).
    pub async fn next(&mut self) -> Option<io::Result<Datagram>> {
        std::future::poll_fn(|cx| self.poll_next(cx)).await
    }

    /// Receive requests submitted so far: 1 for a multishot receive the kernel never ended,
    /// one per datagram on the single-shot fallback.
    pub fn requests_submitted(&self) -> u64 {
        self.0.requests_submitted()
    }
}

/// One received datagram: its payload (what it dereferences to), its source address and
/// its `recvmsg` flags. Holds the buffer it arrived in (a provided buffer goes back to its
/// ring when this is dropped).
///
/// ```
/// # use std::net::UdpSocket;
/// # use ringsteal_rt::op::{self, SharedFd};
/// # let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// # rt.block_on(async {
/// # let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
/// # let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
/// # tx.send_to(b"hi", rx.local_addr().unwrap()).unwrap();
/// # let mut stream = op::recvmsg_multishot(&SharedFd::new(rx.into()));
/// let d: op::Datagram = stream.next().await.unwrap().unwrap();
/// assert_eq!(d.payload(), b"hi");
/// assert!(!d.is_truncated());
/// assert_eq!(d.source_bytes().len(), std::mem::size_of::<libc::sockaddr_in>());
/// # });
/// ```
pub struct Datagram {
    buf: RecvBuf,
    name: Range<usize>,
    payload: Range<usize>,
    flags: u32,
}

impl Datagram {
    /// Parses a buffer laid out as a multishot recvmsg fills it.
    fn parse(buf: RecvBuf) -> io::Result<Self> {
        if buf.len() < PAYLOAD_AT {
            return Err(io::Error::other(
                "a datagram buffer shorter than its header",
            ));
        }
        // SAFETY: the buffer holds at least a header; `read_unaligned` needs no alignment.
        let out = unsafe { buf.as_ptr().cast::<io_uring_recvmsg_out>().read_unaligned() };
        let name_at = size_of::<io_uring_recvmsg_out>();
        let name = name_at..name_at + (out.namelen as usize).min(NAME_LEN);
        let payload =
            PAYLOAD_AT..PAYLOAD_AT + (out.payloadlen as usize).min(buf.len() - PAYLOAD_AT);
        Ok(Self {
            buf,
            name,
            payload,
            flags: out.flags,
        })
    }

    /// The datagram's bytes.
    pub fn payload(&self) -> &[u8] {
        &self.buf[self.payload.clone()]
    }

    /// The source address, if it is an IPv4 or IPv6 one.
    pub fn source(&self) -> Option<SocketAddr> {
        parse_inet(self.source_bytes())
    }

    /// The source address as the kernel wrote it (a `sockaddr` of any family, e.g. a Unix
    /// socket path), possibly empty (a connected socket's peer need not be reported).
    pub fn source_bytes(&self) -> &[u8] {
        &self.buf[self.name.clone()]
    }

    /// The `recvmsg` flags (`MSG_TRUNC`, ...).
    pub fn flags(&self) -> u32 {
        self.flags
    }

    /// True if the datagram was larger than the buffer and its tail was lost
    /// (`MSG_TRUNC`).
    pub fn is_truncated(&self) -> bool {
        self.flags & libc::MSG_TRUNC as u32 != 0
    }
}

impl Deref for Datagram {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.payload()
    }
}

impl std::fmt::Debug for Datagram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Datagram")
            .field("len", &self.payload.len())
            .field("source", &self.source())
            .field("flags", &self.flags)
            .finish()
    }
}

/// An IPv4 or IPv6 socket address from `sockaddr` bytes.
fn parse_inet(b: &[u8]) -> Option<SocketAddr> {
    let family = i32::from(u16::from_ne_bytes(b.get(..2)?.try_into().ok()?));
    match family {
        libc::AF_INET if b.len() >= size_of::<libc::sockaddr_in>() => {
            // SAFETY: long enough for a sockaddr_in; `read_unaligned` needs no alignment.
            let a = unsafe { b.as_ptr().cast::<libc::sockaddr_in>().read_unaligned() };
            let ip = Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
            Some(SocketAddrV4::new(ip, u16::from_be(a.sin_port)).into())
        }
        libc::AF_INET6 if b.len() >= size_of::<libc::sockaddr_in6>() => {
            // SAFETY: long enough for a sockaddr_in6; `read_unaligned` needs no alignment.
            let a = unsafe { b.as_ptr().cast::<libc::sockaddr_in6>().read_unaligned() };
            let ip = Ipv6Addr::from(a.sin6_addr.s6_addr);
            let port = u16::from_be(a.sin6_port);
            Some(SocketAddrV6::new(ip, port, a.sin6_flowinfo, a.sin6_scope_id).into())
        }
        _ => None,
    }
}

/// The data of one recvmsg request: the msghdr the SQE points at, and for the heap form
/// the buffer, address storage and iovec it points at in turn.
pub(crate) struct RecvMsgSource {
    fd: SharedFd,
    msg: libc::msghdr,
    iov: libc::iovec,
    form: Form,
}

enum Form {
    /// Multishot, selecting from a shard's buffer group.
    Provided(Arc<BufGroup>),
    /// One recvmsg into a heap buffer laid out as a provided one.
    Heap(Vec<u8>),
}

// SAFETY: the msghdr and iovec point only into the source's own heap buffer (or nowhere);
// they are plain data otherwise.
unsafe impl Send for RecvMsgSource {}

// SAFETY: the SQE points at `msg`, which points into `buf`/`iov` (heap form) or at nothing
// (provided form: only the lengths of the address and control room are read); all of it is
// owned by the source, which stays in its cell until the CQE without F_MORE.
unsafe impl Source for RecvMsgSource {
    type Item = Received;

    fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn prepare(&mut self) -> io_uring_sqe {
        // SAFETY: an all-zero msghdr is valid (null pointers, zero lengths).
        self.msg = unsafe { std::mem::zeroed() };
        self.msg.msg_namelen = NAME_LEN as libc::socklen_t;
        let fd = self.fd.as_raw_fd();
        match &mut self.form {
            Form::Provided(group) => {
                let group = group.id();
                opcode::recvmsg(fd, &mut self.msg, 0)
                    .with_ioprio(ringsteal_uring::abi::IORING_RECV_MULTISHOT)
                    .with_buf_group(group)
            }
            Form::Heap(buf) => {
                // SAFETY: both offsets lie within the capacity (at least PAYLOAD_AT).
                unsafe {
                    let base = buf.as_mut_ptr();
                    self.msg.msg_name = base.add(size_of::<io_uring_recvmsg_out>()).cast();
                    self.iov = libc::iovec {
                        iov_base: base.add(PAYLOAD_AT).cast(),
                        iov_len: buf.capacity() - PAYLOAD_AT,
                    };
                }
                self.msg.msg_iov = &mut self.iov;
                self.msg.msg_iovlen = 1;
                opcode::recvmsg(fd, &mut self.msg, 0)
            }
        }
    }

    unsafe fn item(&self, res: i32, flags: u32) -> Received {
        let buf = match &self.form {
            // SAFETY: a CQE of a request that selected from `group` on its own ring, once.
            Form::Provided(group) => unsafe { group.take(res, flags) },
            Form::Heap(_) => None,
        };
        Received::new(res, buf)
    }

    unsafe fn last(&mut self, res: i32, flags: u32) -> Received {
        let Form::Heap(buf) = &mut self.form else {
            // SAFETY: forwarded from the caller.
            return unsafe { self.item(res, flags) };
        };
        if res < 0 {
            return Received::new(res, None);
        }
        let mut data = std::mem::take(buf);
        let out = io_uring_recvmsg_out {
            namelen: self.msg.msg_namelen,
            controllen: 0,
            payloadlen: res as u32,
            flags: self.msg.msg_flags as u32,
        };
        let len = (PAYLOAD_AT + res as usize).min(data.capacity());
        // SAFETY: the capacity holds the header; the kernel initialised the address room
        // and `res` payload bytes (the header is written here, the room's unused tail was
        // zeroed when the buffer was made).
        unsafe {
            data.as_mut_ptr()
                .cast::<io_uring_recvmsg_out>()
                .write_unaligned(out);
            data.set_len(len);
        }
        // The stream sees a heap datagram as data, whatever its size (an empty datagram is
        // not an end of file).
        Received::new(len as i32, Some(RecvBuf::heap(data)))
    }
}

impl RecvMsgSource {
    /// A single-shot request into a heap buffer with `room` bytes for the payload.
    fn with_heap(fd: SharedFd, room: usize) -> Self {
        // The header and address room are zeroed (and the Vec emptied again), so that the
        // bytes `last` exposes are initialised whatever the kernel wrote.
        let mut buf = Vec::with_capacity(PAYLOAD_AT + room);
        buf.resize(PAYLOAD_AT, 0);
        buf.clear();
        Self::with_form(fd, Form::Heap(buf))
    }

    fn with_form(fd: SharedFd, form: Form) -> Self {
        RecvMsgSource {
            fd,
            // SAFETY: all-zero msghdr and iovec are valid; `prepare` fills them.
            msg: unsafe { std::mem::zeroed() },
            iov: libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            },
            form,
        }
    }
}

impl ReceiveSource for RecvMsgSource {
    type Out = Datagram;

    fn for_shard(fd: SharedFd, shard: &Shard) -> Self {
        let len = shard.shared.config.recv_buf_len as usize;
        match recv_group(shard) {
            Some(group) if len > PAYLOAD_AT => Self::with_form(fd, Form::Provided(group)),
            // The fallback: `len` bytes of payload room.
            _ => Self::with_heap(fd, len),
        }
    }

    fn heap(fd: SharedFd, shard: &Shard) -> Self {
        // Short of provided buffers: the room a provided buffer has (the header and address
        // take the first bytes of its `len`), so that whether a datagram is cut does not
        // depend on which path received it.
        let len = shard.shared.config.recv_buf_len as usize;
        Self::with_heap(fd, len.saturating_sub(PAYLOAD_AT).max(1))
    }

    fn event(item: Received) -> Event<Datagram> {
        let (res, buf) = item.into_parts();
        match buf {
            Some(buf) if res >= 0 => match Datagram::parse(buf) {
                Ok(d) => Event::Data(d),
                Err(e) => Event::Failed(e),
            },
            _ if res == -libc::ENOBUFS => Event::NoBuffers,
            _ if res < 0 => Event::Failed(io::Error::from_raw_os_error(-res)),
            _ => Event::Failed(io::Error::other(
                "a recvmsg completed with data but named no buffer",
            )),
        }
    }

    fn group(self) -> Option<Arc<BufGroup>> {
        match self.form {
            Form::Provided(group) => Some(group),
            Form::Heap(_) => None,
        }
    }
}
