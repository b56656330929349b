//! A seccomp filter that makes one system call fail with a chosen errno, as a container's
//! profile or a sandbox does, for the calling thread (and threads it starts later) from now
//! on. Shared by the tests that need a refusal for real (this crate's `setup_errors.rs`,
//! `ringsteal-rt`'s `refused_syscalls.rs` through `#[path]`). Calls only `prctl` and
//! `seccomp`: safe in a forked child.

#![allow(dead_code)]

/// The audit architecture value the filter checks, for the architectures ringsteal is
/// tested on.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64 (EM_X86_64 | 64BIT | LE)
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64
#[cfg(target_arch = "riscv64")]
const AUDIT_ARCH: u32 = 0xC000_00F3; // AUDIT_ARCH_RISCV64

/// Why the filter could not be installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotInstalled {
    NoNewPrivs,
    Seccomp,
}

/// Makes system call `nr` fail with `errno` from now on, in the calling thread (and the
/// threads it starts later).
pub(crate) fn refuse(nr: libc::c_long, errno: i32) -> Result<(), NotInstalled> {
    install(nr, errno, 0)
}

/// As [`refuse`], in every thread of the process at once (`SECCOMP_FILTER_FLAG_TSYNC`): a
/// sandbox applied to a running program.
pub(crate) fn refuse_in_every_thread(nr: libc::c_long, errno: i32) -> Result<(), NotInstalled> {
    install(nr, errno, libc::SECCOMP_FILTER_FLAG_TSYNC)
}

fn install(nr: libc::c_long, errno: i32, flags: libc::c_ulong) -> Result<(), NotInstalled> {
    let stmt = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code: u32, k: u32, jt: u8, jf: u8| libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    let arch = std::mem::offset_of!(libc::seccomp_data, arch) as u32;
    let number = std::mem::offset_of!(libc::seccomp_data, nr) as u32;
    let filter = [
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, arch),
        // Another architecture's syscall numbers mean something else: allow (jump to the end).
        jump(
            libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K,
            AUDIT_ARCH,
            0,
            3,
        ),
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, number),
        jump(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, nr as u32, 0, 1),
        stmt(
            libc::BPF_RET | libc::BPF_K,
            libc::SECCOMP_RET_ERRNO | errno as u32,
        ),
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW),
    ];
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(NotInstalled::NoNewPrivs);
    }
    // SAFETY: `prog` points at a valid filter program that outlives the call (the kernel
    // copies it).
    let ret = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            flags,
            &prog as *const libc::sock_fprog,
        )
    };
    if ret != 0 {
        return Err(NotInstalled::Seccomp);
    }
    Ok(())
}
