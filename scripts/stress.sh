#!/usr/bin/env bash
# Stress of the sleep/wake protocol in a release build: pairs of tasks on two shards hand a
# token back and forth with random delays until N cross-shard wakes have happened, under
# MSG_RING and under eventfd doorbells (crates/ringsteal-rt/tests/wake_stress.rs).
#   scripts/stress.sh            # 10,000,000 wakes per mechanism
#   scripts/stress.sh 1000000    # another count
# `cargo test` runs the same test with 1,000,000 wakes per mechanism.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RINGSTEAL_STRESS="${1:-10000000}" cargo test -p ringsteal-rt --release --test wake_stress -- --nocapture --test-threads=1
