//! # ringsteal-signal
//!
//! Unix signals for the [ringsteal](https://docs.rs/ringsteal) runtime: [`ctrl_c`],
//! [`signal`] streams for any catchable signal, and [`shutdown_signal`] (the first `SIGINT`
//! or `SIGTERM`) for graceful shutdown.
//!
//! A process-wide handler counts each delivery and writes to an eventfd per listener; each
//! listener waits with a poll of its eventfd (`POLL_ADD`, which consumes nothing) on the ring
//! of the shard it is polled on, and resets the eventfd when the poll fires. So:
//!
//! * every listener of a signal is woken, on whichever shard (or runtime) it waits;
//! * a delivery between registering and the first `recv` is not lost (deliveries are counted
//!   from registration; several between two `recv`s count as one);
//! * nothing is blocked: no thread's signal mask is changed to listen (only the handler,
//!   carrying out a signal's default action when nobody listens, unblocks it for its own
//!   thread before raising it again), threads the program starts need no care, and only the
//!   signals asked for get a handler; with no listener left, a signal does what it did before
//!   (ADR-0011 says why not `signalfd`).
//!
//! ```
//! use ringsteal_rt::Placement;
//! use ringsteal_signal::{signal, SignalKind};
//!
//! let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
//! rt.block_on(async {
//!     // Two listeners for SIGUSR1, one on each shard: both are woken.
//!     let mut waits = Vec::new();
//!     for shard in 0..2 {
//!         let mut usr1 = signal(SignalKind::user_defined1())?;
//!         waits.push(ringsteal_rt::spawn_with(Placement::Pinned(shard), async move {
//!             usr1.recv().await
//!         }));
//!     }
//!     // SAFETY: kill sends a signal to this process.
//!     unsafe { libc::kill(libc::getpid(), libc::SIGUSR1) };
//!     for w in waits {
//!         assert_eq!(w.await.unwrap(), Some(()));
//!     }
//!     Ok::<_, std::io::Error>(())
//! })
//! .unwrap();
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]

#[cfg(feature = "stream")]
mod futures_stream;
mod handler;
mod kind;
mod shutdown;
mod signal;
mod slots;

pub use kind::SignalKind;
pub use shutdown::shutdown_signal;
pub use signal::{ctrl_c, signal, Signal};
