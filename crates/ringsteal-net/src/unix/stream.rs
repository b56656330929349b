//! [`UnixStream`]: a connected Unix-domain stream socket.

use std::io;
use std::path::Path;

use ringsteal_rt::op::{self, SharedFd, SockAddr};

use super::split::{
    split_borrowed, split_owned, OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf,
};
use super::SocketAddr;
use crate::sockopt;
use crate::stream::StreamCore;
use crate::IntoStdError;

/// A connected Unix-domain stream socket, with the same owned-buffer API and guarantees as
/// [`TcpStream`](crate::TcpStream): `&self` methods, ordered reads and writes, and the bytes
/// of a cancelled read kept for the next one.
///
/// ```
/// use ringsteal_net::{UnixListener, UnixStream};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let name = format!("\0ringsteal-doc-unix-stream-{}", std::process::id());
///     let listener = UnixListener::bind(&name)?;
///     let client = UnixStream::connect(&name).await?;
///     let (server, _) = listener.accept().await?;
///     client.write_all(b"over a unix socket".to_vec()).await.0?;
///     let (res, got) = server.read_exact(vec![0u8; 18]).await;
///     res?;
///     assert_eq!(got, b"over a unix socket");
///     Ok::<(), std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
#[repr(transparent)] // for `from_core_ref`
pub struct UnixStream {
    core: StreamCore,
}

impl UnixStream {
    pub(crate) fn from_core(core: StreamCore) -> Self {
        Self { core }
    }

    /// The stream a half's core belongs to, by reference: the halves' `AsRef<UnixStream>`.
    pub(crate) fn from_core_ref(core: &StreamCore) -> &Self {
        // SAFETY: `UnixStream` is `repr(transparent)` over `StreamCore`, so a `StreamCore`
        // is a valid `UnixStream`; the reference borrows `core` for its lifetime and gives no
        // way to move or drop it.
        unsafe { &*(core as *const StreamCore).cast::<Self>() }
    }

    /// The credentials of the process at the other end (`SO_PEERCRED`), as tokio's
    /// `peer_cred`: its ids when it connected or made the pair.
    ///
    /// ```
    /// let (a, _b) = ringsteal_net::UnixStream::pair().unwrap();
    /// // SAFETY: getgid cannot fail and takes no arguments.
    /// assert_eq!(a.peer_cred().unwrap().gid(), unsafe { libc::getgid() });
    /// ```
    pub fn peer_cred(&self) -> io::Result<super::UCred> {
        sockopt::peer_cred(self).map(super::UCred::from_raw)
    }

    fn core(&self) -> &StreamCore {
        &self.core
    }

    /// Connects to the socket at `path` (a leading NUL byte names an abstract socket), with
    /// `IORING_OP_SOCKET` and `IORING_OP_CONNECT`.
    pub async fn connect(path: impl AsRef<Path>) -> io::Result<UnixStream> {
        Self::connect_raw(SockAddr::unix(path)?).await
    }

    /// Connects to the socket at `addr`, as tokio's `connect_addr`: an address built from
    /// std's (`SocketAddr::from`), or one a socket reported.
    ///
    /// ```
    /// use std::os::linux::net::SocketAddrExt;
    /// use ringsteal_net::{unix::SocketAddr, UnixListener, UnixStream};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let name = format!("ringsteal-doc-connect-addr-{}", std::process::id());
    ///     let addr = SocketAddr::from(std::os::unix::net::SocketAddr::from_abstract_name(&name)?);
    ///     let listener = UnixListener::bind_addr(&addr)?;
    ///     let client = UnixStream::connect_addr(&listener.local_addr()?).await?;
    ///     let (server, _) = listener.accept().await?;
    ///     client.write_all(b"hi".to_vec()).await.0?;
    ///     let (n, buf) = server.read(Vec::with_capacity(2)).await;
    ///     assert_eq!(&buf[..n?], b"hi");
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    /// As [`connect`](Self::connect)'s; `InvalidInput` for an unnamed address.
    pub async fn connect_addr(addr: &SocketAddr) -> io::Result<UnixStream> {
        if addr.is_unnamed() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "an unnamed Unix address cannot be connected to",
            ));
        }
        Self::connect_raw(addr.raw()).await
    }

    async fn connect_raw(addr: SockAddr) -> io::Result<UnixStream> {
        let fd = SharedFd::new(op::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0).await?);
        op::connect(&fd, addr).await?;
        Ok(Self::from_core(StreamCore::from_shared(fd)))
    }

    /// Two connected, unnamed sockets (`socketpair`).
    pub fn pair() -> io::Result<(UnixStream, UnixStream)> {
        let (a, b) = sockopt::unix_pair(libc::SOCK_STREAM)?;
        Ok((
            Self::from_core(StreamCore::new(a)),
            Self::from_core(StreamCore::new(b)),
        ))
    }

    /// Adopts a connected std stream. Never fails today; returns `io::Result` as tokio's
    /// does.
    pub fn from_std(stream: std::os::unix::net::UnixStream) -> io::Result<UnixStream> {
        Ok(Self::from_core(StreamCore::new(stream.into())))
    }

    /// The std stream (see [`TcpStream::into_std`](crate::TcpStream::into_std)).
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixStream> {
        match self.core.into_owned_fd() {
            Ok(fd) => fd.map(Into::into),
            Err((core, reason)) => Err(IntoStdError::new(Self::from_core(core), reason).into()),
        }
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        sockopt::local(self).map(SocketAddr::from_raw)
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        sockopt::peer(self).map(SocketAddr::from_raw)
    }

    stream_common_methods!();
    stream_ready_method!();
    stream_try_io_methods!();
    stream_read_methods!();
    stream_write_methods!();
    stream_reply_method!();
}

impl_async_read!(UnixStream);
impl_async_read!(&UnixStream);
impl_async_write!(UnixStream, reads);
impl_async_write!(&UnixStream, reads);
impl_poll_source!(UnixStream, read: true, write: true);
impl_poll_source!(&UnixStream, read: true, write: true);

impl_as_fd!(UnixStream, |s| s.core.fd().as_raw_fd());
take_error_method!(UnixStream);
