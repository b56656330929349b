//! What one SQE can carry: the length of one transfer and the number of iovecs of one
//! vectored request. Larger requests are clamped here, so the kernel makes a short transfer
//! (as `read(2)`/`write(2)` and std's vectored calls do) instead of refusing them.
//!
//! Owns: the two limits. May not: know any opcode.

use std::os::fd::RawFd;

/// The largest single transfer the kernel makes (`MAX_RW_COUNT`: `INT_MAX` rounded down to
/// a page). A socket send or receive refuses a longer length with `EINVAL`; files clamp to it.
pub(crate) const MAX_TRANSFER: usize = (i32::MAX as usize) & !4095;

/// The most iovecs one `readv`/`writev`/`sendmsg`/`recvmsg` takes (`UIO_MAXIOV`); more is
/// `EINVAL` or `EMSGSIZE`.
pub(crate) const MAX_IOVECS: usize = 1024;

/// Clamps a buffer length to what one SQE transfers (a short transfer results, as with any
/// read or write).
pub(crate) fn sqe_len(n: usize) -> u32 {
    n.min(MAX_TRANSFER) as u32
}

/// Keeps the first [`MAX_IOVECS`] of `iov` (a short transfer results, as std's vectored
/// calls make): for files and byte streams.
pub(crate) fn sqe_iovecs(mut iov: Vec<libc::iovec>) -> Vec<libc::iovec> {
    iov.truncate(MAX_IOVECS);
    iov
}

/// As [`sqe_iovecs`] for a `sendmsg`/`recvmsg` on `fd`, but only if it is a stream socket:
/// on a datagram or seqpacket socket one request is one message, which a cut would send
/// short or receive truncated without a sign, so there too many iovecs stay the kernel's
/// refusal (`EMSGSIZE`). (The socket type is asked only past the limit.)
pub(crate) fn msg_iovecs(fd: RawFd, iov: Vec<libc::iovec>) -> Vec<libc::iovec> {
    if iov.len() > MAX_IOVECS && is_stream_socket(fd) {
        sqe_iovecs(iov)
    } else {
        iov
    }
}

fn is_stream_socket(fd: RawFd) -> bool {
    let mut kind: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `kind`, which outlives the call.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            (&mut kind as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    r == 0 && kind == libc::SOCK_STREAM
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_and_iovec_counts_are_clamped_to_the_kernels_limits() {
        assert_eq!(sqe_len(3), 3);
        assert_eq!(sqe_len(usize::MAX), 0x7fff_f000);
        assert_eq!(sqe_len(MAX_TRANSFER + 1) as usize, MAX_TRANSFER);
        let iov = vec![
            libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            };
            2000
        ];
        assert_eq!(sqe_iovecs(iov).len(), MAX_IOVECS);
    }
}
