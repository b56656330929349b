//! [`KernelFeatures`]: what of the kernel's io_uring one runtime may use. Probed once per
//! process (`ringsteal_uring::Features`), narrowed by the builder, fixed for the runtime's
//! life. Crates built on the runtime ask it (`RuntimeHandle::features`) which path to take,
//! so that none of them probes the kernel or reads `ringsteal_uring` on its own.
//!
//! Owns: the names of the capabilities the runtime and the crates above it choose paths by,
//! and the builder's narrowing. May not: probe anything itself (the binding does), or act on
//! a capability (each user picks its own fallback).

use ringsteal_uring::abi::{
    opcode_name, IORING_OP_ACCEPT, IORING_OP_FTRUNCATE, IORING_OP_MSG_RING, IORING_OP_RECV,
    IORING_OP_SEND_ZC, IORING_OP_SOCKET, IORING_OP_WAITID, IORING_SETUP_SQPOLL,
};
use ringsteal_uring::{Features, SetupError};

/// One io_uring capability that a runtime uses where the kernel has it, with a fallback
/// where it does not. Linux versions are where each first appeared; the answer always comes
/// from probing the running kernel, never from its version.
///
/// Ask [`KernelFeatures::supports`] through [`RuntimeHandle::features`](crate::RuntimeHandle::features);
/// [`Builder::without_feature`](crate::Builder::without_feature) makes a runtime behave as if
/// the kernel lacked one (to test a fallback path).
///
/// ```
/// use ringsteal_rt::{Feature, Runtime};
///
/// let rt = Runtime::builder().shards(1).without_feature(Feature::SendZc).build().unwrap();
/// let features = rt.handle().features().clone();
/// assert!(!features.supports(Feature::SendZc));
/// // A named feature and its opcode number are one question.
/// let op = ringsteal_uring::abi::IORING_OP_SEND_ZC;
/// assert_eq!(features.supports(Feature::Opcode(op)), features.supports(Feature::SendZc));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Feature {
    /// `IORING_OP_FTRUNCATE` (6.9): `File::set_len` through the ring.
    Ftruncate,
    /// `IORING_OP_SOCKET` (5.19): sockets created through the ring.
    Socket,
    /// `IORING_OP_SEND_ZC` (6.0): zero-copy sends.
    SendZc,
    /// `IORING_OP_WAITID` (6.7): waiting for a child process through the ring.
    Waitid,
    /// `IORING_OP_MSG_RING` (5.18): doorbells and messages from one shard's ring to another's.
    /// Without it every doorbell is an eventfd write (as with `WakeMechanism::EventFd`).
    MsgRing,
    /// `IORING_REGISTER_SEND_MSG_RING` (6.13): MSG_RING from a thread without a ring. Without
    /// it such threads ring a shard's eventfd.
    SendMsgRing,
    /// Multishot accept (5.19). Without it accept streams use single-shot accepts.
    MultishotAccept,
    /// Multishot recv and recvmsg with provided buffers (6.0). Without it (or without
    /// [`ProvidedBufferRing`](Feature::ProvidedBufferRing)) receive streams use single-shot
    /// receives into heap buffers.
    MultishotRecv,
    /// Provided-buffer rings, `IORING_REGISTER_PBUF_RING` (5.19).
    ProvidedBufferRing,
    /// `IORING_SETUP_SQPOLL`: a kernel thread polls the submission queue.
    Sqpoll,
    /// Any opcode, by its number (`ringsteal_uring::abi::IORING_OP_*`). Asking for a named
    /// feature's opcode this way gives the same answer as asking for the feature.
    Opcode(u8),
}

impl Feature {
    /// The opcode this feature is, if it is one: named opcodes and `Opcode(n)` are one key.
    fn opcode(self) -> Option<u8> {
        match self {
            Feature::Ftruncate => Some(IORING_OP_FTRUNCATE),
            Feature::Socket => Some(IORING_OP_SOCKET),
            Feature::SendZc => Some(IORING_OP_SEND_ZC),
            Feature::Waitid => Some(IORING_OP_WAITID),
            Feature::MsgRing => Some(IORING_OP_MSG_RING),
            Feature::Opcode(op) => Some(op),
            Feature::SendMsgRing
            | Feature::MultishotAccept
            | Feature::MultishotRecv
            | Feature::ProvidedBufferRing
            | Feature::Sqpoll => None,
        }
    }

    /// Why a builder may not take this feature away, if it may not: an opcode the runtime
    /// has no fallback for (only the named features' opcodes have one), so taking it away
    /// would change nothing or break everything rather than test a fallback.
    pub(crate) fn refusal(self) -> Option<String> {
        let Feature::Opcode(op) = self.key() else {
            return None;
        };
        let with_fallback = [
            IORING_OP_FTRUNCATE,
            IORING_OP_SOCKET,
            IORING_OP_SEND_ZC,
            IORING_OP_WAITID,
            IORING_OP_MSG_RING,
        ];
        (!with_fallback.contains(&op)).then(|| {
            format!(
                "without_feature(Feature::Opcode({op})): ringsteal has no fallback for \
                 IORING_OP_{} to test; only the named features' opcodes have one",
                opcode_name(op).unwrap_or("?")
            )
        })
    }

    /// One key per capability, so that narrowing `Ftruncate` also narrows
    /// `Opcode(IORING_OP_FTRUNCATE)`.
    fn key(self) -> Feature {
        self.opcode().map_or(self, Feature::Opcode)
    }
}

/// The io_uring capabilities a runtime may use: what the kernel has, less what the builder
/// took away (for testing fallbacks). Get it with
/// [`RuntimeHandle::features`](crate::RuntimeHandle::features) or
/// [`Runtime::features`](crate::Runtime::features).
///
/// ```
/// use ringsteal_rt::{Feature, Runtime};
///
/// let rt = Runtime::builder().shards(1).build()?;
/// let native_truncate = rt.features().supports(Feature::Ftruncate);
/// println!("set_len through the ring: {native_truncate}");
/// # Ok::<(), ringsteal_rt::BuildError>(())
/// ```
#[derive(Clone, Debug)]
pub struct KernelFeatures {
    probed: &'static Features,
    /// Keys (see `Feature::key`) the builder took away.
    hidden: Vec<Feature>,
}

impl KernelFeatures {
    /// The process's probe (made on first use, and again after a detection that ran out of
    /// descriptors or memory), less `hidden`.
    pub(crate) fn probe(hidden: &[Feature]) -> Result<Self, SetupError> {
        let mut keys = Vec::with_capacity(hidden.len());
        for key in hidden.iter().map(|f| f.key()) {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        Ok(Self {
            probed: Features::get()?,
            hidden: keys,
        })
    }

    /// True if this runtime may use `feature`: the kernel has it and the builder did not
    /// take it away.
    pub fn supports(&self, feature: Feature) -> bool {
        !self.hidden.contains(&feature.key()) && self.probed_has(feature) && self.needs_met(feature)
    }

    /// What a feature is built on is there too: multishot accept needs `ACCEPT`, multishot
    /// receives need `RECV` and provided-buffer rings (taken away, they take it away).
    fn needs_met(&self, feature: Feature) -> bool {
        match feature {
            Feature::MultishotAccept => self.supports_opcode(IORING_OP_ACCEPT),
            Feature::MultishotRecv => {
                self.supports_opcode(IORING_OP_RECV) && self.supports(Feature::ProvidedBufferRing)
            }
            _ => true,
        }
    }

    /// True if this runtime may use the opcode `opcode` (`ringsteal_uring::abi::IORING_OP_*`).
    pub fn supports_opcode(&self, opcode: u8) -> bool {
        self.supports(Feature::Opcode(opcode))
    }

    fn probed_has(&self, feature: Feature) -> bool {
        let f = self.probed;
        match feature {
            Feature::SendMsgRing => f.send_msg_ring(),
            Feature::MultishotAccept => f.multishot_accept(),
            Feature::MultishotRecv => f.multishot_recv(),
            Feature::ProvidedBufferRing => f.pbuf_ring(),
            Feature::Sqpoll => f.setup_flag_accepted(IORING_SETUP_SQPOLL),
            opcode => opcode.opcode().is_some_and(|op| f.opcode_supported(op)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_narrowed_feature_is_unsupported_by_name_and_by_opcode() {
        let all = KernelFeatures::probe(&[]).unwrap();
        let narrowed = KernelFeatures::probe(&[Feature::Ftruncate, Feature::Sqpoll]).unwrap();
        for f in [
            Feature::Ftruncate,
            Feature::Opcode(IORING_OP_FTRUNCATE),
            Feature::Sqpoll,
        ] {
            assert!(!narrowed.supports(f), "{f:?} was taken away");
        }
        assert!(!narrowed.supports_opcode(IORING_OP_FTRUNCATE));
        // The rest is what the kernel says.
        for f in [
            Feature::MsgRing,
            Feature::SendMsgRing,
            Feature::Opcode(0),
            Feature::Socket,
        ] {
            assert_eq!(narrowed.supports(f), all.supports(f), "{f:?}");
        }
        assert_eq!(
            all.supports(Feature::Ftruncate),
            all.supports_opcode(IORING_OP_FTRUNCATE)
        );
        let by_opcode = KernelFeatures::probe(&[Feature::Opcode(IORING_OP_MSG_RING)]).unwrap();
        assert!(!by_opcode.supports(Feature::MsgRing));
    }

    #[test]
    fn a_feature_goes_with_what_it_is_built_on() {
        let no_rings = KernelFeatures::probe(&[Feature::ProvidedBufferRing]).unwrap();
        assert!(!no_rings.supports(Feature::MultishotRecv));
        let no_accept = KernelFeatures::probe(&[Feature::Opcode(IORING_OP_ACCEPT)]).unwrap();
        assert!(!no_accept.supports(Feature::MultishotAccept));
    }

    #[test]
    fn only_opcodes_with_a_fallback_may_be_taken_away() {
        assert!(Feature::Ftruncate.refusal().is_none());
        assert!(Feature::Opcode(IORING_OP_SOCKET).refusal().is_none());
        assert!(Feature::MultishotRecv.refusal().is_none());
        let refused = Feature::Opcode(IORING_OP_ACCEPT).refusal().unwrap();
        assert!(refused.contains("IORING_OP_ACCEPT"), "{refused}");
    }
}
