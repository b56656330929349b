//! [`SocketAddr`]: the address of a Unix-domain socket (a path, an abstract name, or none).

use std::fmt;
use std::path::Path;

use ringsteal_rt::op::SockAddr;

/// The address of a Unix-domain socket: a path in the file system, an abstract name
/// (Linux), or unnamed (an unbound socket, either end of a `pair()`).
///
/// ```
/// use ringsteal_net::UnixDatagram;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let named = UnixDatagram::bind(format!("\0ringsteal-doc-addr-{}", std::process::id()))?;
///     let addr = named.local_addr()?;
///     assert!(addr.as_abstract_name().unwrap().starts_with(b"ringsteal-doc-addr-"));
///     assert_eq!(addr.as_pathname(), None);
///     assert!(UnixDatagram::unbound()?.local_addr()?.is_unnamed());
///     Ok::<(), std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SocketAddr(SockAddr);

impl SocketAddr {
    pub(crate) fn from_raw(addr: SockAddr) -> Self {
        Self(addr)
    }

    pub(crate) fn raw(&self) -> SockAddr {
        self.0
    }

    /// The path, for an address in the file system.
    pub fn as_pathname(&self) -> Option<&Path> {
        self.0.as_unix_path()
    }

    /// The name (without its leading NUL), for an abstract address.
    pub fn as_abstract_name(&self) -> Option<&[u8]> {
        self.0.as_abstract_name()
    }

    /// True for an unnamed socket. (The kernel reports an unnamed sender of a datagram with
    /// an empty address, not even a family.)
    pub fn is_unnamed(&self) -> bool {
        self.as_pathname().is_none() && self.as_abstract_name().is_none()
    }
}

/// std's address of a Unix-domain socket, as tokio's `From`: what tokio code builds with
/// `std::os::unix::net::SocketAddr::from_pathname` or (Linux) `from_abstract_name` and hands
/// to [`UnixListener::bind_addr`](crate::UnixListener::bind_addr) or
/// [`UnixStream::connect_addr`](crate::UnixStream::connect_addr).
///
/// ```
/// use std::os::linux::net::SocketAddrExt;
///
/// let std_addr = std::os::unix::net::SocketAddr::from_abstract_name(b"ringsteal-doc").unwrap();
/// let addr = ringsteal_net::unix::SocketAddr::from(std_addr);
/// assert_eq!(addr.as_abstract_name(), Some(&b"ringsteal-doc"[..]));
/// ```
impl From<std::os::unix::net::SocketAddr> for SocketAddr {
    fn from(addr: std::os::unix::net::SocketAddr) -> Self {
        use std::os::linux::net::SocketAddrExt;
        // std's address was a `sockaddr_un` the kernel or `from_pathname` /
        // `from_abstract_name` made, so its path or name fits `sun_path`, and std reports an
        // empty path as the abstract name "". Were one refused all the same, it becomes
        // unnamed, which binding and connecting refuse with `InvalidInput`.
        let raw = SockAddr::unix_reported(addr.as_pathname(), addr.as_abstract_name())
            .unwrap_or_else(|_| SockAddr::unix_unnamed());
        Self(raw)
    }
}

/// The same address as std's, as tokio's `From`: for std's
/// `UnixListener::bind_addr`/`UnixStream::connect_addr`, or code that matches on
/// `as_pathname()`.
///
/// One address does not carry over: a path of the whole 108 bytes of `sun_path`, with no
/// NUL after it, which another program may bind and the kernel then reports, but std can
/// neither make nor bind (`from_pathname` refuses it). It becomes unnamed; the conversion
/// never panics.
///
/// ```
/// use std::os::linux::net::SocketAddrExt;
///
/// let ours = ringsteal_net::unix::SocketAddr::from(
///     std::os::unix::net::SocketAddr::from_abstract_name(b"ringsteal-doc-back").unwrap(),
/// );
/// let std_addr = std::os::unix::net::SocketAddr::from(ours);
/// assert_eq!(std_addr.as_abstract_name(), Some(&b"ringsteal-doc-back"[..]));
/// ```
impl From<SocketAddr> for std::os::unix::net::SocketAddr {
    fn from(addr: SocketAddr) -> Self {
        use std::os::linux::net::SocketAddrExt;
        let made = match (addr.as_pathname(), addr.as_abstract_name()) {
            (Some(path), _) => Self::from_pathname(path),
            (None, Some(name)) => Self::from_abstract_name(name),
            (None, None) => Err(std::io::ErrorKind::InvalidInput.into()),
        };
        // An empty path is std's unnamed address (`is_unnamed`), which it always makes.
        made.or_else(|_| Self::from_pathname(""))
            .expect("std makes the unnamed address from an empty path")
    }
}

/// As std's (and so tokio's): `"/run/app.sock" (pathname)`, `"name" (abstract)`,
/// `(unnamed)`.
impl fmt::Debug for SocketAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = self.as_pathname() {
            return write!(f, "{path:?} (pathname)");
        }
        if let Some(name) = self.as_abstract_name() {
            return write!(f, "\"{}\" (abstract)", name.escape_ascii());
        }
        if self.is_unnamed() {
            return f.write_str("(unnamed)");
        }
        fmt::Debug::fmt(&self.0, f)
    }
}
