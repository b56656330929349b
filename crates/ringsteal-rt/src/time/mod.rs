//! Time: [`sleep`], [`sleep_until`], [`timeout`], [`timeout_at`], [`interval`],
//! [`interval_at`].
//!
//! Each shard keeps its timers in its own hierarchical wheel (`wheel.rs`): registering or
//! cancelling a timer is O(1) and makes no syscall and no SQE; the shard's blocking
//! `io_uring_enter` carries the nearest deadline as its `EXT_ARG` timeout. Resolution is one
//! microsecond and a timer never fires early; how late it fires depends on the kernel's
//! wake-up latency (tens of microseconds on a VM) unless the shard spins
//! ([`IdleStrategy::SpinThenPark`](crate::IdleStrategy)).
//!
//! Timers read the runtime's clock through [`Instant`], which a test can pause ([`pause`],
//! [`advance`], [`resume`]): timeouts and retries then run without real waiting.

mod foreign;
mod instant;
mod interval;
mod pause;
mod sleep;
mod timeout;
pub(crate) mod wheel;

pub use crate::shared::clock::ClockError;
pub(crate) use foreign::ForeignTimer;
pub use instant::Instant;
pub use interval::{interval, interval_at, Interval, MissedTickBehavior};
pub use pause::{advance, pause, resume, try_advance, try_pause, try_resume};
pub use sleep::{sleep, sleep_until, Sleep};
pub use std::time::Duration;
pub use timeout::{timeout, timeout_at, Elapsed, Timeout};
pub(crate) use wheel::TimerKey;
