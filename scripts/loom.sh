#!/usr/bin/env bash
# Model-checks the sleep/wake protocol (crates/ringsteal-rt/src/shared/sleep_flag.rs) with
# loom: every interleaving of a sleeper and its wakers, under the C11 memory model as loom
# implements it. A lost wakeup shows as a deadlock, more than one doorbell per sleep as a
# failed assertion. Also the waker slot of ops (crates/ringsteal-rt/src/sync/atomic_waker.rs):
# a registration racing a take, or the final take of a completion, never loses a wake. And the
# state word of stream lanes (crates/ringsteal-rt/src/io/lane_loom_tests.rs): a release racing a
# waiter's registration never loses the wake, two would-be holders never both hold, a
# poll_free closure never runs while a request holds the lane, kept bytes reach the next
# holder. And the cancellation tree (crates/ringsteal-rt/src/sync/cancellation_tree.rs): a
# token whose last handle is dropped leaves the tree while a cancel runs from above, or while
# its parent or its child leaves too, and no child drops out of the cancel's reach.
# Release build: loom explores many thousands of executions.
# Extra arguments go to the test binary (e.g. --nocapture). Builds into target/loom (or
# $CARGO_TARGET_DIR), so the `--cfg loom` build does not evict the normal release build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/loom}"
RUSTFLAGS="${RUSTFLAGS:-} --cfg loom" cargo test -p ringsteal-rt --lib --release loom -- "$@"
