//! [`UdpSocket`]: datagrams over IP; every send and receive is an io_uring request.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use ringsteal_rt::buf::{BufResult, IoBuf, IoBufMut};
use ringsteal_rt::io::ReadinessCache;
use ringsteal_rt::op::{self, SharedFd, SockAddr};

use crate::kept_datagrams::{self, KeptDatagrams};
use crate::resolve::{each_addr, resolve_one, ToSocketAddrs};
use crate::sockopt;
use crate::stream::into_owned;

/// A UDP socket. `send` (after [`connect`](Self::connect)) is `IORING_OP_SEND`, `send_to`
/// `SENDMSG` with the address in the op; every receive is a `RECVMSG` (the sender is kept
/// with a datagram a dropped receive took, below). All take
/// `&self`, so several tasks (on any shards) may receive or send on one socket at once.
///
/// A datagram longer than the receive buffer is cut to fit, the rest discarded (as with
/// std). Receives are cancel-safe, as tokio's: a receive whose future is dropped (a
/// `select!` branch not taken, a timeout) may still take a datagram, and the socket keeps it
/// for its next `recv`, `recv_from`, `peek` or `try_recv` (not for a receive stream).
/// Concurrent receives still run side by side. A receive into a buffer with no room is
/// refused (`InvalidInput`): it would discard a whole datagram.
///
/// ```
/// use ringsteal_net::UdpSocket;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let a = UdpSocket::bind("127.0.0.1:0").await?;
///     let b = UdpSocket::bind("127.0.0.1:0").await?;
///     a.send_to(b"ping".to_vec(), b.local_addr()?).await.0?;
///     let (res, buf) = b.recv_from(Vec::with_capacity(64)).await;
///     let (n, from) = res?;
///     assert_eq!((&buf[..n], from), (&b"ping"[..], a.local_addr()?));
///
///     b.connect(from).await?;
///     b.send(b"pong".to_vec()).await.0?;
///     let (res, buf) = a.recv(Vec::with_capacity(64)).await;
///     assert_eq!(&buf[..res?], b"pong");
///     Ok::<(), std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct UdpSocket {
    /// Declared before `fd`: the cancels of its polls are asked for before the descriptor
    /// closes.
    readiness: ReadinessCache,
    fd: SharedFd,
    kept: Arc<KeptDatagrams>,
}

impl UdpSocket {
    fn from_shared(fd: SharedFd) -> Self {
        Self {
            readiness: ReadinessCache::new(),
            fd,
            kept: Arc::default(),
        }
    }

    /// Binds to `addr` (each address it resolves to in turn, until one binds). Port 0 picks
    /// a free port.
    pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<UdpSocket> {
        each_addr(&addr, |a| async move { Self::bind_addr(a) }).await
    }

    fn bind_addr(addr: SocketAddr) -> io::Result<UdpSocket> {
        let domain = if addr.is_ipv4() {
            libc::AF_INET
        } else {
            libc::AF_INET6
        };
        let fd = op::socket_now(domain, libc::SOCK_DGRAM, 0)?;
        sockopt::bind(&fd, &SockAddr::from_std(&addr))?;
        Ok(Self::from_shared(SharedFd::new(fd)))
    }

    /// Sets the default destination (and the only accepted source) of datagrams, with
    /// `IORING_OP_CONNECT`.
    pub async fn connect(&self, addr: impl ToSocketAddrs) -> io::Result<()> {
        each_addr(&addr, |a| op::connect(&self.fd, SockAddr::from_std(&a))).await
    }

    /// Sends `buf` to the connected address.
    pub async fn send<B: IoBuf>(&self, buf: B) -> BufResult<usize, B> {
        op::send(&self.fd, buf, 0).await
    }

    /// Receives one datagram from the connected address into `buf` (from its start; the
    /// rest of a longer datagram is discarded). Cancel-safe (see the type's docs).
    pub async fn recv<B: IoBufMut>(&self, buf: B) -> BufResult<usize, B> {
        let (res, buf) = kept_datagrams::recv_from(&self.fd, &self.kept, buf, false).await;
        (res.map(|(n, _)| n), buf)
    }

    /// Sends `buf` to `target` (the first address it resolves to).
    pub async fn send_to<B: IoBuf>(
        &self,
        buf: B,
        target: impl ToSocketAddrs,
    ) -> BufResult<usize, B> {
        match resolve_one(&target).await {
            Ok(addr) => op::send_to(&self.fd, buf, SockAddr::from_std(&addr)).await,
            Err(e) => (Err(e), buf),
        }
    }

    /// Receives one datagram into `buf` and the address it came from. Cancel-safe (see the
    /// type's docs).
    pub async fn recv_from<B: IoBufMut>(&self, buf: B) -> BufResult<(usize, SocketAddr), B> {
        let (res, buf) = kept_datagrams::recv_from(&self.fd, &self.kept, buf, false).await;
        (res.and_then(|(n, from)| Ok((n, sockopt::ip(from)?))), buf)
    }

    /// Copies the next datagram into `buf` without taking it from the queue, with the
    /// address it came from, as tokio's `peek_from` (`MSG_PEEK`).
    ///
    /// ```
    /// use ringsteal_net::UdpSocket;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let rx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let tx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     tx.send_to(b"hello".to_vec(), rx.local_addr()?).await.0?;
    ///     let (res, buf) = rx.peek_from(Vec::with_capacity(2)).await;
    ///     let (n, from) = res?;
    ///     assert_eq!((&buf[..n], from), (&b"he"[..], tx.local_addr()?));
    ///     assert_eq!(rx.peek_sender().await?, tx.local_addr()?);
    ///     let (res, buf) = rx.recv(Vec::with_capacity(8)).await;
    ///     assert_eq!(&buf[..res?], b"hello", "still queued after the peeks");
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub async fn peek_from<B: IoBufMut>(&self, buf: B) -> BufResult<(usize, SocketAddr), B> {
        let (res, buf) = kept_datagrams::recv_from(&self.fd, &self.kept, buf, true).await;
        (res.and_then(|(n, from)| Ok((n, sockopt::ip(from)?))), buf)
    }

    /// The address the next datagram came from, without taking it, as tokio's
    /// `peek_sender` (see [`peek_from`](Self::peek_from)).
    pub async fn peek_sender(&self) -> io::Result<SocketAddr> {
        let (res, _) = self.peek_from([0u8; 1]).await;
        res.map(|(_, from)| from)
    }

    datagram_readiness_methods!(
        "    let a = ringsteal_net::UdpSocket::bind(\"127.0.0.1:0\").await?;\n    \
         let b = ringsteal_net::UdpSocket::bind(\"127.0.0.1:0\").await?;\n    \
         a.connect(b.local_addr()?).await?;\n    \
         b.connect(a.local_addr()?).await?;\n"
    );

    /// Receives one datagram into `buf` without waiting, with the address it came from, as
    /// tokio's `try_recv_from`. `WouldBlock` if none is queued.
    ///
    /// ```
    /// use ringsteal_net::UdpSocket;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let rx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let tx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     tx.try_send_to(b"hi", rx.local_addr()?)?;
    ///     rx.readable().await?;
    ///     let mut buf = [0; 8];
    ///     let (n, from) = rx.try_recv_from(&mut buf)?;
    ///     assert_eq!((&buf[..n], from), (&b"hi"[..], tx.local_addr()?));
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.try_receive_from(buf, false)
    }

    /// As [`try_recv_from`](Self::try_recv_from), into the next chunk of `buf`, which it
    /// then advances, as tokio's `try_recv_buf_from` (feature `bytes`): a `Vec<u8>` or
    /// `BytesMut` with no room left grows first (by as little as 64 bytes: reserve room for
    /// the longest datagram you expect, or its tail is discarded).
    ///
    /// ```
    /// use ringsteal_net::UdpSocket;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let rx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let tx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     tx.try_send_to(b"hi", rx.local_addr()?)?;
    ///     rx.readable().await?;
    ///     let mut buf = bytes::BytesMut::with_capacity(1500);
    ///     let (n, from) = rx.try_recv_buf_from(&mut buf)?;
    ///     assert_eq!((n, &buf[..], from), (2, &b"hi"[..], tx.local_addr()?));
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    #[cfg(feature = "bytes")]
    pub fn try_recv_buf_from<B: bytes::BufMut>(
        &self,
        buf: &mut B,
    ) -> io::Result<(usize, SocketAddr)> {
        let (n, from) = crate::recv_buf::try_recv_buf(self.datagram_io(), buf)?;
        Ok((n, sockopt::ip(from)?))
    }

    /// As [`try_recv_buf_from`](Self::try_recv_buf_from), waiting for a datagram, as
    /// tokio's `recv_buf_from` (feature `bytes`): it waits for readiness and receives with
    /// one `recvfrom(2)`, so `buf` stays with the caller, and a dropped call has taken
    /// nothing (cancel-safe, as tokio's).
    ///
    /// ```
    /// use ringsteal_net::UdpSocket;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let rx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let tx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let mut buf = bytes::BytesMut::with_capacity(1500);
    ///     let receive = rx.recv_buf_from(&mut buf);
    ///     tx.send_to(b"hi".to_vec(), rx.local_addr()?).await.0?;
    ///     let (n, from) = receive.await?;
    ///     assert_eq!((n, &buf[..], from), (2, &b"hi"[..], tx.local_addr()?));
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

    /// Copies the next datagram into `buf` without waiting and without taking it, with the
    /// address it came from, as tokio's `try_peek_from`: the next receive gets it again.
    /// `WouldBlock` if none is queued. A datagram a dropped receive kept comes first, as for
    /// [`try_recv_from`](Self::try_recv_from).
    ///
    /// ```
    /// use ringsteal_net::UdpSocket;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let rx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let tx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     tx.try_send_to(b"hi", rx.local_addr()?)?;
    ///     rx.readable().await?;
    ///     let mut buf = [0; 8];
    ///     let (n, from) = rx.try_peek_from(&mut buf)?;
    ///     assert_eq!((&buf[..n], from), (&b"hi"[..], tx.local_addr()?));
    ///     assert_eq!(rx.try_recv_from(&mut buf)?.0, 2, "still queued");
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn try_peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.try_receive_from(buf, true)
    }

    /// [`try_recv_from`](Self::try_recv_from), or, if `peek`,
    /// [`try_peek_from`](Self::try_peek_from): a kept datagram first, then the kernel's.
    fn try_receive_from(&self, buf: &mut [u8], peek: bool) -> io::Result<(usize, SocketAddr)> {
        let (n, from) = self.datagram_io().try_recv_from(buf, peek)?;
        Ok((n, sockopt::ip(from)?))
    }

    /// The address the next datagram came from, without waiting and without taking it, as
    /// tokio's `try_peek_sender`. `WouldBlock` if none is queued.
    ///
    /// ```
    /// use ringsteal_net::UdpSocket;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let rx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let tx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     tx.try_send_to(b"who", rx.local_addr()?)?;
    ///     rx.readable().await?;
    ///     assert_eq!(rx.try_peek_sender()?, tx.local_addr()?);
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn try_peek_sender(&self) -> io::Result<SocketAddr> {
        self.try_peek_from(&mut [0u8; 1]).map(|(_, from)| from)
    }

    /// Sends `buf` as one datagram to `target` without waiting, as tokio's `try_send_to`
    /// (an address, not a name: resolving may wait). `WouldBlock` if the send buffer is
    /// full.
    ///
    /// ```
    /// use ringsteal_net::UdpSocket;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let rx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let tx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     assert_eq!(tx.try_send_to(b"hello", rx.local_addr()?)?, 5);
    ///     let (n, buf) = rx.recv(Vec::with_capacity(8)).await;
    ///     assert_eq!(&buf[..n?], b"hello");
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn try_send_to(&self, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        self.datagram_io()
            .try_send_to(buf, Some(&SockAddr::from_std(&target)))
    }

    /// Polls to receive one datagram into `buf`, with the address it came from, as tokio's
    /// `poll_recv_from` (tokio's fills a `ReadBuf`; this one takes a slice and gives the
    /// length, as [`try_recv_from`](Self::try_recv_from) does). For poll-based code: a DNS
    /// library's socket trait, say. Only the task of the latest call is woken, as in tokio.
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use ringsteal_net::UdpSocket;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let rx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let tx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let to = rx.local_addr()?;
    ///     poll_fn(|cx| tx.poll_send_to(cx, b"query", to)).await?;
    ///     let mut buf = [0; 512];
    ///     let (n, from) = poll_fn(|cx| rx.poll_recv_from(cx, &mut buf)).await?;
    ///     assert_eq!((&buf[..n], from), (&b"query"[..], tx.local_addr()?));
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        self.poll_receive_from(cx, buf, false)
    }

    /// As [`poll_recv_from`](Self::poll_recv_from), leaving the datagram queued, as tokio's
    /// `poll_peek_from`.
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use ringsteal_net::UdpSocket;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let rx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let tx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     tx.send_to(b"twice".to_vec(), rx.local_addr()?).await.0?;
    ///     let mut buf = [0; 8];
    ///     let (n, _) = poll_fn(|cx| rx.poll_peek_from(cx, &mut buf)).await?;
    ///     assert_eq!(rx.try_recv_from(&mut buf)?.0, n, "still queued");
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn poll_peek_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        self.poll_receive_from(cx, buf, true)
    }

    /// Polls for the address the next datagram came from, without taking it, as tokio's
    /// `poll_peek_sender` (the poll form of [`peek_sender`](Self::peek_sender)).
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use ringsteal_net::UdpSocket;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let rx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let tx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     tx.send_to(b"who".to_vec(), rx.local_addr()?).await.0?;
    ///     let from = poll_fn(|cx| rx.poll_peek_sender(cx)).await?;
    ///     assert_eq!(from, tx.local_addr()?);
    ///     assert_eq!(rx.try_recv_from(&mut [0; 8])?, (3, from), "still queued");
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn poll_peek_sender(&self, cx: &mut Context<'_>) -> Poll<io::Result<SocketAddr>> {
        self.poll_receive_from(cx, &mut [0u8; 1], true)
            .map_ok(|(_, from)| from)
    }

    /// Polls to copy the next datagram from the connected address into `buf` without
    /// taking it, as tokio's `poll_peek` (tokio's fills a `ReadBuf`; this one takes a slice
    /// and gives the length, as [`poll_recv`](Self::poll_recv) does).
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use ringsteal_net::UdpSocket;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let b = UdpSocket::bind("127.0.0.1:0").await?;
    ///     a.connect(b.local_addr()?).await?;
    ///     b.connect(a.local_addr()?).await?;
    ///     a.send(b"look".to_vec()).await.0?;
    ///     let mut buf = [0; 8];
    ///     let n = poll_fn(|cx| b.poll_peek(cx, &mut buf)).await?;
    ///     assert_eq!(&buf[..n], b"look");
    ///     assert_eq!(b.try_peek(&mut buf)?, 4, "still queued");
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn poll_peek(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.poll_receive_from(cx, buf, true).map_ok(|(n, _)| n)
    }

    /// Copies the next datagram from the connected address into `buf` without waiting and
    /// without taking it, as tokio's `try_peek`. `WouldBlock` if none is queued.
    pub fn try_peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.try_receive_from(buf, true).map(|(n, _)| n)
    }

    fn poll_receive_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
        peek: bool,
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        let (n, from) = ready!(self.datagram_io().poll_recv_from(cx, buf, peek))?;
        Poll::Ready(Ok((n, sockopt::ip(from)?)))
    }

    /// Polls to send `buf` as one datagram to `target`, as tokio's `poll_send_to` (see
    /// [`poll_recv_from`](Self::poll_recv_from) for an example).
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        target: SocketAddr,
    ) -> Poll<io::Result<usize>> {
        self.datagram_io()
            .poll_send_to(cx, buf, Some(&SockAddr::from_std(&target)))
    }

    /// The datagrams arriving on this socket as a stream, from one multishot
    /// `IORING_OP_RECVMSG` into the polling shard's provided buffers (single-shot `recvmsg`
    /// into heap buffers where the runtime lacks either): no request per datagram. Each
    /// item is a [`Datagram`](crate::Datagram): its payload, its
    /// [`source`](crate::Datagram::source) address, and whether it was truncated (a
    /// datagram longer than a buffer's payload room, `Builder::recv_buffers` length less
    /// 144 bytes, or the whole length on the single-shot fallbacks). An error (an ICMP
    /// error reported to a connected socket too) ends the stream; make a new one to go on.
    /// Other receives on the socket may run at the same time (datagram sockets keep no
    /// lane); each datagram goes to one of them, and the datagrams the stream took but
    /// nobody read are lost with it when it is dropped. Its request holds the socket: it
    /// stays open until both the stream and the socket are dropped.
    ///
    /// ```
    /// use ringsteal_net::UdpSocket;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let rx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let tx = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let mut datagrams = rx.recv_stream();
    ///     for word in ["one", "two"] {
    ///         tx.send_to(word.as_bytes().to_vec(), rx.local_addr()?).await.0?;
    ///     }
    ///     for word in ["one", "two"] {
    ///         let d = datagrams.next().await.unwrap()?;
    ///         assert_eq!(d.payload(), word.as_bytes());
    ///         assert_eq!(d.source(), Some(tx.local_addr()?));
    ///     }
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn recv_stream(&self) -> crate::RecvMsgStream {
        op::recvmsg_multishot(&self.fd)
    }

    /// Copies the next datagram into `buf` without taking it from the queue (`MSG_PEEK`).
    pub async fn peek<B: IoBufMut>(&self, buf: B) -> BufResult<usize, B> {
        let (res, buf) = kept_datagrams::recv_from(&self.fd, &self.kept, buf, true).await;
        (res.map(|(n, _)| n), buf)
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        sockopt::ip(sockopt::local(self)?)
    }

    /// The connected address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        sockopt::ip(sockopt::peer(self)?)
    }

    /// Sets `SO_BROADCAST` (allow sending to a broadcast address).
    ///
    /// ```
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let socket = ringsteal_net::UdpSocket::bind("0.0.0.0:0").await?;
    ///     socket.set_broadcast(true)?;
    ///     assert!(socket.broadcast()?);
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn set_broadcast(&self, on: bool) -> io::Result<()> {
        self.with_std(|s| s.set_broadcast(on))
    }

    /// `SO_BROADCAST`.
    pub fn broadcast(&self) -> io::Result<bool> {
        self.with_std(|s| s.broadcast())
    }

    /// Sets `IP_MULTICAST_LOOP` (multicast sent here is looped back to local listeners).
    pub fn set_multicast_loop_v4(&self, on: bool) -> io::Result<()> {
        self.with_std(|s| s.set_multicast_loop_v4(on))
    }

    /// `IP_MULTICAST_LOOP`.
    pub fn multicast_loop_v4(&self) -> io::Result<bool> {
        self.with_std(|s| s.multicast_loop_v4())
    }

    /// Sets `IP_MULTICAST_TTL`.
    pub fn set_multicast_ttl_v4(&self, ttl: u32) -> io::Result<()> {
        self.with_std(|s| s.set_multicast_ttl_v4(ttl))
    }

    /// `IP_MULTICAST_TTL`.
    pub fn multicast_ttl_v4(&self) -> io::Result<u32> {
        self.with_std(|s| s.multicast_ttl_v4())
    }

    /// Sets `IPV6_MULTICAST_LOOP`.
    pub fn set_multicast_loop_v6(&self, on: bool) -> io::Result<()> {
        self.with_std(|s| s.set_multicast_loop_v6(on))
    }

    /// `IPV6_MULTICAST_LOOP`.
    pub fn multicast_loop_v6(&self) -> io::Result<bool> {
        self.with_std(|s| s.multicast_loop_v6())
    }

    /// Joins the IPv4 multicast group `multiaddr` on the interface with address `interface`
    /// (`UNSPECIFIED`: the default one).
    ///
    /// ```
    /// use std::net::Ipv4Addr;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let socket = ringsteal_net::UdpSocket::bind("0.0.0.0:0").await?;
    ///     let group = Ipv4Addr::new(224, 0, 0, 251);
    ///     match socket.join_multicast_v4(group, Ipv4Addr::UNSPECIFIED) {
    ///         Ok(()) => socket.leave_multicast_v4(group, Ipv4Addr::UNSPECIFIED)?,
    ///         // A host with no multicast route refuses to join.
    ///         Err(e) => eprintln!("no multicast here: {e}"),
    ///     }
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn join_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        self.with_std(|s| s.join_multicast_v4(&multiaddr, &interface))
    }

    /// Leaves an IPv4 multicast group.
    pub fn leave_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        self.with_std(|s| s.leave_multicast_v4(&multiaddr, &interface))
    }

    /// Joins the IPv6 multicast group `multiaddr` on interface index `interface` (0: any).
    pub fn join_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        self.with_std(|s| s.join_multicast_v6(multiaddr, interface))
    }

    /// Leaves an IPv6 multicast group.
    pub fn leave_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        self.with_std(|s| s.leave_multicast_v6(multiaddr, interface))
    }

    /// Sets the IP time-to-live of outgoing datagrams.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.with_std(|s| s.set_ttl(ttl))
    }

    /// The IP time-to-live.
    pub fn ttl(&self) -> io::Result<u32> {
        self.with_std(|s| s.ttl())
    }

    fn with_std<R>(&self, f: impl FnOnce(&std::net::UdpSocket) -> R) -> R {
        sockopt::with_std(self, f)
    }

    /// Adopts a bound std socket. Never fails today; returns `io::Result` as tokio's does.
    ///
    /// ```
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let std_socket = std::net::UdpSocket::bind("127.0.0.1:0")?;
    ///     let addr = std_socket.local_addr()?;
    ///     let socket = ringsteal_net::UdpSocket::from_std(std_socket)?;
    ///     socket.send_to(b"to myself".to_vec(), addr).await.0?;
    ///     let (res, buf) = socket.recv(Vec::with_capacity(64)).await;
    ///     assert_eq!(&buf[..res?], b"to myself");
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn from_std(socket: std::net::UdpSocket) -> io::Result<UdpSocket> {
        Ok(Self::from_shared(SharedFd::new(socket.into())))
    }

    /// The std socket; a duplicate descriptor if a request still holds it: a cancelled one,
    /// or the request of a receive stream, which goes on taking datagrams from the socket
    /// (they are then lost to the std socket) until it is dropped: drop receive streams
    /// first. Datagrams kept from dropped receives (see the type's docs) are dropped with
    /// this value: receive them first. The socket is in whatever blocking mode it was:
    /// blocking, unless it was made from a non-blocking std socket (tokio's is always
    /// non-blocking; call `set_nonblocking(true)` where code counts on that).
    pub fn into_std(self) -> io::Result<std::net::UdpSocket> {
        into_owned(self.fd).map(Into::into)
    }

    /// The shared descriptor, for the low-level op API (`ringsteal_rt::op`).
    pub fn shared_fd(&self) -> &SharedFd {
        &self.fd
    }
}

impl_as_fd!(UdpSocket, |s| s.fd.as_raw_fd());
take_error_method!(UdpSocket);
ip_socket_options!(
    UdpSocket,
    "    let rt = ringsteal_rt::Runtime::builder().shards(1).build()?;\n    let socket = rt.block_on(ringsteal_net::UdpSocket::bind(\"127.0.0.1:0\"))?;\n",
    "    let rt = ringsteal_rt::Runtime::builder().shards(1).build()?;\n    let Ok(socket) = rt.block_on(ringsteal_net::UdpSocket::bind(\"[::1]:0\")) else {\n        return Ok(()); // a host without IPv6\n    };\n"
);
