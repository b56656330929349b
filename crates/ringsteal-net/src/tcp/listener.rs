//! [`TcpListener`]: a listening TCP socket; each accept is an `IORING_OP_ACCEPT`.

use std::io;
use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::task::{Context, Poll};

use ringsteal_rt::op::{SharedFd, SockAddr};

use super::{TcpSocket, TcpStream};
use crate::incoming::Incoming;
use crate::listener_fd::{ListenerFd, ListenerHandle};
use crate::polled_accept::PolledAccept;
use crate::resolve::{each_addr, ToSocketAddrs};
use crate::sockopt;
use crate::stream::{into_owned, StreamCore};

/// Backlog of [`TcpListener::bind`] (as tokio's).
const DEFAULT_BACKLOG: u32 = 1024;

/// A TCP socket listening for connections.
///
/// [`bind`](Self::bind) sets `SO_REUSEADDR` and a backlog of 1024 (use [`TcpSocket`] for
/// other settings). [`accept`](Self::accept) takes `&self`, so several tasks may accept on
/// one listener. `accept` is cancel-safe, as tokio's is: a connection the kernel accepted
/// for an `accept` whose future was dropped (a `select!` branch not taken, a `timeout` that
/// fired) goes to the next `accept` (or [`Incoming`]), never closed or leaked. Running out of
/// descriptors (`EMFILE`) is an error of that one `accept`: the listener keeps working once
/// descriptors are free again.
///
/// Dropping the listener (and every [`Incoming`] made from it) stops it listening at once,
/// as with tokio, even while a cancelled accept still holds the descriptor (the socket is
/// shut down, then closed when that request goes): a socket with `SO_REUSEADDR` (as
/// [`bind`](Self::bind) makes) can bind its address right away; one without it may get
/// `AddrInUse` until the shard has reaped the cancel (a tick). A listener adopted with
/// [`from_std`](Self::from_std) is never shut down (the socket may have other holders).
///
/// ```
/// use ringsteal_net::{TcpListener, TcpStream};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let addr = listener.local_addr()?;
///     let client = ringsteal_rt::spawn(async move { TcpStream::connect(addr).await });
///     let (stream, peer) = listener.accept().await?;
///     let client = client.await.unwrap()?;
///     assert_eq!(peer, client.local_addr()?);
///     assert_eq!(stream.peer_addr()?, peer);
///     Ok::<(), std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct TcpListener {
    fd: ListenerHandle,
    /// The request `poll_accept` keeps between calls.
    polled: PolledAccept,
}

impl TcpListener {
    pub(crate) fn from_fd(fd: SharedFd) -> Self {
        Self {
            fd: ListenerFd::new(fd),
            polled: PolledAccept::default(),
        }
    }

    /// Binds to `addr` (each address it resolves to in turn, until one binds) and listens.
    /// Port 0 picks a free port ([`local_addr`](Self::local_addr) tells which).
    ///
    /// # Errors
    /// `AddrInUse` if another socket holds the address, the resolver's error for a host name
    /// that does not resolve, and so on: the error of the last address tried.
    pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<TcpListener> {
        each_addr(&addr, |a| async move { Self::bind_addr(a) }).await
    }

    fn bind_addr(addr: SocketAddr) -> io::Result<TcpListener> {
        let socket = TcpSocket::for_addr(addr)?;
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        socket.listen(DEFAULT_BACKLOG)
    }

    /// Accepts a connection: the stream and the peer's address.
    ///
    /// Cancel-safe: dropped after the kernel accepted a connection for it, the connection
    /// goes to the next `accept` (or [`incoming`](Self::incoming)), so an accept may race a
    /// shutdown signal or a timeout in `select!` without losing a client.
    ///
    /// A `ringsteal::spawn` made right after it, in the same poll (as the obvious accept
    /// loop does), deals the new task to the shards in turn instead of queuing it on this
    /// shard, so a server's connections use every shard (ADR-0009); an explicit
    /// `spawn_with` keeps its placement.
    ///
    /// # Errors
    /// The kernel's, for this accept only: `EMFILE`/`ENFILE` when out of descriptors,
    /// `ECONNABORTED` for a connection reset before it was accepted, and so on. The listener
    /// keeps working; a loop that goes on after `EMFILE` should pause first (descriptors free
    /// up only as connections close, and the next accept would fail at once), or use
    /// [`incoming`](Self::incoming), which pauses by itself.
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        let (fd, addr) = self.polled.accept(&self.fd).await?;
        Self::accepted(fd, addr)
    }

    /// [`accept`](Self::accept) in poll form, as tokio's `poll_accept`: for a `Stream` or an
    /// accept trait implemented by hand. Only the waker of the last call is woken when a
    /// connection arrives, so poll it from one task.
    ///
    /// An io_uring accept is a request in flight, so between calls the listener keeps the
    /// request this made, and the next call polls it again. Nothing it accepts is lost: an
    /// [`accept`](Self::accept) called meanwhile takes that request over (and wakes this
    /// caller, whose next call makes a new one), and the request, dropped with the
    /// listener, leaves its connection to an [`Incoming`] made from the listener that is
    /// still alive, as a dropped `accept` does.
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use ringsteal_net::{TcpListener, TcpStream};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let addr = listener.local_addr()?;
    ///     let client = ringsteal_rt::spawn(async move { TcpStream::connect(addr).await });
    ///     let (_stream, peer) = poll_fn(|cx| listener.poll_accept(cx)).await?;
    ///     assert_eq!(peer, client.await.unwrap()?.local_addr()?);
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    /// As [`accept`](Self::accept)'s.
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        self.polled
            .poll(&self.fd, cx)
            .map(|accepted| accepted.and_then(|(fd, addr)| Self::accepted(fd, addr)))
    }

    /// The stream and peer address of a connection the kernel accepted.
    fn accepted(fd: OwnedFd, addr: SockAddr) -> io::Result<(TcpStream, SocketAddr)> {
        // The caller's next default spawn, if it comes in this poll, is dealt round-robin.
        ringsteal_rt::spread_next_spawn();
        let stream = TcpStream::from_core(StreamCore::new(fd));
        let peer = match addr.as_std() {
            Some(a) => a,
            None => match stream.peer_addr() {
                Ok(a) => a,
                // A connection a dropped `Incoming` accepted without an address, whose peer
                // reset before it was asked: the connection is still the caller's, as with
                // tokio (whose accept(2) had the address), and its first read reports the
                // reset. Failing here would end the usual `accept().await?` loop over one
                // client's reset. The address is the unspecified one of its family, port 0.
                Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => {
                    let mut unknown = stream.local_addr()?;
                    unknown.set_ip(match unknown {
                        SocketAddr::V4(_) => std::net::Ipv4Addr::UNSPECIFIED.into(),
                        SocketAddr::V6(_) => std::net::Ipv6Addr::UNSPECIFIED.into(),
                    });
                    unknown.set_port(0);
                    unknown
                }
                Err(e) => return Err(e),
            },
        };
        Ok((stream, peer))
    }

    /// The connections as a stream, from one multishot accept request re-armed whenever
    /// the kernel ends it (see [`Incoming`]). `EMFILE` is yielded and the stream goes on.
    /// No peer address is taken (every completion would overwrite one storage): ask the
    /// stream ([`TcpStream::peer_addr`]).
    ///
    /// Unlike [`accept`](Self::accept), it accepts ahead: while it lives, polled or not,
    /// the kernel accepts the connections that arrive, and the stream holds each (a
    /// descriptor) until it is polled, up to [`ACCEPT_AHEAD`](crate::ACCEPT_AHEAD) (64):
    /// then it pauses, and later clients wait in the kernel's accept queue until the stream
    /// is polled again. A server that must hold no connection beyond its limit loops on
    /// `accept()` instead.
    ///
    /// ```
    /// use ringsteal_net::{TcpListener, TcpStream};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let addr = listener.local_addr()?;
    ///     let mut incoming = listener.incoming();
    ///     let client = TcpStream::connect(addr).await?;
    ///     let server = incoming.next().await.unwrap()?;
    ///     assert_eq!(server.peer_addr()?, client.local_addr()?);
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn incoming(&self) -> Incoming<TcpStream> {
        Incoming::new(&self.fd, |fd| TcpStream::from_core(StreamCore::new(fd)))
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        sockopt::ip(sockopt::local(self)?)
    }

    /// Sets the IP time-to-live of accepted connections' packets.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        sockopt::with_std(self, |s: &std::net::TcpListener| s.set_ttl(ttl))
    }

    /// The IP time-to-live.
    pub fn ttl(&self) -> io::Result<u32> {
        sockopt::with_std(self, |s: &std::net::TcpListener| s.ttl())
    }

    /// Adopts a listening std socket, blocking or not (its mode is left alone: other
    /// descriptors of the socket share it). Never fails today; returns `io::Result` as
    /// tokio's does.
    ///
    /// Before Linux 5.18 (5.15.90 on 5.15), an io_uring accept on a non-blocking listener
    /// fails at once with `WouldBlock` instead of waiting (fixed by kernel commit a73825ba):
    /// on such kernels call `set_nonblocking(false)` before adopting a listener that tokio
    /// code made non-blocking.
    ///
    /// Other descriptors may refer to the same socket (a `try_clone`, a socket handed over
    /// by a service manager), so dropping the adopted listener only closes its descriptor,
    /// as tokio's does: the socket is never shut down, and keeps listening while a
    /// cancelled accept still holds it or another descriptor refers to it.
    pub fn from_std(listener: std::net::TcpListener) -> io::Result<TcpListener> {
        Ok(Self {
            fd: ListenerFd::adopted(SharedFd::new(listener.into())),
            polled: PolledAccept::default(),
        })
    }

    /// The std listener, with the same descriptor. If an [`Incoming`] made from this listener
    /// or a cancelled accept still holds the socket, the std listener gets a duplicate of the
    /// descriptor instead. Connections a dropped accept kept for the next one are closed (a
    /// std listener cannot hand out a connection already accepted).
    pub fn into_std(self) -> io::Result<std::net::TcpListener> {
        // The request `poll_accept` left goes first: it holds the descriptor too.
        let Self { fd, polled } = self;
        drop(polled);
        into_owned(ListenerFd::hand_over(fd)).map(Into::into)
    }

    /// The shared descriptor, for the low-level op API (`ringsteal_rt::op`). A clone of it
    /// does not keep the socket listening: once the listener and its [`Incoming`] streams are
    /// dropped, the socket stops listening (see [`TcpListener`]).
    pub fn shared_fd(&self) -> &SharedFd {
        self.fd.shared()
    }
}

impl_as_fd!(TcpListener, |s| s.fd.as_raw_fd());
take_error_method!(TcpListener);

impl TryFrom<std::net::TcpListener> for TcpListener {
    type Error = io::Error;
    fn try_from(listener: std::net::TcpListener) -> io::Result<Self> {
        Self::from_std(listener)
    }
}
