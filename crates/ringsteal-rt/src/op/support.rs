//! Which opcodes this runtime may use: the one place ops ask before choosing between an
//! opcode and its fallback (the socket op, `ftruncate`, `waitid`).
//!
//! The answer is the feature set of the runtime whose ring the op goes to (the shard this
//! code runs on, even inside another runtime's `enter()`) ([`KernelFeatures`](crate::KernelFeatures),
//! which `Builder::without_feature` narrows to force a fallback in tests); off a runtime, the
//! kernel's own probe.
//!
//! May not: decide anything else (each op family picks its own fallback).

use ringsteal_uring::Features;

use crate::shard::context;
use crate::Feature;

/// True if the runtime whose ring takes this thread's ops may use `opcode` (the kernel has
/// it and the builder did not take it away; a named feature and its opcode are one key).
pub(crate) fn has_opcode(opcode: u8) -> bool {
    context::with_driving_shared(|shared| match shared {
        Some(s) => s.features.supports(Feature::Opcode(opcode)),
        None => Features::get().is_ok_and(|f| f.opcode_supported(opcode)),
    })
}
