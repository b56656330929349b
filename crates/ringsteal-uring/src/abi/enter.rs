//! `io_uring_enter(2)`: flags, the extended argument, and the ring flag words it reports in.

/// `IORING_ENTER_GETEVENTS`: wait for `min_complete` CQEs (and, with `DEFER_TASKRUN`, run
/// the deferred completion work: without it those completions never appear).
pub const IORING_ENTER_GETEVENTS: u32 = 1 << 0;
/// `IORING_ENTER_SQ_WAKEUP`: wake the SQPOLL thread.
pub const IORING_ENTER_SQ_WAKEUP: u32 = 1 << 1;
/// `IORING_ENTER_SQ_WAIT`: wait for SQ space (SQPOLL).
pub const IORING_ENTER_SQ_WAIT: u32 = 1 << 2;
/// `IORING_ENTER_EXT_ARG`: `arg` points at `struct io_uring_getevents_arg` (5.11).
pub const IORING_ENTER_EXT_ARG: u32 = 1 << 3;
/// `IORING_ENTER_REGISTERED_RING`: `fd` is a registered ring index.
pub const IORING_ENTER_REGISTERED_RING: u32 = 1 << 4;
/// `IORING_ENTER_ABS_TIMER`: the EXT_ARG timeout is an absolute time (6.12).
pub const IORING_ENTER_ABS_TIMER: u32 = 1 << 5;
/// `IORING_ENTER_EXT_ARG_REG`: the EXT_ARG is a registered wait region (6.13).
pub const IORING_ENTER_EXT_ARG_REG: u32 = 1 << 6;
/// `IORING_ENTER_NO_IOWAIT`: do not account the wait as iowait (6.15).
pub const IORING_ENTER_NO_IOWAIT: u32 = 1 << 7;

/// `IORING_SQ_NEED_WAKEUP`: the SQPOLL thread sleeps; enter with `SQ_WAKEUP`.
pub const IORING_SQ_NEED_WAKEUP: u32 = 1 << 0;
/// `IORING_SQ_CQ_OVERFLOW`: CQEs are held in the kernel's overflow list; enter with
/// `GETEVENTS` to flush them into the CQ.
pub const IORING_SQ_CQ_OVERFLOW: u32 = 1 << 1;
/// `IORING_SQ_TASKRUN`: completions wait for a kernel entry (`TASKRUN_FLAG`).
pub const IORING_SQ_TASKRUN: u32 = 1 << 2;

/// `IORING_CQ_EVENTFD_DISABLED`: do not signal the registered eventfd.
pub const IORING_CQ_EVENTFD_DISABLED: u32 = 1 << 0;

/// `struct __kernel_timespec`: a 64-bit time value for timeouts.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct __kernel_timespec {
    /// Seconds.
    pub tv_sec: i64,
    /// Nanoseconds, below 1,000,000,000.
    pub tv_nsec: i64,
}

impl __kernel_timespec {
    /// A timespec for a `Duration` (saturating at `i64::MAX` seconds).
    pub fn from_duration(d: std::time::Duration) -> Self {
        Self {
            tv_sec: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(d.subsec_nanos()),
        }
    }
}

/// `struct io_uring_getevents_arg`: the argument of `io_uring_enter` with `EXT_ARG`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct io_uring_getevents_arg {
    /// Pointer to a signal mask to apply while waiting, or 0.
    pub sigmask: u64,
    /// Size of that signal mask (`_NSIG / 8`).
    pub sigmask_sz: u32,
    /// With `FEAT_MIN_TIMEOUT`: minimum wait in microseconds before returning fewer than
    /// `min_complete` CQEs (6.12; `pad` before).
    pub min_wait_usec: u32,
    /// Pointer to a `__kernel_timespec` bounding the wait, or 0 for none.
    pub ts: u64,
}
