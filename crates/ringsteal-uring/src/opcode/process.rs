//! WAITID.

use super::base;
use crate::abi::*;

/// `IORING_OP_WAITID` (6.7): `waitid(idtype, id, infop, options)` as a request. Completes with
/// `res = 0` once a child matching `idtype`/`id` changes state as `options` (`WEXITED`, ...)
/// asks, having written its `siginfo_t` (`si_signo`, `si_code`, `si_pid`, `si_uid`,
/// `si_status`) to `infop`; `-ECHILD` if there is no such child (already reaped). With
/// `P_PIDFD`, `id` is a pidfd: the child is named by the descriptor, not by a pid that may be
/// reused. `infop` must stay valid until the CQE (it may be null: no status is written).
///
/// Layout (`io_uring/waitid.c`): `len` = idtype, `fd` = id, `file_index` = options,
/// `addr2` = infop; `addr`, `buf_index`, `addr3` and `waitid_flags` must be zero.
///
/// ```
/// use ringsteal_uring::{abi::IORING_OP_WAITID, opcode};
///
/// // SAFETY: all-zero is a valid siginfo_t.
/// let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
/// let sqe = opcode::waitid(libc::P_PIDFD, 7, &mut info, libc::WEXITED);
/// assert_eq!(sqe.opcode, IORING_OP_WAITID);
/// assert_eq!((sqe.len, sqe.fd), (libc::P_PIDFD, 7));
/// ```
pub fn waitid(
    idtype: libc::idtype_t,
    id: i32,
    infop: *mut libc::siginfo_t,
    options: i32,
) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_WAITID, id, 0, idtype, 0);
    sqe.off.addr2 = infop as u64;
    sqe.file_index.file_index = options as u32;
    sqe
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waitid_puts_each_argument_where_the_kernel_reads_it() {
        let mut info = std::mem::MaybeUninit::<libc::siginfo_t>::uninit();
        let sqe = waitid(
            libc::P_PIDFD,
            42,
            info.as_mut_ptr(),
            libc::WEXITED | libc::WNOWAIT,
        );
        assert_eq!(sqe.opcode, IORING_OP_WAITID);
        assert_eq!(sqe.fd, 42);
        assert_eq!(sqe.len, libc::P_PIDFD);
        // SAFETY: every union member is an integer; reading any of them is sound.
        unsafe {
            assert_eq!(sqe.off.addr2, info.as_mut_ptr() as u64);
            assert_eq!(
                sqe.file_index.file_index,
                (libc::WEXITED | libc::WNOWAIT) as u32
            );
            assert_eq!(sqe.addr.addr, 0, "waitid rejects a non-zero addr");
            assert_eq!(sqe.op_flags.waitid_flags, 0, "waitid rejects flags");
            assert_eq!({ sqe.buf.buf_index }, 0);
            assert_eq!(sqe.addr3.addr3.addr3, 0);
        }
    }
}
