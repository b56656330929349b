//! Creating a shard's ring: the best setup flags this kernel accepts, falling back step by
//! step. Must run on the shard's own thread (`SINGLE_ISSUER` binds the ring to its creator).

use ringsteal_uring::abi::*;
use ringsteal_uring::{Ring, RingBuilder, SetupError};

/// Which completion-posting mode a ring ended up with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingMode {
    /// `SINGLE_ISSUER | DEFER_TASKRUN | TASKRUN_FLAG` (6.1+): completions are posted only when
    /// the shard enters the kernel; the SQ flag `IORING_SQ_TASKRUN` says when to.
    DeferTaskrun,
    /// `COOP_TASKRUN | TASKRUN_FLAG` (5.19+): no IPIs; same flag protocol.
    CoopTaskrun,
    /// No taskrun flags: completions are posted asynchronously.
    Plain,
}

/// What the builder allows.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RingOptions {
    pub(crate) entries: u32,
    pub(crate) allow_defer_taskrun: bool,
    pub(crate) allow_coop_taskrun: bool,
}

/// Creates the ring with the most capable mode that this kernel accepts and the options
/// allow. Only `EINVAL` moves on to the next mode; any other error (EPERM, ENOMEM...) is
/// reported as is, because fewer flags would not fix it.
pub(crate) fn create_ring(opts: RingOptions) -> Result<(Ring, RingMode), SetupError> {
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
        // SUBMIT_ALL keeps one bad SQE from stalling the rest of a batch; the CQ is sized at
        // four times the SQ because doorbells, messages and multishot ops all land there.
        for extra in [IORING_SETUP_SUBMIT_ALL, 0] {
            let builder = RingBuilder::new(opts.entries)
                .flags(flags | extra)
                .cq_entries(opts.entries.saturating_mul(4))
                .clamp();
            match builder.build() {
                Ok(ring) => return Ok((ring, mode)),
                Err(e) if e.is_invalid_arguments() => last = Some(e),
                Err(e) => return Err(e),
            }
        }
    }
    Err(last.expect("at least the plain mode was tried"))
}
