//! [`UnixDatagram`]: a Unix-domain datagram socket.

use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use ringsteal_rt::buf::{BufResult, IoBuf, IoBufMut};
use ringsteal_rt::io::{ReadinessCache, ReadyAgain};
use ringsteal_rt::op::{self, SharedFd, SockAddr};

use super::SocketAddr;
use crate::kept_datagrams::{self, KeptDatagrams};
use crate::sockopt;
use crate::stream::{init_bytes, into_owned};

/// A Unix-domain datagram socket. Sends and receives are io_uring requests (`SEND`, `SENDMSG`
/// for the addressed form, `RECVMSG` for every receive) and take `&self`. As for
/// [`UdpSocket`](crate::UdpSocket), receives are cancel-safe: a datagram taken by a receive
/// whose future was dropped is kept for the next `recv`, `recv_from`, `peek` or `try_recv`.
///
/// ```
/// use ringsteal_net::UnixDatagram;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = UnixDatagram::pair()?;
///     a.send(b"datagram".to_vec()).await.0?;
///     let (res, buf) = b.recv(Vec::with_capacity(64)).await;
///     assert_eq!(&buf[..res?], b"datagram");
///
///     let name = format!("\0ringsteal-doc-dgram-{}", std::process::id());
///     let server = UnixDatagram::bind(&name)?;
///     let client = UnixDatagram::unbound()?;
///     client.send_to(b"hi".to_vec(), &name).await.0?;
///     let (res, buf) = server.recv_from(Vec::with_capacity(8)).await;
///     let (n, from) = res?;
///     assert_eq!(&buf[..n], b"hi");
///     assert!(from.is_unnamed());
///     Ok::<(), std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct UnixDatagram {
    /// Declared before `fd`: the cancels of its polls are asked for before the descriptor
    /// closes.
    readiness: ReadinessCache,
    fd: SharedFd,
    kept: Arc<KeptDatagrams>,
}

impl UnixDatagram {
    fn from_fd(fd: std::os::fd::OwnedFd) -> Self {
        Self {
            readiness: ReadinessCache::new(),
            fd: SharedFd::new(fd),
            kept: Arc::default(),
        }
    }

    /// A socket bound to `path` (a leading NUL byte names an abstract socket).
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixDatagram> {
        let addr = SockAddr::unix(path)?;
        let fd = op::socket_now(libc::AF_UNIX, libc::SOCK_DGRAM, 0)?;
        sockopt::bind(&fd, &addr)?;
        Ok(Self::from_fd(fd))
    }

    /// A socket with no address. It can send, but nobody can answer it: a receiver sees an
    /// unnamed sender, and Linux does not give the socket a name when it connects or sends
    /// (bind to a name, or use [`pair`](Self::pair), for replies).
    pub fn unbound() -> io::Result<UnixDatagram> {
        Ok(Self::from_fd(op::socket_now(
            libc::AF_UNIX,
            libc::SOCK_DGRAM,
            0,
        )?))
    }

    /// Two connected, unnamed sockets (`socketpair`).
    pub fn pair() -> io::Result<(UnixDatagram, UnixDatagram)> {
        let (a, b) = sockopt::unix_pair(libc::SOCK_DGRAM)?;
        Ok((Self::from_fd(a), Self::from_fd(b)))
    }

    /// Sets the default destination (`connect(2)`: it never blocks for a datagram socket).
    pub fn connect(&self, path: impl AsRef<Path>) -> io::Result<()> {
        let addr = SockAddr::unix(path)?;
        // SAFETY: the kernel reads `len` bytes of the address storage.
        if unsafe { libc::connect(self.fd.as_raw_fd(), addr.as_ptr(), addr.len()) } == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// Sends `buf` to the connected address; waits while the receiver's queue is full (see
    /// [`send_to`](Self::send_to)).
    pub async fn send<B: IoBuf>(&self, buf: B) -> BufResult<usize, B> {
        self.send_when_room(buf, None).await
    }

    /// Receives one datagram into `buf` (from its start; the rest of a longer datagram is
    /// discarded).
    pub async fn recv<B: IoBufMut>(&self, buf: B) -> BufResult<usize, B> {
        let (res, buf) = kept_datagrams::recv_from(&self.fd, &self.kept, buf, false).await;
        (res.map(|(n, _)| n), buf)
    }

    /// Sends `buf` to the socket at `path`. While the receiver's queue is full it waits, as
    /// tokio's does, and sends once there is room: a non-blocking `sendto(2)`, retried when
    /// the socket polls writable or after a pause, 1 ms doubling to 64 ms, whichever comes
    /// first (a socket's poll speaks for its connected peer's queue only, and an unconnected
    /// one polls writable at once), so a send may go out up to 64 ms after room appears
    /// while the queue stays full. [`send`](Self::send), to the connected peer, is retried
    /// as soon as the peer has room.
    ///
    /// Not an io_uring send: when the receiver's queue is full, the kernel copies the
    /// payload out of the request before it finds no room, and io_uring's retry then sent
    /// what was left of it, an empty datagram, reported as 0 bytes sent (Linux 6.18: a
    /// review reproduced it with a bare ring).
    pub async fn send_to<B: IoBuf>(&self, buf: B, path: impl AsRef<Path>) -> BufResult<usize, B> {
        match SockAddr::unix(path) {
            Ok(addr) => self.send_when_room(buf, Some(&addr)).await,
            Err(e) => (Err(e), buf),
        }
    }

    /// One datagram of `buf` to `to` (the connected address if `None`), waiting for room.
    async fn send_when_room<B: IoBuf>(&self, buf: B, to: Option<&SockAddr>) -> BufResult<usize, B> {
        let mut again = ReadyAgain::new(libc::POLLOUT);
        if to.is_some() {
            // A connected socket polls writable only when its peer has room, which says
            // nothing of another address's queue.
            again = again.poll_may_miss();
        }
        loop {
            match self.datagram_io().try_send_to(init_bytes(&buf), to) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                done => return (done, buf),
            }
            if let Err(e) = again.wait(&self.fd).await {
                return (Err(e), buf);
            }
        }
    }

    /// Receives one datagram into `buf` and the sender's address.
    pub async fn recv_from<B: IoBufMut>(&self, buf: B) -> BufResult<(usize, SocketAddr), B> {
        let (res, buf) = kept_datagrams::recv_from(&self.fd, &self.kept, buf, false).await;
        (res.map(|(n, from)| (n, SocketAddr::from_raw(from))), buf)
    }

    /// Copies the next datagram into `buf` without taking it from the queue, with the
    /// sender's address (`MSG_PEEK`), as tokio's `peek_from`.
    ///
    /// ```
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let (a, b) = ringsteal_net::UnixDatagram::pair()?;
    ///     a.send(b"peeked".to_vec()).await.0?;
    ///     let (res, buf) = b.peek_from(Vec::with_capacity(8)).await;
    ///     let (n, from) = res?;
    ///     assert_eq!(&buf[..n], b"peeked");
    ///     assert!(from.is_unnamed());
    ///     let (res, buf) = b.recv(Vec::with_capacity(8)).await;
    ///     assert_eq!(&buf[..res?], b"peeked", "still queued after the peek");
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub async fn peek_from<B: IoBufMut>(&self, buf: B) -> BufResult<(usize, SocketAddr), B> {
        let (res, buf) = kept_datagrams::recv_from(&self.fd, &self.kept, buf, true).await;
        (res.map(|(n, from)| (n, SocketAddr::from_raw(from))), buf)
    }

    /// Copies the next datagram into `buf` without taking it from the queue (`MSG_PEEK`).
    ///
    /// ```
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let (a, b) = ringsteal_net::UnixDatagram::pair()?;
    ///     a.send(b"twice".to_vec()).await.0?;
    ///     let (res, buf) = b.peek(Vec::with_capacity(8)).await;
    ///     assert_eq!(&buf[..res?], b"twice");
    ///     let (res, buf) = b.recv(Vec::with_capacity(8)).await;
    ///     assert_eq!(&buf[..res?], b"twice");
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub async fn peek<B: IoBufMut>(&self, buf: B) -> BufResult<usize, B> {
        let (res, buf) = kept_datagrams::recv_from(&self.fd, &self.kept, buf, true).await;
        (res.map(|(n, _)| n), buf)
    }

    datagram_readiness_methods!("    let (a, b) = ringsteal_net::UnixDatagram::pair()?;\n");

    /// Receives one datagram into `buf` without waiting, with the sender's address, as
    /// tokio's `try_recv_from`. `WouldBlock` if none is queued.
    ///
    /// ```
    /// let (a, b) = ringsteal_net::UnixDatagram::pair().unwrap();
    /// a.try_send(b"hi").unwrap();
    /// let mut buf = [0; 8];
    /// let (n, from) = b.try_recv_from(&mut buf).unwrap();
    /// assert_eq!(&buf[..n], b"hi");
    /// assert!(from.is_unnamed(), "the peer of a pair has no name");
    /// ```
    pub fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let (n, from) = self.datagram_io().try_recv_from(buf, false)?;
        Ok((n, SocketAddr::from_raw(from)))
    }

    /// Polls to receive one datagram into `buf`, with the sender's address, as tokio's
    /// `poll_recv_from` (tokio's fills a `ReadBuf`; this one takes a slice and gives the
    /// length, as [`try_recv_from`](Self::try_recv_from) does). Only the task of the latest
    /// call is woken, as in tokio.
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use ringsteal_net::UnixDatagram;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let name = format!("\0ringsteal-doc-poll-send-to-{}", std::process::id());
    ///     let server = UnixDatagram::bind(&name)?;
    ///     let client = UnixDatagram::unbound()?;
    ///     poll_fn(|cx| client.poll_send_to(cx, b"hello", &name)).await?;
    ///     let mut buf = [0; 8];
    ///     let (n, from) = poll_fn(|cx| server.poll_recv_from(cx, &mut buf)).await?;
    ///     assert_eq!(&buf[..n], b"hello");
    ///     assert!(from.is_unnamed(), "the client never bound a name");
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        let (n, from) = ready!(self.datagram_io().poll_recv_from(cx, buf, false))?;
        Poll::Ready(Ok((n, SocketAddr::from_raw(from))))
    }

    /// Polls to send `buf` as one datagram to the socket at `path`, as tokio's
    /// `poll_send_to` (see [`poll_recv_from`](Self::poll_recv_from) for an example).
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        path: impl AsRef<Path>,
    ) -> Poll<io::Result<usize>> {
        let to = SockAddr::unix(path)?;
        self.datagram_io().poll_send_to(cx, buf, Some(&to))
    }

    /// As [`try_recv_from`](Self::try_recv_from), into the next chunk of `buf`, which it
    /// then advances, as tokio's `try_recv_buf_from` (feature `bytes`): a `Vec<u8>` or
    /// `BytesMut` with no room left grows first (by as little as 64 bytes: reserve room for
    /// the longest datagram you expect, or its tail is discarded).
    ///
    /// ```
    /// let (a, b) = ringsteal_net::UnixDatagram::pair().unwrap();
    /// a.try_send(b"hi").unwrap();
    /// let mut buf = Vec::with_capacity(64);
    /// let (n, from) = b.try_recv_buf_from(&mut buf).unwrap();
    /// assert_eq!((n, &buf[..]), (2, &b"hi"[..]));
    /// assert!(from.is_unnamed(), "the peer of a pair has no name");
    /// ```
    #[cfg(feature = "bytes")]
    pub fn try_recv_buf_from<B: bytes::BufMut>(
        &self,
        buf: &mut B,
    ) -> io::Result<(usize, SocketAddr)> {
        let (n, from) = crate::recv_buf::try_recv_buf(self.datagram_io(), buf)?;
        Ok((n, SocketAddr::from_raw(from)))
    }

    /// As [`try_recv_buf_from`](Self::try_recv_buf_from), waiting for a datagram, as
    /// tokio's `recv_buf_from` (feature `bytes`; cancel-safe, as
    /// [`UdpSocket::recv_buf_from`](crate::UdpSocket::recv_buf_from)).
    ///
    /// ```
    /// use ringsteal_net::UnixDatagram;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let (a, b) = UnixDatagram::pair()?;
    ///     let mut buf = Vec::with_capacity(64);
    ///     let receive = b.recv_buf_from(&mut buf);
    ///     a.send(b"hi".to_vec()).await.0?;
    ///     let (n, from) = receive.await?;
    ///     assert_eq!((n, &buf[..]), (2, &b"hi"[..]));
    ///     assert!(from.is_unnamed(), "the peer of a pair has no name");
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    #[cfg(feature = "bytes")]
    pub async fn recv_buf_from<B: bytes::BufMut>(
        &self,
        buf: &mut B,
    ) -> io::Result<(usize, SocketAddr)> {
        crate::recv_buf::until_received(|| self.try_recv_buf_from(buf), || self.readable()).await
    }

    /// Sends `buf` as one datagram to the socket at `path` without waiting, as tokio's
    /// `try_send_to`. `WouldBlock` if the send buffer is full.
    ///
    /// ```
    /// use ringsteal_net::UnixDatagram;
    ///
    /// let name = format!("\0ringsteal-doc-try-send-to-{}", std::process::id());
    /// let server = UnixDatagram::bind(&name).unwrap();
    /// let client = UnixDatagram::unbound().unwrap();
    /// assert_eq!(client.try_send_to(b"hello", &name).unwrap(), 5);
    /// let mut buf = [0; 8];
    /// assert_eq!(server.try_recv(&mut buf).unwrap(), 5);
    /// ```
    pub fn try_send_to(&self, buf: &[u8], path: impl AsRef<Path>) -> io::Result<usize> {
        self.datagram_io()
            .try_send_to(buf, Some(&SockAddr::unix(path)?))
    }

    /// The datagrams arriving on this socket as a stream, from one multishot receive (see
    /// [`UdpSocket::recv_stream`](crate::UdpSocket::recv_stream)). A Unix sender's address
    /// is in [`Datagram::source_bytes`](crate::Datagram::source_bytes) (a `sockaddr_un`,
    /// empty for an unnamed sender).
    ///
    /// ```
    /// use ringsteal_net::UnixDatagram;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let (a, b) = UnixDatagram::pair()?;
    ///     let mut datagrams = b.recv_stream();
    ///     a.send(b"hello".to_vec()).await.0?;
    ///     assert_eq!(datagrams.next().await.unwrap()?.payload(), b"hello");
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn recv_stream(&self) -> crate::RecvMsgStream {
        op::recvmsg_multishot(&self.fd)
    }

    /// Shuts down the receiving side, the sending side or both (`shutdown(2)`), as tokio's
    /// `UnixDatagram::shutdown`: a `recv` then returns `Ok(0)` at once, one already
    /// waiting included (tokio's spins there: the kernel answers a non-blocking receive
    /// with `EAGAIN` while reporting the socket readable), and a send fails with
    /// `BrokenPipe`. A [`recv_stream`](Self::recv_stream) yields nothing more after a
    /// shutdown of the receiving side, and on kernels without multishot receive it yields
    /// empty datagrams: stop using it then.
    ///
    /// ```
    /// use std::net::Shutdown;
    /// use ringsteal_net::UnixDatagram;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let (a, _b) = UnixDatagram::pair()?;
    ///     a.shutdown(Shutdown::Write)?;
    ///     let (res, _) = a.send(b"late".to_vec()).await;
    ///     assert_eq!(res.unwrap_err().kind(), std::io::ErrorKind::BrokenPipe);
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn shutdown(&self, how: std::net::Shutdown) -> io::Result<()> {
        sockopt::shutdown(self, how)
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        sockopt::local(self).map(SocketAddr::from_raw)
    }

    /// The connected address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        sockopt::peer(self).map(SocketAddr::from_raw)
    }

    /// Adopts a std socket. Never fails today; returns `io::Result` as tokio's does.
    pub fn from_std(socket: std::os::unix::net::UnixDatagram) -> io::Result<UnixDatagram> {
        Ok(Self::from_fd(socket.into()))
    }

    /// The std socket; a duplicate descriptor if a request still holds it: a cancelled one,
    /// or the request of a receive stream, which goes on taking datagrams from the socket
    /// (they are then lost to the std socket) until it is dropped: drop receive streams
    /// first.
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixDatagram> {
        into_owned(self.fd).map(Into::into)
    }
}

impl_as_fd!(UnixDatagram, |s| s.fd.as_raw_fd());
take_error_method!(UnixDatagram);
