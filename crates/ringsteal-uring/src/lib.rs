//! # ringsteal-uring
//!
//! The io_uring binding of [ringsteal](https://github.com/ringsteal/ringsteal), written on
//! `libc` alone: ring setup with every setup flag the runtime may use, the SQ and CQ rings
//! mapped with the right memory ordering, every SQE/CQE field documented where declared, all
//! opcode numbers, `io_uring_enter` with `EXT_ARG` timeouts, registration (probe, files,
//! buffers, provided-buffer rings, `ENABLE_RINGS`, `SEND_MSG_RING`), and feature detection
//! that asks the kernel instead of reading `uname`.
//!
//! Layout: [`abi`] holds the raw kernel ABI (checked against `linux/io_uring.h` by the
//! `abi` test); [`Ring`] owns one instance; [`opcode`] prepares SQEs; [`Probe`] and
//! [`Features`] say what this kernel supports; [`BufRing`] manages provided buffers.
//!
//! ```
//! use ringsteal_uring::{opcode, Ring};
//!
//! let mut ring = Ring::new(32)?;
//! for i in 0..4 {
//!     // SAFETY: a NOP references no memory.
//!     unsafe { ring.push(&opcode::nop().with_user_data(i)) }.unwrap();
//! }
//! ring.submit_and_wait(4)?;
//! let mut seen: Vec<u64> = std::iter::from_fn(|| ring.pop_cqe()).map(|c| c.user_data).collect();
//! seen.sort();
//! assert_eq!(seen, [0, 1, 2, 3]);
//! # Ok::<(), std::io::Error>(())
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]
#![cfg(target_os = "linux")]

pub mod abi;
mod buf_ring;
mod cq;
mod error;
mod features;
mod mmap;
mod msg_ring;
pub mod opcode;
mod probe;
mod register;
mod ring;
mod ring_fd;
mod ring_share;
mod sq;
mod sys;

pub use abi::{io_uring_cqe, io_uring_sqe};
pub use buf_ring::BufRing;
pub use error::{SetupError, Unavailable};
pub use features::{check_available, Features};
pub use msg_ring::send_msg_ring;
pub use probe::Probe;
pub use ring::{Ring, RingBuilder, Wait, SUPPORTED_SETUP_FLAGS};
