//! [`TcpStream`]: a TCP connection; every read and write is an io_uring request.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use ringsteal_rt::op::{self, SharedFd, SockAddr};

use super::split::{
    split_borrowed, split_owned, OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf,
};
use crate::resolve::{each_addr, ToSocketAddrs};
use crate::sockopt;
use crate::stream::StreamCore;
use crate::IntoStdError;

/// A TCP connection. Reads and writes take owned buffers and give them back with the result
/// (`(io::Result<usize>, B)`); each is one io_uring request (`RECV`, `SEND` with
/// `MSG_NOSIGNAL`, `RECVMSG`/`SENDMSG` for the vectored forms).
///
/// All methods take `&self`: one task can read while another writes, and
/// [`into_split`](Self::into_split) gives owned halves for tasks on different shards.
/// Reads are ordered among themselves, and so are writes: a read (or write) whose future is
/// dropped keeps the stream's read (or write) side until the kernel is done with it, and
/// bytes it still received are returned by the next read. Nothing is lost or reordered on a
/// stream that is still used after a cancelled read; see the book's networking chapter.
///
/// ```
/// use ringsteal_net::{TcpListener, TcpStream};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let addr = listener.local_addr()?;
///     let server = ringsteal_rt::spawn(async move {
///         let (stream, _peer) = listener.accept().await?;
///         let (res, buf) = stream.read(Vec::with_capacity(64)).await;
///         let n = res?;
///         stream.write_all(buf).await.0?; // echo it back
///         Ok::<usize, std::io::Error>(n)
///     });
///     let client = TcpStream::connect(addr).await?;
///     client.set_nodelay(true)?;
///     client.write_all(b"hello".to_vec()).await.0?;
///     let (res, echo) = client.read_exact(vec![0u8; 5]).await;
///     res?;
///     assert_eq!(echo, b"hello");
///     assert_eq!(server.await.unwrap()?, 5);
///     Ok::<(), std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
#[repr(transparent)] // for `from_core_ref`
pub struct TcpStream {
    core: StreamCore,
}

impl TcpStream {
    pub(crate) fn from_core(core: StreamCore) -> Self {
        Self { core }
    }

    /// The stream a half's core belongs to, by reference: the halves' `AsRef<TcpStream>`.
    pub(crate) fn from_core_ref(core: &StreamCore) -> &Self {
        // SAFETY: `TcpStream` is `repr(transparent)` over `StreamCore`, so a `StreamCore`
        // is a valid `TcpStream`; the reference borrows `core` for its lifetime and gives no
        // way to move or drop it.
        unsafe { &*(core as *const StreamCore).cast::<Self>() }
    }

    fn core(&self) -> &StreamCore {
        &self.core
    }

    /// Connects to `addr` (each address it resolves to in turn, until one accepts): the
    /// socket is created with `IORING_OP_SOCKET` (or `socket(2)` where the kernel lacks it)
    /// and connected with `IORING_OP_CONNECT`. Dropping the future closes the socket once
    /// the kernel is done with it.
    ///
    /// # Errors
    /// `ConnectionRefused` if nobody listens, the resolver's error for a host name that does
    /// not resolve, and so on: the error of the last address tried.
    pub async fn connect(addr: impl ToSocketAddrs) -> io::Result<TcpStream> {
        each_addr(&addr, Self::connect_addr).await
    }

    pub(crate) async fn connect_addr(addr: SocketAddr) -> io::Result<TcpStream> {
        let domain = if addr.is_ipv4() {
            libc::AF_INET
        } else {
            libc::AF_INET6
        };
        let fd = SharedFd::new(op::socket(domain, libc::SOCK_STREAM, 0).await?);
        Self::connect_fd(fd, addr).await
    }

    pub(crate) async fn connect_fd(fd: SharedFd, addr: SocketAddr) -> io::Result<TcpStream> {
        op::connect(&fd, SockAddr::from_std(&addr)).await?;
        Ok(Self::from_core(StreamCore::from_shared(fd)))
    }

    /// Adopts a connected std stream (blocking or not: io_uring handles both).
    /// Never fails today; returns `io::Result` as tokio's does.
    ///
    /// ```
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    ///     let client = std::net::TcpStream::connect(listener.local_addr()?)?;
    ///     let (served, _) = listener.accept()?;
    ///     let client = ringsteal_net::TcpStream::from_std(client)?;
    ///     client.write_all(b"adopted".to_vec()).await.0?;
    ///     let mut got = [0; 7];
    ///     std::io::Read::read_exact(&mut &served, &mut got)?;
    ///     assert_eq!(&got, b"adopted");
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        Ok(Self::from_core(StreamCore::new(stream.into())))
    }

    /// The std stream (in whatever blocking mode it was). If a cancelled request still holds
    /// the socket, the std stream gets a duplicate of the descriptor.
    ///
    /// # Errors
    /// If the handover could lose bytes: bytes received by a cancelled read are buffered
    /// here (read them first); a read or write is still in flight (a dropped one until the
    /// shard has reaped its cancellation); or a [`RecvStream`](crate::RecvStream) of this
    /// stream is alive and has not ended, polled or not (one passed to `mem::forget` counts
    /// for ever).
    /// The error then holds the stream: [`IntoStdError::recover`] gives it back. Also if the
    /// descriptor could not be duplicated.
    pub fn into_std(self) -> io::Result<std::net::TcpStream> {
        match self.core.into_owned_fd() {
            Ok(fd) => fd.map(Into::into),
            Err((core, reason)) => Err(IntoStdError::new(Self::from_core(core), reason).into()),
        }
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        sockopt::ip(sockopt::local(self)?)
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        sockopt::ip(sockopt::peer(self)?)
    }

    /// Sets `TCP_NODELAY` (no Nagle delay for small writes).
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        sockopt::set_flag(self, libc::IPPROTO_TCP, libc::TCP_NODELAY, nodelay)
    }

    /// `TCP_NODELAY`.
    pub fn nodelay(&self) -> io::Result<bool> {
        sockopt::flag(self, libc::IPPROTO_TCP, libc::TCP_NODELAY)
    }

    /// Sets the IP time-to-live of outgoing packets.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        sockopt::with_std(self, |s: &std::net::TcpStream| s.set_ttl(ttl))
    }

    /// The IP time-to-live.
    pub fn ttl(&self) -> io::Result<u32> {
        sockopt::with_std(self, |s: &std::net::TcpStream| s.ttl())
    }

    /// Sets `SO_LINGER`: `Some(d)` makes closing wait up to `d` for unsent data, and
    /// `Some(Duration::ZERO)` resets the connection on close. The kernel counts whole
    /// seconds: a fraction rounds up (500 ms lingers 1 s, and [`linger`](Self::linger)
    /// says so), where tokio's rounds down, turning a sub-second linger into a reset.
    ///
    /// A linger longer than zero blocks the thread that closes the socket: the kernel's
    /// `close` waits up to `d` while unsent data remains. That thread is a shard (the one
    /// that drops the last handle, or reaps the last request), and every task on it waits
    /// too; tokio deprecated its `set_linger` for this. Use `Some(Duration::ZERO)` to reset,
    /// or close gracefully: [`shutdown`](Self::shutdown) the write side, then read until the
    /// peer's end of stream.
    pub fn set_linger(&self, linger: Option<Duration>) -> io::Result<()> {
        sockopt::set_linger(self, linger)
    }

    /// Sets `SO_LINGER` to zero, as tokio's `set_zero_linger`: closing the socket then
    /// resets the connection (the peer reads `ConnectionReset`, not an end of stream),
    /// drops what the kernel has not sent yet and leaves no `TIME_WAIT` behind. A zero
    /// linger never blocks the closing thread; the same as `set_linger(Some(Duration::ZERO))`.
    ///
    /// ```
    /// use ringsteal_net::{TcpListener, TcpStream};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let client = TcpStream::connect(listener.local_addr()?).await?;
    ///     let (server, _) = listener.accept().await?;
    ///     server.set_zero_linger()?;
    ///     assert_eq!(server.linger()?, Some(std::time::Duration::ZERO));
    ///     drop(server); // a reset, not a FIN
    ///     let (res, _) = client.read(vec![0u8; 16]).await;
    ///     assert_eq!(res.unwrap_err().kind(), std::io::ErrorKind::ConnectionReset);
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn set_zero_linger(&self) -> io::Result<()> {
        sockopt::set_linger(self, Some(Duration::ZERO))
    }

    /// `SO_LINGER`.
    pub fn linger(&self) -> io::Result<Option<Duration>> {
        sockopt::linger(self)
    }

    /// Sets `TCP_QUICKACK`, as tokio's `set_quickack`: `true` sends acknowledgements at once
    /// instead of delaying them. The kernel clears it again on its own (it is a mode the
    /// stack leaves, not a lasting option), so a service that wants it sets it after reads.
    ///
    /// ```
    /// use ringsteal_net::{TcpListener, TcpStream};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let stream = TcpStream::connect(listener.local_addr()?).await?;
    ///     stream.set_quickack(true)?;
    ///     assert!(stream.quickack()?);
    ///     stream.set_quickack(false)?;
    ///     assert!(!stream.quickack()?);
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn set_quickack(&self, quickack: bool) -> io::Result<()> {
        sockopt::set_flag(self, libc::IPPROTO_TCP, libc::TCP_QUICKACK, quickack)
    }

    /// `TCP_QUICKACK`, as tokio's `quickack`.
    pub fn quickack(&self) -> io::Result<bool> {
        sockopt::flag(self, libc::IPPROTO_TCP, libc::TCP_QUICKACK)
    }

    /// Sets `SO_KEEPALIVE`.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let listener = ringsteal_net::TcpListener::bind("127.0.0.1:0").await?;
    ///     let stream = ringsteal_net::TcpStream::connect(listener.local_addr()?).await?;
    ///     stream.set_keepalive(true)?;
    ///     stream.set_linger(Some(Duration::from_secs(2)))?; // close waits up to 2 s to send
    ///     stream.set_ttl(32)?;
    ///     assert!(stream.keepalive()?);
    ///     assert_eq!(stream.linger()?, Some(Duration::from_secs(2)));
    ///     assert_eq!(stream.ttl()?, 32);
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn set_keepalive(&self, keepalive: bool) -> io::Result<()> {
        sockopt::set_flag(self, libc::SOL_SOCKET, libc::SO_KEEPALIVE, keepalive)
    }

    /// `SO_KEEPALIVE`.
    pub fn keepalive(&self) -> io::Result<bool> {
        sockopt::flag(self, libc::SOL_SOCKET, libc::SO_KEEPALIVE)
    }

    stream_common_methods!();
    stream_ready_method!();
    stream_try_io_methods!();
    stream_read_methods!();
    stream_write_methods!();
    stream_reply_method!();
    stream_zc_methods!();
}

impl_async_read!(TcpStream);
impl_async_read!(&TcpStream);
impl_async_write!(TcpStream, reads);
impl_async_write!(&TcpStream, reads);
impl_poll_source!(TcpStream, read: true, write: true);
impl_poll_source!(&TcpStream, read: true, write: true);

impl_as_fd!(TcpStream, |s| s.core.fd().as_raw_fd());
take_error_method!(TcpStream);

impl TryFrom<std::net::TcpStream> for TcpStream {
    type Error = io::Error;
    fn try_from(stream: std::net::TcpStream) -> io::Result<Self> {
        Self::from_std(stream)
    }
}
