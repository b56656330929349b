//! Which networking opcodes this kernel has: the one place the net ops ask.
//!
//! Today this reads the process-wide probe (`Features::get()`). When the runtime carries its
//! own feature set (which a builder switch can narrow), [`has_opcode`] is the single function
//! to change; [`hide_opcode`] then gives way to that switch.
//!
//! May not: decide anything else (each op family picks its own fallback).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use ringsteal_uring::Features;

/// Opcodes hidden by [`hide_opcode`], one bit each (opcodes 0..64).
static HIDDEN: AtomicU64 = AtomicU64::new(0);

/// True if the kernel has `opcode` (and no test hid it).
pub(crate) fn has_opcode(opcode: u8) -> bool {
    let hidden = opcode < 64 && HIDDEN.load(Relaxed) & (1 << opcode) != 0;
    !hidden && Features::get().is_ok_and(|f| f.opcode_supported(opcode))
}

/// Testing aid, not a tuning knob: from now on, in this whole process, the net ops behave as
/// if the kernel lacked `opcode` (below 64) and take their fallback (e.g. `socket(2)` instead
/// of `IORING_OP_SOCKET`), so the fallback can be tested on any kernel.
#[doc(hidden)]
pub fn hide_opcode(opcode: u8) {
    if opcode < 64 {
        HIDDEN.fetch_or(1 << opcode, Relaxed);
    }
}
