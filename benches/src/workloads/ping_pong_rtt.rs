//! `ping_pong_rtt`: two tasks pass a token back and forth.
//!
//! One criterion iteration = one round trip (ping and pong); implementations use
//! `iter_custom` and run the requested number of round trips back to back inside
//! the runtime, timing them there. Each side adds one to the token, so after `n`
//! round trips it must be `2 n` ([`check`]).
//!
//! Variants (criterion ids `<variant>/<runtime>`):
//! - `pinned_parked`: the tasks are pinned to two different threads and a
//!   thread with nothing to run blocks in the kernel (parks);
//! - `pinned_spinning`: the same, with the runtime allowed to spin instead of
//!   parking;
//! - `default_placement`: both tasks spawned the runtime's default way.

/// Panics unless the token made `rounds` full round trips.
pub fn check(token: u64, rounds: u64) {
    assert_eq!(token, 2 * rounds, "ping_pong_rtt: token lost or duplicated");
}
