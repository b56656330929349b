#!/usr/bin/env bash
# Runs the tests of the runtime and the fs, net, process and signal crates under
# AddressSanitizer (nightly): use-after-free, double free and out-of-bounds accesses in the
# unsafe code (task cells, op cells, buffers, rings, socket addresses) fail the run. Leak
# detection is on: a leak at exit is a failure too.
#
#   bash scripts/asan.sh [extra cargo test args]
#
# Run it on its own: it builds from the working tree as it is when its build starts (so
# edit nothing until it has), and the scheduling tests among its runs are timing-sensitive
# under ASan's slowdown; beside a full `cargo test` on two vCPUs one of them has failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! rustup toolchain list | grep -q nightly; then
    rustup toolchain install nightly --profile minimal
fi
rustup +nightly component add rust-src >/dev/null

target=$(rustc -vV | sed -n 's/^host: //p')
export RUSTFLAGS="-Zsanitizer=address"
export RUSTDOCFLAGS="-Zsanitizer=address"
# allocator_may_return_null: a failed huge allocation (sparse_reads.rs) returns null, as
# glibc does, instead of ASan aborting the process.
export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:allocator_may_return_null=1"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/asan}"
# ASan's instrumentation costs an idle runtime 1-6 ms of CPU a second here: tests/idle_cpu.rs
# allows more under it (its limit is for real builds), and the tests' hang guard waits three
# times as long (tests/common/mod.rs).
export RINGSTEAL_UNDER_ASAN=1
# -Zbuild-std instruments the standard library too, so every allocation is tracked.
# ringsteal-net's `bytes` feature: its try_read_buf / try_recv_buf write into memory not
# initialised yet (tests/buf_mut.rs), and it turns on ringsteal-rt's `bytes` impls too.
cargo +nightly test -Zbuild-std --target "$target" -p ringsteal-rt -p ringsteal-fs -p ringsteal-net -p ringsteal-process -p ringsteal-signal --features ringsteal-net/bytes --tests "$@"
