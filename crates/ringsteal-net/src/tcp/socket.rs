//! [`TcpSocket`]: a TCP socket not yet connected or listening, for options that must be set
//! before (`SO_REUSEADDR`, `SO_REUSEPORT`, buffer sizes, a local address, a backlog).

use std::io;
use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::time::Duration;

use ringsteal_rt::op::{self, SharedFd, SockAddr};

use super::{TcpListener, TcpStream};
use crate::sockopt;

/// A TCP socket to configure, then [`connect`](Self::connect) or [`listen`](Self::listen)
/// on, as tokio's `TcpSocket`. Creating, configuring, binding and listening are plain system
/// calls that never block; connecting is an `IORING_OP_CONNECT`.
///
/// ```
/// use ringsteal_net::{TcpSocket, TcpStream};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let socket = TcpSocket::new_v4()?;
///     socket.set_reuseaddr(true)?;
///     socket.set_reuseport(true)?;
///     socket.set_recv_buffer_size(1 << 16)?;
///     socket.bind("127.0.0.1:0".parse().unwrap())?;
///     let listener = socket.listen(128)?;
///
///     let client = TcpSocket::new_v4()?;
///     client.set_nodelay(true)?;
///     let stream: TcpStream = client.connect(listener.local_addr()?).await?;
///     assert!(stream.nodelay()?);
///     Ok::<(), std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct TcpSocket {
    fd: OwnedFd,
}

impl TcpSocket {
    /// A new IPv4 TCP socket.
    pub fn new_v4() -> io::Result<TcpSocket> {
        Self::new(libc::AF_INET)
    }

    /// A new IPv6 TCP socket.
    pub fn new_v6() -> io::Result<TcpSocket> {
        Self::new(libc::AF_INET6)
    }

    /// Adopts a TCP socket made elsewhere (by `socket2`, say, for an option this type has
    /// no setter for) that is neither connected nor listening yet, as tokio's
    /// `from_std_stream`: std has no type for such a socket, so it comes as a
    /// `std::net::TcpStream`. It keeps its options and its blocking mode; the ring does not
    /// need non-blocking mode.
    ///
    /// ```
    /// use std::os::fd::FromRawFd;
    /// use ringsteal_net::TcpSocket;
    ///
    /// // SAFETY: a plain system call.
    /// let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    /// assert!(raw >= 0);
    /// // SAFETY: a new descriptor nothing else owns; the std stream takes it over.
    /// let std_socket = unsafe { std::net::TcpStream::from_raw_fd(raw) };
    /// let socket = TcpSocket::from_std_stream(std_socket);
    /// socket.set_reuseaddr(true).unwrap();
    /// socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    /// let listener = socket.listen(16).unwrap();
    /// assert!(listener.local_addr().unwrap().port() > 0);
    /// ```
    pub fn from_std_stream(std_stream: std::net::TcpStream) -> TcpSocket {
        Self {
            fd: std_stream.into(),
        }
    }

    /// A socket of the family of `addr`.
    pub(crate) fn for_addr(addr: SocketAddr) -> io::Result<TcpSocket> {
        if addr.is_ipv4() {
            Self::new_v4()
        } else {
            Self::new_v6()
        }
    }

    fn new(domain: i32) -> io::Result<TcpSocket> {
        Ok(Self {
            fd: op::socket_now(domain, libc::SOCK_STREAM, 0)?,
        })
    }

    /// Sets `SO_REUSEADDR` (bind to a port with connections in `TIME_WAIT`).
    pub fn set_reuseaddr(&self, on: bool) -> io::Result<()> {
        sockopt::set_flag(self, libc::SOL_SOCKET, libc::SO_REUSEADDR, on)
    }

    /// `SO_REUSEADDR`.
    pub fn reuseaddr(&self) -> io::Result<bool> {
        sockopt::flag(self, libc::SOL_SOCKET, libc::SO_REUSEADDR)
    }

    /// Sets `SO_REUSEPORT` (several sockets listen on one port; the kernel spreads the
    /// connections among them).
    pub fn set_reuseport(&self, on: bool) -> io::Result<()> {
        sockopt::set_flag(self, libc::SOL_SOCKET, libc::SO_REUSEPORT, on)
    }

    /// `SO_REUSEPORT`.
    pub fn reuseport(&self) -> io::Result<bool> {
        sockopt::flag(self, libc::SOL_SOCKET, libc::SO_REUSEPORT)
    }

    /// Sets `SO_SNDBUF` (the kernel doubles it and clamps it to its limits).
    pub fn set_send_buffer_size(&self, size: u32) -> io::Result<()> {
        sockopt::set(self, libc::SOL_SOCKET, libc::SO_SNDBUF, size as libc::c_int)
    }

    /// `SO_SNDBUF`, as the kernel reports it.
    pub fn send_buffer_size(&self) -> io::Result<u32> {
        sockopt::get::<libc::c_int>(self, libc::SOL_SOCKET, libc::SO_SNDBUF).map(|v| v as u32)
    }

    /// Sets `SO_RCVBUF` (the kernel doubles it and clamps it to its limits).
    pub fn set_recv_buffer_size(&self, size: u32) -> io::Result<()> {
        sockopt::set(self, libc::SOL_SOCKET, libc::SO_RCVBUF, size as libc::c_int)
    }

    /// `SO_RCVBUF`, as the kernel reports it.
    pub fn recv_buffer_size(&self) -> io::Result<u32> {
        sockopt::get::<libc::c_int>(self, libc::SOL_SOCKET, libc::SO_RCVBUF).map(|v| v as u32)
    }

    /// Sets `SO_KEEPALIVE`.
    pub fn set_keepalive(&self, on: bool) -> io::Result<()> {
        sockopt::set_flag(self, libc::SOL_SOCKET, libc::SO_KEEPALIVE, on)
    }

    /// `SO_KEEPALIVE`.
    pub fn keepalive(&self) -> io::Result<bool> {
        sockopt::flag(self, libc::SOL_SOCKET, libc::SO_KEEPALIVE)
    }

    /// Sets `SO_LINGER` (see [`TcpStream::set_linger`]: a linger longer than zero blocks the
    /// shard that closes the socket).
    pub fn set_linger(&self, linger: Option<Duration>) -> io::Result<()> {
        sockopt::set_linger(self, linger)
    }

    /// Sets `SO_LINGER` to zero, as tokio's `set_zero_linger`: closing the connection made
    /// from this socket resets it (see [`TcpStream::set_zero_linger`]).
    ///
    /// ```
    /// let socket = ringsteal_net::TcpSocket::new_v4().unwrap();
    /// socket.set_zero_linger().unwrap();
    /// assert_eq!(socket.linger().unwrap(), Some(std::time::Duration::ZERO));
    /// ```
    pub fn set_zero_linger(&self) -> io::Result<()> {
        sockopt::set_linger(self, Some(Duration::ZERO))
    }

    /// `SO_LINGER`.
    pub fn linger(&self) -> io::Result<Option<Duration>> {
        sockopt::linger(self)
    }

    /// Sets `TCP_NODELAY`.
    pub fn set_nodelay(&self, on: bool) -> io::Result<()> {
        sockopt::set_flag(self, libc::IPPROTO_TCP, libc::TCP_NODELAY, on)
    }

    /// `TCP_NODELAY`.
    pub fn nodelay(&self) -> io::Result<bool> {
        sockopt::flag(self, libc::IPPROTO_TCP, libc::TCP_NODELAY)
    }

    /// Binds to a local address.
    ///
    /// # Errors
    /// `AddrInUse` if another socket holds it (without `SO_REUSEPORT` on both).
    pub fn bind(&self, addr: SocketAddr) -> io::Result<()> {
        sockopt::bind(self, &SockAddr::from_std(&addr))
    }

    /// The local address (after `bind`, or the one the kernel picked).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        sockopt::ip(sockopt::local(self)?)
    }

    /// Connects (`IORING_OP_CONNECT`) and becomes a stream.
    pub async fn connect(self, addr: SocketAddr) -> io::Result<TcpStream> {
        TcpStream::connect_fd(SharedFd::new(self.fd), addr).await
    }

    /// Listens, with a queue of up to `backlog` connections not yet accepted.
    pub fn listen(self, backlog: u32) -> io::Result<TcpListener> {
        sockopt::listen(&self, backlog)?;
        Ok(TcpListener::from_fd(SharedFd::new(self.fd)))
    }
}

impl_as_fd!(TcpSocket, |s| s.fd.as_raw_fd());
take_error_method!(TcpSocket);
ip_socket_options!(
    TcpSocket,
    "    let socket = ringsteal_net::TcpSocket::new_v4()?;\n",
    "    let Ok(socket) = ringsteal_net::TcpSocket::new_v6() else {\n        return Ok(()); // a kernel without IPv6\n    };\n"
);
