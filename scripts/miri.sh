#!/usr/bin/env bash
# Runs the kernel-free unit tests of ringsteal-rt under Miri (with strict provenance):
#   task::              task cell, state machine, wakers, join, abort (task/tests.rs)
#   time::wheel         the timer wheel (time/wheel_tests.rs)
#   shard::inbox        raw messages put back in send order
#   util::block_cache   per-thread caches of freed task and op cells
#   util::queue         the crossbeam steal-retry and drain helpers
#   util::wake_later    wakes collected while the driver is borrowed
#   busy_clock          a shard's busy time: stretches, the reader's sum
#   sync::              AtomicWaker and CancellationToken (its tree: nodes leaving, threads)
#   driver::user_data   the user_data encoding
#   driver::msg_send    the table of raw messages whose MSG_RING has not completed
#   io::                lanes (leftover bytes, ordering), InLane and WriteThenRead outputs, framing,
#                       provided methods
#   buf::               owned buffers, slices, vectored buffers and their advance (no kernel:
#                       reads are simulated)
#   op::tests           how an op's SQEs are assembled (flags, links, the link timeout)
#   op::net::addr       socket address storage and conversions
#   op::fd              the descriptor's holder count, into_owned, closing (pipes, threads)
#   buf::provided::ledger   provided-buffer accounting: buffers in use, stalled streams' wakers
#   op::stream::queue   a stream's queue of delivered results (push, pop, close, two threads)
#   shared::reservation work handed over to a shard, kept for it until released or for its time
# Everything else in the crate talks to io_uring, which Miri cannot run.
# Installs nightly's miri component if it is missing. Extra arguments go to the test binary.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! rustup toolchain list | grep -q '^nightly'; then
    rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly miri --version >/dev/null 2>&1; then
    rustup +nightly component add miri
fi

export MIRIFLAGS="${MIRIFLAGS:--Zmiri-strict-provenance}"
cargo +nightly miri test -p ringsteal-rt --lib -- task:: time::wheel time::foreign sync:: driver::user_data driver::msg_send shard::inbox busy_clock util::block_cache util::queue util::wake_later io:: buf:: op::tests op::net::addr op::fd op::stream::queue shared::reservation "$@"
