//! [`SockAddr`]: socket address storage an operation owns (the kernel reads it for `CONNECT`
//! and `sendmsg`, and writes it for `ACCEPT` and `recvmsg`), with conversions to and from
//! std's `SocketAddr` and Unix-domain paths and abstract names.
//!
//! May not: allocate or call the kernel; it is plain bytes, checked under Miri.

use std::ffi::OsStr;
use std::fmt;
use std::io;
use std::mem::{size_of, zeroed};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Offset of `sun_path` in `sockaddr_un`.
const SUN_PATH_OFFSET: usize = std::mem::offset_of!(libc::sockaddr_un, sun_path);
/// The bytes `sun_path` holds (108 on Linux).
const SUN_PATH_LEN: usize = std::mem::size_of::<libc::sockaddr_un>() - SUN_PATH_OFFSET;

/// A socket address as the kernel sees it: a `sockaddr_storage` and its length. Lives inside
/// an operation (see [`connect`](super::connect), [`accept`](super::accept)), so the kernel
/// can read or fill it after the call that submitted the operation returned.
///
/// ```
/// use ringsteal_rt::op::SockAddr;
///
/// let v4: std::net::SocketAddr = "127.0.0.1:8080".parse().unwrap();
/// assert_eq!(SockAddr::from_std(&v4).as_std(), Some(v4));
///
/// let name = SockAddr::unix_abstract(b"ringsteal-doc").unwrap();
/// assert_eq!(name.as_abstract_name(), Some(&b"ringsteal-doc"[..]));
/// assert_eq!(name.as_std(), None);
/// ```
#[derive(Clone, Copy)]
pub struct SockAddr {
    storage: libc::sockaddr_storage,
    len: libc::socklen_t,
}

impl SockAddr {
    /// Room for any address, length set to the whole storage: what `accept` and `recvmsg`
    /// fill in.
    pub fn empty() -> Self {
        Self {
            // SAFETY: sockaddr_storage is plain bytes; all zeroes is AF_UNSPEC.
            storage: unsafe { zeroed() },
            len: size_of::<libc::sockaddr_storage>() as libc::socklen_t,
        }
    }

    /// An IPv4 or IPv6 address.
    pub fn from_std(addr: &SocketAddr) -> Self {
        let mut out = Self::empty();
        match addr {
            SocketAddr::V4(a) => {
                let sin = libc::sockaddr_in {
                    sin_family: libc::AF_INET as libc::sa_family_t,
                    sin_port: a.port().to_be(),
                    sin_addr: libc::in_addr {
                        s_addr: u32::from_ne_bytes(a.ip().octets()),
                    },
                    sin_zero: [0; 8],
                };
                // SAFETY: sockaddr_storage is large and aligned enough for any sockaddr.
                unsafe { out.as_mut_ptr().cast::<libc::sockaddr_in>().write(sin) };
                out.len = size_of::<libc::sockaddr_in>() as libc::socklen_t;
            }
            SocketAddr::V6(a) => {
                let sin6 = libc::sockaddr_in6 {
                    sin6_family: libc::AF_INET6 as libc::sa_family_t,
                    sin6_port: a.port().to_be(),
                    sin6_flowinfo: a.flowinfo(),
                    sin6_addr: libc::in6_addr {
                        s6_addr: a.ip().octets(),
                    },
                    sin6_scope_id: a.scope_id(),
                };
                // SAFETY: as above.
                unsafe { out.as_mut_ptr().cast::<libc::sockaddr_in6>().write(sin6) };
                out.len = size_of::<libc::sockaddr_in6>() as libc::socklen_t;
            }
        }
        out
    }

    /// A Unix-domain address. A path whose first byte is NUL names an abstract socket (the
    /// rest of the path is the name), the kernel's own convention (tokio refuses such a
    /// path; std has `from_abstract_name`). The empty
    /// path, as in std, asks `bind` for a unique abstract name the kernel picks (autobind).
    ///
    /// # Errors
    /// `InvalidInput` if the path is too long for `sun_path` or contains a NUL byte after
    /// the first.
    pub fn unix(path: impl AsRef<Path>) -> io::Result<Self> {
        let bytes = path.as_ref().as_os_str().as_bytes();
        match bytes.split_first() {
            Some((0, name)) => Self::unix_abstract(name),
            _ => {
                if bytes.contains(&0) {
                    return Err(invalid("a Unix socket path may not contain a NUL byte"));
                }
                // A pathname keeps room for its terminating NUL. The empty path is the
                // family alone (as std passes it): `bind` autobinds a unique abstract name,
                // `connect` is `EINVAL`; with a NUL it would be the abstract name "", one
                // name for the whole network namespace.
                Self::unix_raw(bytes, usize::from(!bytes.is_empty()))
            }
        }
    }

    /// A Unix address the kernel reported (std's `SocketAddr`, for one): a pathname, an
    /// abstract name (`abstract_name`, without its leading NUL) or, with neither, unnamed.
    /// Unlike [`unix`](Self::unix) it keeps a path that fills `sun_path` whole (108 bytes
    /// and no terminating NUL), which Linux binds and reports and `unix` refuses as input,
    /// and a path ends at its first NUL byte, as the kernel reads one.
    ///
    /// # Errors
    /// `InvalidInput` for a path or name longer than `sun_path` (no address the kernel
    /// reports is), or an empty path.
    pub fn unix_reported(path: Option<&Path>, abstract_name: Option<&[u8]>) -> io::Result<Self> {
        match (path, abstract_name) {
            (Some(path), _) => {
                let bytes = path.as_os_str().as_bytes();
                let bytes = &bytes[..bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len())];
                match bytes.len() {
                    0 => Err(invalid("an empty path names no Unix socket")),
                    SUN_PATH_LEN => Self::unix_raw(bytes, 0),
                    _ => Self::unix_raw(bytes, 1),
                }
            }
            (None, Some(name)) => Self::unix_abstract(name),
            (None, None) => Ok(Self::unix_unnamed()),
        }
    }

    /// An unnamed Unix address: the family alone, as the kernel reports an unbound socket
    /// (and as `unix("")` makes).
    pub fn unix_unnamed() -> Self {
        let mut out = Self::empty();
        out.storage.ss_family = libc::AF_UNIX as libc::sa_family_t;
        out.len = SUN_PATH_OFFSET as libc::socklen_t;
        out
    }

    /// An abstract Unix-domain address (Linux): `name` without the leading NUL.
    ///
    /// # Errors
    /// `InvalidInput` if the name is too long for `sun_path`.
    pub fn unix_abstract(name: &[u8]) -> io::Result<Self> {
        let mut bytes = Vec::with_capacity(name.len() + 1);
        bytes.push(0);
        bytes.extend_from_slice(name);
        Self::unix_raw(&bytes, 0)
    }

    /// `sun_path = bytes` (plus `terminator` zero bytes counted in the length).
    fn unix_raw(bytes: &[u8], terminator: usize) -> io::Result<Self> {
        let mut out = Self::empty();
        // SAFETY: zeroes are a valid sockaddr_un.
        let mut sun: libc::sockaddr_un = unsafe { zeroed() };
        if bytes.len() + terminator > sun.sun_path.len() {
            return Err(invalid(
                "Unix socket path too long (sun_path holds 108 bytes)",
            ));
        }
        sun.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (dst, &src) in sun.sun_path.iter_mut().zip(bytes) {
            *dst = src as libc::c_char;
        }
        // SAFETY: sockaddr_storage is large and aligned enough for sockaddr_un.
        unsafe { out.as_mut_ptr().cast::<libc::sockaddr_un>().write(sun) };
        out.len = (SUN_PATH_OFFSET + bytes.len() + terminator) as libc::socklen_t;
        Ok(out)
    }

    /// The address family (`AF_INET`, `AF_INET6`, `AF_UNIX`, ...).
    pub fn family(&self) -> i32 {
        i32::from(self.storage.ss_family)
    }

    /// The IPv4 or IPv6 address, or `None` for another family (or a truncated length).
    pub fn as_std(&self) -> Option<SocketAddr> {
        let len = self.len as usize;
        match self.family() {
            libc::AF_INET if len >= size_of::<libc::sockaddr_in>() => {
                // SAFETY: the family says the storage holds a sockaddr_in; storage is aligned.
                let sin = unsafe { &*(self.as_ptr().cast::<libc::sockaddr_in>()) };
                let ip = Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
                Some(SocketAddrV4::new(ip, u16::from_be(sin.sin_port)).into())
            }
            libc::AF_INET6 if len >= size_of::<libc::sockaddr_in6>() => {
                // SAFETY: as above, for sockaddr_in6.
                let sin6 = unsafe { &*(self.as_ptr().cast::<libc::sockaddr_in6>()) };
                let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
                let port = u16::from_be(sin6.sin6_port);
                Some(SocketAddrV6::new(ip, port, sin6.sin6_flowinfo, sin6.sin6_scope_id).into())
            }
            _ => None,
        }
    }

    /// `sun_path` as the kernel reported it (up to the length), for `AF_UNIX`.
    fn sun_path(&self) -> Option<&[u8]> {
        if self.family() != libc::AF_UNIX {
            return None;
        }
        let len = (self.len as usize).saturating_sub(SUN_PATH_OFFSET).min(108);
        // SAFETY: the family says the storage holds a sockaddr_un; `len` stays within
        // sun_path (108 bytes), which lies inside the storage.
        let path = unsafe {
            std::slice::from_raw_parts(self.as_ptr().cast::<u8>().add(SUN_PATH_OFFSET), len)
        };
        Some(path)
    }

    /// For a Unix pathname address, the path.
    pub fn as_unix_path(&self) -> Option<&Path> {
        let path = self.sun_path()?;
        match path.first() {
            None | Some(0) => None,
            Some(_) => {
                // A pathname ends at its NUL (the kernel may count it in the length or not).
                let end = path.iter().position(|&b| b == 0).unwrap_or(path.len());
                Some(Path::new(OsStr::from_bytes(&path[..end])))
            }
        }
    }

    /// For an abstract Unix address, the name (without the leading NUL).
    pub fn as_abstract_name(&self) -> Option<&[u8]> {
        match self.sun_path()? {
            [0, name @ ..] => Some(name),
            _ => None,
        }
    }

    /// True for a Unix address with no name (an unbound socket, the peer of a `pair()`).
    pub fn is_unnamed(&self) -> bool {
        self.sun_path().is_some_and(<[u8]>::is_empty)
    }

    /// Pointer for the kernel to read.
    pub fn as_ptr(&self) -> *const libc::sockaddr {
        (&self.storage as *const libc::sockaddr_storage).cast()
    }

    /// Pointer for the kernel to fill.
    pub fn as_mut_ptr(&mut self) -> *mut libc::sockaddr {
        (&mut self.storage as *mut libc::sockaddr_storage).cast()
    }

    /// Pointers for the kernel to fill the address and update its length through, both at
    /// once (`recvfrom`, `accept`): taken from the two fields separately, so neither
    /// invalidates the other.
    pub fn as_mut_parts(&mut self) -> (*mut libc::sockaddr, *mut libc::socklen_t) {
        (
            std::ptr::addr_of_mut!(self.storage).cast(),
            std::ptr::addr_of_mut!(self.len),
        )
    }

    /// The address length.
    pub fn len(&self) -> libc::socklen_t {
        self.len
    }

    /// True if the length is zero (nothing was filled in).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The length, for the kernel to update (`accept`, `getsockname`).
    pub fn len_mut(&mut self) -> &mut libc::socklen_t {
        &mut self.len
    }

    /// `getsockname(fd)`.
    pub fn local_of(fd: std::os::fd::BorrowedFd<'_>) -> io::Result<Self> {
        Self::query(fd, libc::getsockname)
    }

    /// `getpeername(fd)`.
    pub fn peer_of(fd: std::os::fd::BorrowedFd<'_>) -> io::Result<Self> {
        Self::query(fd, libc::getpeername)
    }

    fn query(
        fd: std::os::fd::BorrowedFd<'_>,
        call: unsafe extern "C" fn(
            libc::c_int,
            *mut libc::sockaddr,
            *mut libc::socklen_t,
        ) -> libc::c_int,
    ) -> io::Result<Self> {
        use std::os::fd::AsRawFd;
        let mut out = Self::empty();
        // SAFETY: the kernel writes at most `len` bytes into the storage and updates `len`.
        let rc = unsafe { call(fd.as_raw_fd(), out.as_mut_ptr(), &mut out.len) };
        if rc == 0 {
            Ok(out)
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

fn invalid(msg: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

impl fmt::Debug for SockAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(a) = self.as_std() {
            return fmt::Debug::fmt(&a, f);
        }
        if let Some(p) = self.as_unix_path() {
            return write!(f, "{p:?} (unix)");
        }
        if let Some(n) = self.as_abstract_name() {
            return write!(f, "\"\\0{}\" (unix, abstract)", n.escape_ascii());
        }
        if self.is_unnamed() {
            return f.write_str("(unnamed unix)");
        }
        write!(f, "SockAddr(family {}, {} bytes)", self.family(), self.len)
    }
}

impl PartialEq for SockAddr {
    fn eq(&self, other: &Self) -> bool {
        let bytes = |a: &SockAddr| {
            // SAFETY: `len` bytes of the storage are the address (capped at the storage size).
            unsafe {
                std::slice::from_raw_parts(
                    a.as_ptr().cast::<u8>(),
                    (a.len as usize).min(size_of::<libc::sockaddr_storage>()),
                )
            }
        };
        bytes(self) == bytes(other)
    }
}

impl Eq for SockAddr {}

impl From<SocketAddr> for SockAddr {
    fn from(a: SocketAddr) -> Self {
        Self::from_std(&a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_and_ipv6_addresses_round_trip() {
        for s in ["127.0.0.1:1", "0.0.0.0:65535", "[::1]:80", "[fe80::1%3]:9"] {
            let a: SocketAddr = s.parse().unwrap();
            assert_eq!(SockAddr::from_std(&a).as_std(), Some(a), "{s}");
        }
    }

    #[test]
    fn a_unix_path_is_nul_terminated_within_the_length() {
        let a = SockAddr::unix("/tmp/sock").unwrap();
        assert_eq!(a.family(), libc::AF_UNIX);
        assert_eq!(a.len() as usize, SUN_PATH_OFFSET + 10);
        assert_eq!(a.as_unix_path(), Some(Path::new("/tmp/sock")));
        assert_eq!(a.as_abstract_name(), None);
        assert!(!a.is_unnamed());
    }

    #[test]
    fn a_leading_nul_names_an_abstract_socket() {
        let a = SockAddr::unix("\0abc").unwrap();
        assert_eq!(a.as_abstract_name(), Some(&b"abc"[..]));
        assert_eq!(a.len() as usize, SUN_PATH_OFFSET + 4);
        assert_eq!(a.as_unix_path(), None);
        assert_eq!(a, SockAddr::unix_abstract(b"abc").unwrap());
    }

    #[test]
    fn bad_unix_paths_are_refused() {
        let long = "x".repeat(108);
        assert_eq!(
            SockAddr::unix(&long).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
        assert!(SockAddr::unix("x".repeat(107)).is_ok());
        assert_eq!(
            SockAddr::unix("a\0b").unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    }

    #[test]
    fn a_reported_unix_address_keeps_what_the_kernel_reports() {
        let full = "x".repeat(108);
        let a = SockAddr::unix_reported(Some(Path::new(&full)), None).unwrap();
        assert_eq!(
            a.len() as usize,
            SUN_PATH_OFFSET + 108,
            "no terminator counted"
        );
        assert_eq!(a.as_unix_path(), Some(Path::new(&full)));
        let short = SockAddr::unix_reported(Some(Path::new("/tmp/s")), None).unwrap();
        assert_eq!(short, SockAddr::unix("/tmp/s").unwrap());
        let named = SockAddr::unix_reported(None, Some(b"abc")).unwrap();
        assert_eq!(named, SockAddr::unix_abstract(b"abc").unwrap());
        assert!(SockAddr::unix_reported(None, None).unwrap().is_unnamed());
        assert_eq!(SockAddr::unix_unnamed(), SockAddr::unix("").unwrap());
        let kind = |r: io::Result<SockAddr>| r.unwrap_err().kind();
        let too_long = "x".repeat(109);
        assert_eq!(
            kind(SockAddr::unix_reported(Some(Path::new(&too_long)), None)),
            io::ErrorKind::InvalidInput
        );
        assert_eq!(
            kind(SockAddr::unix_reported(Some(Path::new("")), None)),
            io::ErrorKind::InvalidInput
        );
        let nul = SockAddr::unix_reported(Some(Path::new("/tmp/s\0junk")), None).unwrap();
        assert_eq!(nul, short, "a path ends at its NUL");
    }

    #[test]
    fn an_empty_unix_address_is_unnamed() {
        let mut a = SockAddr::empty();
        // SAFETY: writing the family field of the zeroed storage.
        unsafe { (*a.as_mut_ptr()).sa_family = libc::AF_UNIX as libc::sa_family_t };
        *a.len_mut() = SUN_PATH_OFFSET as libc::socklen_t;
        assert!(a.is_unnamed());
        assert_eq!(format!("{a:?}"), "(unnamed unix)");
    }
}
