//! Creating a shard's ring: the best setup flags this kernel accepts, falling back step by
//! step, and recording why each better mode was refused. Must run on the shard's own thread
//! (`SINGLE_ISSUER` binds the ring to its creator).

use std::fmt;

use ringsteal_uring::abi::*;
use ringsteal_uring::{Ring, RingBuilder, SetupError};

/// Which mode a shard's ring ended up with (see [`RuntimeHandle::ring_modes`] and, for why,
/// [`RuntimeHandle::ring_setups`]).
///
/// ```
/// use ringsteal_rt::{RingMode, Runtime};
///
/// let rt = Runtime::builder().shards(1).build()?;
/// let mode = rt.handle().ring_modes()[0].expect("shard 0's ring exists once built");
/// assert_ne!(mode, RingMode::SqPoll, "SQPOLL only when asked for");
/// # Ok::<(), ringsteal_rt::BuildError>(())
/// ```
///
/// [`RuntimeHandle::ring_modes`]: crate::RuntimeHandle::ring_modes
/// [`RuntimeHandle::ring_setups`]: crate::RuntimeHandle::ring_setups
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingMode {
    /// `SINGLE_ISSUER | DEFER_TASKRUN | TASKRUN_FLAG` (6.1+): completions are posted only when
    /// the shard enters the kernel; the SQ flag `IORING_SQ_TASKRUN` says when to.
    DeferTaskrun,
    /// `COOP_TASKRUN | TASKRUN_FLAG` (5.19+): no IPIs; same flag protocol.
    CoopTaskrun,
    /// No taskrun flags: completions are posted asynchronously.
    Plain,
    /// `SQPOLL` ([`Builder::sqpoll`](crate::Builder::sqpoll)): a kernel thread takes the
    /// shard's submissions from the SQ with no system call while it polls, and sleeps after
    /// the idle time the builder set (the shard wakes it, `IORING_SQ_NEED_WAKEUP`).
    /// Completions are posted asynchronously: the kernel refuses the taskrun flags with
    /// SQPOLL.
    SqPoll,
}

impl RingMode {
    fn flags_name(self) -> &'static str {
        match self {
            RingMode::DeferTaskrun => "SINGLE_ISSUER | DEFER_TASKRUN",
            RingMode::CoopTaskrun => "COOP_TASKRUN",
            RingMode::Plain => "a plain ring",
            RingMode::SqPoll => "SQPOLL",
        }
    }
}

/// A shard's ring: the mode it got, and each better mode it was refused, best first.
///
/// ```
/// use std::time::Duration;
/// use ringsteal_rt::{RingMode, Runtime};
///
/// let rt = Runtime::builder().shards(1).sqpoll(Duration::from_millis(10)).build()?;
/// let setup = rt.handle().ring_setups()[0].clone().expect("built");
/// match setup.mode {
///     RingMode::SqPoll => assert!(setup.refused.is_empty()),
///     // Where the kernel refused SQPOLL, the runtime runs without it and says why.
///     _ => assert_eq!(setup.refused[0].mode, RingMode::SqPoll),
/// }
/// println!("shard 0: {setup}");
/// # Ok::<(), ringsteal_rt::BuildError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingSetup {
    /// The mode the ring has.
    pub mode: RingMode,
    /// The better modes it was refused, best first.
    pub refused: Vec<RingRefusal>,
}

impl fmt::Display for RingSetup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.mode)?;
        for r in &self.refused {
            write!(f, "; {r}")?;
        }
        Ok(())
    }
}

/// A ring mode that was refused: by the kernel (its answer), or not tried at all because the
/// runtime's [`KernelFeatures`](crate::KernelFeatures) lack it.
///
/// ```
/// use ringsteal_rt::{RingMode, RingRefusal};
///
/// let why = RingRefusal { mode: RingMode::SqPoll, errno: Some(libc::EPERM) };
/// assert!(why.to_string().contains("not permitted"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingRefusal {
    /// The mode that was asked for.
    pub mode: RingMode,
    /// The error `io_uring_setup` returned (`libc::EPERM`, `libc::EINVAL`, ...); `None` if
    /// the mode was not tried because the runtime's feature set lacks it
    /// ([`Feature::Sqpoll`](crate::Feature::Sqpoll): the kernel refused it when probed).
    pub errno: Option<i32>,
}

impl fmt::Display for RingRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.mode.flags_name();
        let Some(errno) = self.errno else {
            return write!(
                f,
                "{name} not tried: this runtime's feature set lacks it (Runtime::features): the \
                 kernel refused it when probed (before 5.11 SQPOLL needs CAP_SYS_ADMIN; a \
                 seccomp, LSM or container policy may forbid it), or the builder took it away"
            );
        };
        let why = match (self.mode, errno) {
            (RingMode::SqPoll, libc::EPERM | libc::EACCES) => {
                "not permitted: kernels before 5.11 allow SQPOLL only with CAP_SYS_ADMIN, and a \
                 security policy (seccomp, an LSM, a container runtime) may refuse it"
            }
            (RingMode::SqPoll, libc::EAGAIN) => {
                "the kernel could not start the SQPOLL thread (process or thread limits)"
            }
            (_, libc::EINVAL) => "this kernel does not support it with these settings",
            (_, libc::ENOMEM) => "out of memory (locked-memory limit or kernel memory)",
            _ => "refused",
        };
        write!(
            f,
            "{name} refused ({}): {why}",
            std::io::Error::from_raw_os_error(errno)
        )
    }
}

/// What the builder allows.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RingOptions {
    pub(crate) entries: u32,
    pub(crate) allow_defer_taskrun: bool,
    pub(crate) allow_coop_taskrun: bool,
    pub(crate) sqpoll: SqPoll,
}

/// Whether a ring tries SQPOLL first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SqPoll {
    /// Not asked for.
    Off,
    /// Asked for, but the runtime's feature set lacks it: not tried, recorded as refused.
    Unavailable,
    /// Tried first, its kernel thread sleeping after `idle_ms` without work.
    /// `refused_for_testing` asks for it in a way every kernel refuses.
    Try {
        idle_ms: u32,
        refused_for_testing: bool,
    },
}

/// Creates the ring with the most capable mode that this kernel accepts and the options
/// allow. SQPOLL, when asked for, is tried first and any refusal falls back to the other modes
/// (the runtime works without it; ADR-0018). For the others only `EINVAL` moves on to the
/// next mode; any other error (EPERM, ENOMEM...) is reported as is, because fewer flags would
/// not fix it.
pub(crate) fn create_ring(opts: RingOptions) -> Result<(Ring, RingSetup), SetupError> {
    let mut refused = Vec::new();
    match opts.sqpoll {
        SqPoll::Off => {}
        SqPoll::Unavailable => refused.push(RingRefusal {
            mode: RingMode::SqPoll,
            errno: None,
        }),
        SqPoll::Try {
            idle_ms,
            refused_for_testing,
        } => match try_sqpoll(opts.entries, idle_ms, refused_for_testing) {
            Ok(ring) => {
                let setup = RingSetup {
                    mode: RingMode::SqPoll,
                    refused,
                };
                return Ok((ring, setup));
            }
            Err(e) => refused.push(RingRefusal {
                mode: RingMode::SqPoll,
                errno: Some(e.errno()),
            }),
        },
    }
    let mut modes = Vec::with_capacity(3);
    if opts.allow_defer_taskrun {
        modes.push((
            RingMode::DeferTaskrun,
            IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
        ));
    }
    if opts.allow_coop_taskrun {
        modes.push((
            RingMode::CoopTaskrun,
            IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
        ));
    }
    modes.push((RingMode::Plain, 0));
    let mut last = None;
    for (mode, flags) in modes {
        match build(opts.entries, flags, |b| b) {
            Ok(ring) => return Ok((ring, RingSetup { mode, refused })),
            Err(e) if e.is_invalid_arguments() => {
                refused.push(RingRefusal {
                    mode,
                    errno: Some(e.errno()),
                });
                last = Some(e);
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.expect("at least the plain mode was tried"))
}

/// SQPOLL, without the taskrun flags (the kernel refuses them with it). Not `SINGLE_ISSUER`
/// either: with SQPOLL the kernel thread is the one issuer anyway.
fn try_sqpoll(entries: u32, idle_ms: u32, refused_for_testing: bool) -> Result<Ring, SetupError> {
    build(entries, 0, |b| {
        let b = b.sqpoll(idle_ms);
        if refused_for_testing {
            // An SQ thread pinned to a CPU that does not exist: the kernel refuses it
            // (EINVAL) on any machine, through the same path as a real refusal.
            b.sqpoll_cpu(u32::MAX - 1)
        } else {
            b
        }
    })
}

/// Builds with `flags` and what `more` adds, with `SUBMIT_ALL` where the kernel has it: it
/// keeps one bad SQE from stalling the rest of a batch. The CQ is sized at four times the SQ
/// because doorbells, messages and multishot ops all land there (`CLAMP`ed to the kernel's
/// 65536).
fn build(
    entries: u32,
    flags: u32,
    more: impl Fn(RingBuilder) -> RingBuilder,
) -> Result<Ring, SetupError> {
    let mut last = None;
    for extra in [IORING_SETUP_SUBMIT_ALL, 0] {
        let builder = RingBuilder::new(entries)
            .flags(flags | extra)
            .cq_entries(entries.saturating_mul(4))
            .clamp();
        match more(builder).build() {
            Ok(ring) => return Ok(ring),
            Err(e) if e.is_invalid_arguments() => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.expect("two attempts were made"))
}
