//! `IORING_OP_SOCKET` (Linux 5.19), with `socket(2)` where the kernel lacks it.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use ringsteal_uring::abi::IORING_OP_SOCKET;
use ringsteal_uring::opcode;

use crate::op::support::has_opcode;
use crate::op::{cqe_result, Op, Operation, Sqes};

/// A new socket, `SOCK_CLOEXEC` added to `ty`: through the ring (`IORING_OP_SOCKET`) where
/// the kernel has it, by a plain `socket(2)` call otherwise (it does not block). The
/// descriptor is owned: if the future is dropped after the kernel created it, it is closed.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let fd = ringsteal_rt::op::socket(libc::AF_INET, libc::SOCK_STREAM, 0).await.unwrap();
///     let _ = fd;
/// });
/// ```
pub async fn socket(domain: i32, ty: i32, protocol: i32) -> io::Result<OwnedFd> {
    let ty = ty | libc::SOCK_CLOEXEC;
    if has_opcode(IORING_OP_SOCKET) {
        Op::new(Socket::new(domain, ty, protocol)).await
    } else {
        socket_now(domain, ty, protocol)
    }
}

/// `socket(2)`, now, on this thread (it never blocks). `SOCK_CLOEXEC` is added.
pub fn socket_now(domain: i32, ty: i32, protocol: i32) -> io::Result<OwnedFd> {
    // SAFETY: plain system call; a non-negative result is a new descriptor nobody owns.
    let fd = unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, protocol) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The operation behind [`socket`]: `IORING_OP_SOCKET` (Linux 5.19), which fails with
/// `ErrorKind::Unsupported` where the runtime may not use it ([`socket`] then makes the
/// socket with `socket(2)`).
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let fd = ringsteal_rt::op::Op::new(ringsteal_rt::op::Socket::new(libc::AF_UNIX, libc::SOCK_STREAM, 0)).await;
///     assert!(fd.is_ok());
/// });
/// ```
#[derive(Debug)]
pub struct Socket {
    domain: i32,
    ty: i32,
    protocol: i32,
}

impl Socket {
    /// The operation's data (`SOCK_CLOEXEC` added to `ty`); [`socket`] picks it or the
    /// `socket(2)` fallback.
    pub fn new(domain: i32, ty: i32, protocol: i32) -> Self {
        Socket {
            domain,
            ty: ty | libc::SOCK_CLOEXEC,
            protocol,
        }
    }
}

// SAFETY: references no memory.
unsafe impl Operation for Socket {
    const REQUIRES: Option<u8> = Some(ringsteal_uring::abi::IORING_OP_SOCKET);
    type Output = io::Result<OwnedFd>;
    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::socket(self.domain, self.ty, self.protocol))
    }
    fn complete(self, results: &[(i32, u32)]) -> io::Result<OwnedFd> {
        // SAFETY: a non-negative result of SOCKET is a new descriptor nobody else owns; if
        // the future is gone, the OwnedFd built here is dropped, closing it.
        cqe_result(results[0].0).map(|fd| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
    }
    fn fail(self, err: io::Error) -> io::Result<OwnedFd> {
        Err(err)
    }
}
