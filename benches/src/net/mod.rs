//! Shared, runtime-agnostic pieces of the networking suite (`benches/benches/net.rs`): the
//! std servers (`thread_server`: the echo peer and the thread-per-connection HTTP server),
//! the `wrk` driver with its server-CPU accounting (`wrk`), and the in-process HTTP client
//! that checks every server's answers (`http_client`), and what the http groups record beside
//! criterion's times (`report`) and the turns of the stream groups' interleaved runs
//! (`interleaved`). The ringsteal HTTP server itself is in `crate::http`, where
//! an example can reach it.

use std::io;
use std::net::{Ipv4Addr, TcpListener};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub mod http_client;
pub mod interleaved;
pub mod report;
pub mod thread_server;
pub mod wrk;

/// Raises this process's soft limit on open descriptors to its hard limit: the http groups
/// hold 1,000 connections (and their thread-per-connection server 1,000 threads).
pub fn raise_fd_limit() -> std::io::Result<()> {
    // SAFETY: rlimit is plain data; zeroed is a valid value.
    let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: `lim` is a valid rlimit to write into.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if lim.rlim_cur < lim.rlim_max {
        lim.rlim_cur = lim.rlim_max;
        // SAFETY: `lim` is a valid rlimit; raising the soft limit up to the hard one is allowed.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The listen backlog of every server of the http groups that this package makes its own
/// socket for (the std and raw io_uring servers): 1,024, what `tokio::net::TcpListener::bind`
/// and `ringsteal::net::TcpListener::bind` use. (std's `TcpListener::bind` uses 128, which a
/// burst of 1,000 connects overflows while its acceptor starts threads.)
pub const BACKLOG: i32 = 1024;

/// A TCP listener on `127.0.0.1:port` (0: a free port) with `SO_REUSEADDR`, `SO_REUSEPORT`
/// when `reuseport` (several listeners on one port, the kernel spreading connections over
/// them) and a backlog of [`BACKLOG`].
pub fn listen_loopback(port: u16, reuseport: bool) -> io::Result<TcpListener> {
    // SAFETY: socket has no memory preconditions; the result is checked.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let opts: &[libc::c_int] = if reuseport {
        &[libc::SO_REUSEADDR, libc::SO_REUSEPORT]
    } else {
        &[libc::SO_REUSEADDR]
    };
    let one: libc::c_int = 1;
    for &opt in opts {
        // SAFETY: passes a c_int of the size given.
        let rc = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    // SAFETY: sockaddr_in is plain data; zeroed is a valid value.
    let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    sa.sin_family = libc::AF_INET as libc::sa_family_t;
    sa.sin_port = port.to_be();
    sa.sin_addr.s_addr = u32::from(Ipv4Addr::LOCALHOST).to_be();
    // SAFETY: `sa` is a sockaddr_in of the size given.
    let rc = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    // SAFETY: listen has no memory preconditions.
    if rc != 0 || unsafe { libc::listen(fd.as_raw_fd(), BACKLOG) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(TcpListener::from(fd))
}
