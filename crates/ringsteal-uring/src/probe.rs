//! [`Probe`]: which opcodes this kernel supports, as `IORING_REGISTER_PROBE` reports.

use crate::abi::{io_uring_probe_op, opcode_name, IO_URING_OP_SUPPORTED};

/// The opcodes a kernel supports, from `IORING_REGISTER_PROBE`.
///
/// ```
/// use ringsteal_uring::{abi::IORING_OP_READ, Ring};
///
/// let probe = Ring::new(2)?.probe()?;
/// assert!(probe.is_supported(IORING_OP_READ));
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    last_op: u8,
    supported: [u64; 4],
}

impl Probe {
    pub(crate) fn from_ops(last_op: u8, ops: &[io_uring_probe_op]) -> Self {
        let mut supported = [0u64; 4];
        for op in ops {
            if op.flags & IO_URING_OP_SUPPORTED != 0 {
                supported[(op.op / 64) as usize] |= 1 << (op.op % 64);
            }
        }
        Self { last_op, supported }
    }

    /// The highest opcode this kernel knows.
    pub fn last_op(&self) -> u8 {
        self.last_op
    }

    /// True if the kernel implements `opcode`.
    pub fn is_supported(&self, opcode: u8) -> bool {
        self.supported[(opcode / 64) as usize] & (1 << (opcode % 64)) != 0
    }

    /// Every supported opcode with its name (`None` for opcodes newer than this binding).
    pub fn supported_ops(&self) -> impl Iterator<Item = (u8, Option<&'static str>)> + '_ {
        (0..=self.last_op)
            .filter(|op| self.is_supported(*op))
            .map(|op| (op, opcode_name(op)))
    }
}
