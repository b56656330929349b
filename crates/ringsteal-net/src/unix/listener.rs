//! [`UnixListener`]: a listening Unix-domain stream socket.

use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::task::{Context, Poll};

use ringsteal_rt::op::{self, SharedFd, SockAddr};

use super::{SocketAddr, UnixStream};
use crate::incoming::Incoming;
use crate::listener_fd::{ListenerFd, ListenerHandle};
use crate::polled_accept::PolledAccept;
use crate::sockopt;
use crate::stream::{into_owned, StreamCore};

/// Backlog of [`UnixListener::bind`].
const DEFAULT_BACKLOG: u32 = 1024;

/// A Unix-domain socket listening for connections; each accept is an `IORING_OP_ACCEPT`.
/// As with [`TcpListener`](crate::TcpListener), a connection accepted after its `accept`
/// future was dropped is kept for the next accept, never lost or leaked, and dropping the
/// listener (and every
/// [`Incoming`] made from it) stops it listening at once: new connections are refused even
/// while a cancelled accept still holds the descriptor. (The name, like a path's socket
/// file, stays taken until the descriptor is closed, when that request goes.)
///
/// ```
/// use ringsteal_net::{UnixListener, UnixStream};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let dir = std::env::temp_dir().join(format!("ringsteal-doc-ul-{}", std::process::id()));
///     std::fs::create_dir_all(&dir)?;
///     let path = dir.join("sock");
///     let listener = UnixListener::bind(&path)?;
///     assert_eq!(listener.local_addr()?.as_pathname(), Some(path.as_path()));
///     let _client = UnixStream::connect(&path).await?;
///     let (_server, peer) = listener.accept().await?;
///     assert!(peer.is_unnamed());
///     std::fs::remove_dir_all(&dir)
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct UnixListener {
    fd: ListenerHandle,
    /// The request `poll_accept` keeps between calls.
    polled: PolledAccept,
}

impl UnixListener {
    /// Binds to `path` (a leading NUL byte names an abstract socket) and listens.
    ///
    /// # Errors
    /// `AddrInUse` if the path exists (remove a stale socket file first) or the abstract
    /// name is taken; `InvalidInput` for a path too long for a socket address.
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixListener> {
        Self::bind_raw(&SockAddr::unix(path)?)
    }

    /// Binds to `addr` and listens, as tokio's `bind_addr`: an address built from std's
    /// (`SocketAddr::from`, as in
    /// [`UnixStream::connect_addr`](crate::UnixStream::connect_addr)'s example), or one a
    /// socket reported.
    ///
    /// # Errors
    /// As [`bind`](Self::bind)'s; `InvalidInput` for an unnamed address (which would ask
    /// the kernel for a name of its choosing: bind to `""` for that).
    pub fn bind_addr(addr: &SocketAddr) -> io::Result<UnixListener> {
        if addr.is_unnamed() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "an unnamed Unix address cannot be bound to",
            ));
        }
        Self::bind_raw(&addr.raw())
    }

    fn bind_raw(addr: &SockAddr) -> io::Result<UnixListener> {
        let fd = op::socket_now(libc::AF_UNIX, libc::SOCK_STREAM, 0)?;
        sockopt::bind(&fd, addr)?;
        sockopt::listen(&fd, DEFAULT_BACKLOG)?;
        Ok(Self {
            fd: ListenerFd::new(SharedFd::new(fd)),
            polled: PolledAccept::default(),
        })
    }

    /// Accepts a connection: the stream and the peer's address (usually unnamed). A
    /// `spawn` right after it deals the new task round-robin, and it is cancel-safe (a
    /// connection accepted for a dropped accept goes to the next one), as
    /// [`TcpListener::accept`](crate::TcpListener::accept) does and is.
    ///
    /// # Errors
    /// As for [`TcpListener::accept`](crate::TcpListener::accept): this accept's only
    /// (`EMFILE` when out of descriptors: pause before the next, or use
    /// [`incoming`](Self::incoming), which does).
    pub async fn accept(&self) -> io::Result<(UnixStream, SocketAddr)> {
        let (fd, addr) = self.polled.accept(&self.fd).await?;
        Ok(Self::accepted(fd, addr))
    }

    /// [`accept`](Self::accept) in poll form, as tokio's `poll_accept` (see
    /// [`TcpListener::poll_accept`](crate::TcpListener::poll_accept): the listener keeps the
    /// request between calls, and loses nothing it accepts).
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use ringsteal_net::{UnixListener, UnixStream};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let name = format!("\0ringsteal-doc-poll-accept-{}", std::process::id());
    ///     let listener = UnixListener::bind(&name)?;
    ///     let _client = UnixStream::connect(&name).await?;
    ///     let (_server, peer) = poll_fn(|cx| listener.poll_accept(cx)).await?;
    ///     assert!(peer.is_unnamed());
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    /// As [`accept`](Self::accept)'s.
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(UnixStream, SocketAddr)>> {
        self.polled
            .poll(&self.fd, cx)
            .map_ok(|(fd, addr)| Self::accepted(fd, addr))
    }

    /// The stream and peer address of a connection the kernel accepted.
    fn accepted(fd: OwnedFd, addr: SockAddr) -> (UnixStream, SocketAddr) {
        // The caller's next default spawn, if it comes in this poll, is dealt round-robin.
        ringsteal_rt::spread_next_spawn();
        (
            UnixStream::from_core(StreamCore::new(fd)),
            SocketAddr::from_raw(addr),
        )
    }

    /// The connections as a stream, from one multishot accept request (see [`Incoming`]:
    /// unlike [`accept`](Self::accept), it accepts up to
    /// [`ACCEPT_AHEAD`](crate::ACCEPT_AHEAD) connections ahead, polled or not).
    ///
    /// ```
    /// use ringsteal_net::{UnixListener, UnixStream};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let name = format!("\0ringsteal-doc-incoming-{}", std::process::id());
    ///     let listener = UnixListener::bind(&name)?;
    ///     let mut incoming = listener.incoming();
    ///     let client = UnixStream::connect(&name).await?;
    ///     let server = incoming.next().await.unwrap()?;
    ///     client.write_all(b"hi".to_vec()).await.0?;
    ///     assert_eq!(server.read_exact(vec![0; 2]).await.1, b"hi");
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn incoming(&self) -> Incoming<UnixStream> {
        Incoming::new(&self.fd, |fd| UnixStream::from_core(StreamCore::new(fd)))
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        sockopt::local(self).map(SocketAddr::from_raw)
    }

    /// Adopts a listening std socket, blocking or not. Never fails today; returns
    /// `io::Result` as tokio's does. As for
    /// [`TcpListener::from_std`](crate::TcpListener::from_std), dropping the adopted listener
    /// only closes its descriptor (the socket may have other holders, so it is never shut
    /// down), and before Linux 5.18 a non-blocking listener's accepts fail with `WouldBlock`.
    pub fn from_std(listener: std::os::unix::net::UnixListener) -> io::Result<UnixListener> {
        Ok(Self {
            fd: ListenerFd::adopted(SharedFd::new(listener.into())),
            polled: PolledAccept::default(),
        })
    }

    /// The std listener, with the same descriptor. If an [`Incoming`] made from this listener
    /// or a cancelled accept still holds the socket, the std listener gets a duplicate of the
    /// descriptor instead. Connections a dropped accept kept for the next one are closed (a
    /// std listener cannot hand out a connection already accepted).
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixListener> {
        // The request `poll_accept` left goes first: it holds the descriptor too.
        let Self { fd, polled } = self;
        drop(polled);
        into_owned(ListenerFd::hand_over(fd)).map(Into::into)
    }
}

impl_as_fd!(UnixListener, |s| s.fd.as_raw_fd());
take_error_method!(UnixListener);
