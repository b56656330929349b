//! Which networking opcodes this runtime may use: the one place the net ops ask.
//!
//! The answer is the current runtime's feature set ([`KernelFeatures`](crate::KernelFeatures),
//! which `Builder::without_feature` narrows to force a fallback in tests); off a runtime, the
//! kernel's own probe.
//!
//! May not: decide anything else (each op family picks its own fallback).

use ringsteal_uring::Features;

use crate::shard::context;
use crate::Feature;

/// True if the current runtime may use `opcode` (the kernel has it and the builder did not
/// take it away).
pub(crate) fn has_opcode(opcode: u8) -> bool {
    context::with_driving_shared(|shared| match shared {
        Some(s) => s.features.supports(Feature::Opcode(opcode)),
        None => Features::get().is_ok_and(|f| f.opcode_supported(opcode)),
    })
}
