//! Code the ringsteal examples share, so that each example file shows its own idea and not
//! the plumbing around it:
//!
//! * [`http`]: a small, correct HTTP/1.1 server core ([`http::serve`] one connection,
//!   keep-alive and pipelining, refusals with the right status) and the client the tour and
//!   the tests drive it with. `http_server`, `file_server`, `graceful_shutdown` and the tour
//!   serve with it.
//! * [`future`]: [`join_all`](future::join_all) and [`race`](future::race), for waiting on
//!   several futures from one task.
//! * [`cli`]: arguments, and the usage line and non-zero exit on a bad one.
//! * [`stdio`]: standard input and output as ringsteal files.
//!
//! The examples themselves are the files beside `src/` (`cargo run --example NAME`);
//! `tests/examples_run.rs` runs every one of them.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod cli;
pub mod future;
pub mod http;
pub mod stdio;
