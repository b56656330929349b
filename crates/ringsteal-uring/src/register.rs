//! `io_uring_register` operations on a [`Ring`]: probe, files, buffers, eventfd, io-wq limits.
//!
//! Owns: the argument structs of each registration. May not: decide what to register.

use std::io;
use std::os::fd::RawFd;

use crate::abi::*;
use crate::probe::Probe;
use crate::ring::Ring;
use crate::sys;

impl Ring {
    fn register(&self, opcode: u32, arg: *const libc::c_void, nr: u32) -> io::Result<u32> {
        // SAFETY: every caller in this module passes an `arg` that is valid for `opcode` and
        // `nr`, and owns it for the duration of the call; none registers memory that outlives
        // its owner except `register_buffers`, whose own contract covers that.
        unsafe { sys::io_uring_register(self.fd(), opcode, arg, nr) }
    }

    /// `IORING_REGISTER_PROBE`: which opcodes this kernel supports.
    pub fn probe(&self) -> io::Result<Probe> {
        const CAP: usize = 256;
        #[repr(C)]
        struct ProbeBuf {
            head: io_uring_probe,
            ops: [io_uring_probe_op; CAP],
        }
        let mut buf = ProbeBuf {
            head: io_uring_probe::default(),
            ops: [io_uring_probe_op::default(); CAP],
        };
        self.register(
            IORING_REGISTER_PROBE,
            &mut buf as *mut ProbeBuf as *const _,
            CAP as u32,
        )?;
        let n = (buf.head.ops_len as usize).min(CAP);
        Ok(Probe::from_ops(buf.head.last_op, &buf.ops[..n]))
    }

    /// `IORING_REGISTER_FILES`: a fixed-file table holding `fds` (`-1` = empty slot).
    pub fn register_files(&self, fds: &[RawFd]) -> io::Result<()> {
        self.register(IORING_REGISTER_FILES, fds.as_ptr().cast(), fds.len() as u32)
            .map(drop)
    }

    /// `IORING_REGISTER_FILES2` with `IORING_RSRC_REGISTER_SPARSE`: an empty table of `n`
    /// slots, filled later with [`update_files`](Self::update_files) or direct opens.
    pub fn register_files_sparse(&self, n: u32) -> io::Result<()> {
        let reg = io_uring_rsrc_register {
            nr: n,
            flags: IORING_RSRC_REGISTER_SPARSE,
            ..Default::default()
        };
        self.register(
            IORING_REGISTER_FILES2,
            (&reg as *const io_uring_rsrc_register).cast(),
            std::mem::size_of_val(&reg) as u32,
        )
        .map(drop)
    }

    /// `IORING_REGISTER_FILES_UPDATE2`: replaces slots `offset..offset + fds.len()`
    /// (`-1` clears a slot). Returns how many slots were updated.
    pub fn update_files(&self, offset: u32, fds: &[RawFd]) -> io::Result<u32> {
        let up = io_uring_rsrc_update2 {
            offset,
            data: fds.as_ptr() as u64,
            nr: fds.len() as u32,
            ..Default::default()
        };
        self.register(
            IORING_REGISTER_FILES_UPDATE2,
            (&up as *const io_uring_rsrc_update2).cast(),
            std::mem::size_of_val(&up) as u32,
        )
    }

    /// `IORING_UNREGISTER_FILES`.
    pub fn unregister_files(&self) -> io::Result<()> {
        self.register(IORING_UNREGISTER_FILES, std::ptr::null(), 0)
            .map(drop)
    }

    /// `IORING_REGISTER_BUFFERS`: pins `iovecs` as fixed buffers 0..n for READ_FIXED/WRITE_FIXED.
    /// Counts against `RLIMIT_MEMLOCK`; `ENOMEM` means that limit was reached.
    ///
    /// # Safety
    /// The memory the iovecs describe must stay allocated until
    /// [`unregister_buffers`](Self::unregister_buffers) or the ring is dropped, and until every
    /// fixed-buffer request using it has completed.
    pub unsafe fn register_buffers(&self, iovecs: &[libc::iovec]) -> io::Result<()> {
        self.register(
            IORING_REGISTER_BUFFERS,
            iovecs.as_ptr().cast(),
            iovecs.len() as u32,
        )
        .map(drop)
        .map_err(memlock_hint)
    }

    /// `IORING_UNREGISTER_BUFFERS`.
    pub fn unregister_buffers(&self) -> io::Result<()> {
        self.register(IORING_UNREGISTER_BUFFERS, std::ptr::null(), 0)
            .map(drop)
    }

    /// `IORING_REGISTER_EVENTFD`: the kernel signals `fd` whenever it posts a CQE.
    pub fn register_eventfd(&self, fd: RawFd) -> io::Result<()> {
        self.register(IORING_REGISTER_EVENTFD, (&fd as *const RawFd).cast(), 1)
            .map(drop)
    }

    /// `IORING_UNREGISTER_EVENTFD`.
    pub fn unregister_eventfd(&self) -> io::Result<()> {
        self.register(IORING_UNREGISTER_EVENTFD, std::ptr::null(), 0)
            .map(drop)
    }

    /// `IORING_REGISTER_IOWQ_MAX_WORKERS`: sets the maximum bounded and unbounded io-wq workers
    /// (`0` leaves a value unchanged); returns the previous values.
    pub fn register_iowq_max_workers(&self, bounded: u32, unbounded: u32) -> io::Result<[u32; 2]> {
        let mut vals = [bounded, unbounded];
        self.register(
            IORING_REGISTER_IOWQ_MAX_WORKERS,
            vals.as_mut_ptr().cast(),
            2,
        )?;
        Ok(vals)
    }
}

/// Adds the memlock explanation to an `ENOMEM` from a registration.
pub(crate) fn memlock_hint(err: io::Error) -> io::Error {
    if err.raw_os_error() != Some(libc::ENOMEM) {
        return err;
    }
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the valid, owned `lim`.
    unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) };
    io::Error::new(
        io::ErrorKind::OutOfMemory,
        format!(
            "io_uring registration returned ENOMEM: registered memory counts against \
             RLIMIT_MEMLOCK, which is {} KiB. Fix: raise it (`ulimit -l`, LimitMEMLOCK= in \
             systemd, --ulimit memlock= in Docker) or register less",
            lim.rlim_cur / 1024
        ),
    )
}
