//! The order in which the runtimes of a group run, rotated by a recorded seed.
//!
//! Criterion runs the benchmarks of a group in the order they are registered. If
//! ringsteal were always registered first it would always run first: right after the
//! group's set-up (a file warmed, a checksum computed), on a machine whose caches and
//! frequency the previous group left behind, while every peer ran after a runtime had
//! just been dropped. Each group therefore lists its runtimes (and floors) as entries and
//! runs them rotated: entry `offset(seed, key, n)` first, then the following ones,
//! wrapping round. The offset mixes the seed with the group's key, so with one seed
//! different groups start with different runtimes, and a new seed gives every group a
//! new starting point.
//!
//! The seed is `RINGSTEAL_BENCH_ORDER_SEED` (0 if unset, so a plain run is repeatable);
//! `scripts/bench_report.sh` picks a fresh one per run and writes it into the report.
//! Benchmark ids do not depend on the order, so the report and guardrail tooling,
//! which match results by id, are unaffected.

/// Environment variable holding the order seed.
pub const SEED_VAR: &str = "RINGSTEAL_BENCH_ORDER_SEED";

/// The order seed of this run: `RINGSTEAL_BENCH_ORDER_SEED`, or 0 if unset.
///
/// Panics if the variable is set but is not an unsigned integer: a typo must not
/// silently fall back to the default order.
pub fn seed() -> u64 {
    match std::env::var(SEED_VAR) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{SEED_VAR}={v:?} is not an unsigned integer")),
        Err(_) => 0,
    }
}

/// Index of the entry that runs first among `n` entries of the group `key`.
pub fn offset(seed: u64, key: &str, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    (mix(fnv1a(key) ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)) % n as u64) as usize
}

/// The order of round `round`'s turns in the interleaved group `key`: a permutation of
/// `0..n`, shuffled afresh every round from the seed, the key and the round. Rotating one
/// order instead would keep every runtime right after the same neighbour, whose
/// after-effects (a server still closing its connections, shards that busy-poll) would then
/// always fall on it.
pub fn round_order(seed: u64, key: &str, round: u64, n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut state = fnv1a(key) ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ mix(round);
    // Fisher-Yates, drawing from a splitmix64 sequence.
    for i in (1..n).rev() {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let j = (mix(state) % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

/// FNV-1a of `key` (stable across Rust releases, unlike the std hasher).
fn fnv1a(key: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The splitmix64 finaliser.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `items` rotated so that entry [`offset`]`(seed, key, len)` comes first.
pub fn rotated<T>(mut items: Vec<T>, seed: u64, key: &str) -> Vec<T> {
    let k = offset(seed, key, items.len());
    items.rotate_left(k);
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_keeps_every_entry_in_cyclic_order() {
        let items: Vec<u32> = (0..5).collect();
        for seed in 0..50 {
            let r = rotated(items.clone(), seed, "spawn_join");
            let first = r[0] as usize;
            assert_eq!(first, offset(seed, "spawn_join", 5));
            for (i, v) in r.iter().enumerate() {
                assert_eq!(*v as usize, (first + i) % 5);
            }
        }
    }

    #[test]
    fn every_entry_goes_first_for_some_seed() {
        // Over a handful of seeds each of four runtimes leads at least once: no
        // runtime is favoured by construction.
        let mut led = [false; 4];
        for seed in 0..64 {
            led[offset(seed, "cat_100mb", 4)] = true;
        }
        assert_eq!(led, [true; 4]);
    }

    #[test]
    fn one_seed_starts_groups_with_different_entries() {
        let groups = [
            "spawn_join",
            "fanout_fanin_balanced",
            "fanout_fanin_skewed",
            "steal_imbalance",
            "idle_wake_latency",
            "timer_churn",
            "cat_100mb",
            "fs_read_4k_qd1",
        ];
        let firsts: std::collections::HashSet<usize> =
            groups.iter().map(|g| offset(0, g, 4)).collect();
        assert!(firsts.len() > 1, "every group starts with the same entry");
    }

    #[test]
    fn round_orders_are_permutations_and_vary_who_runs_before_whom() {
        let n = 5;
        // predecessor[a][b]: rounds in which `a` ran right before `b`.
        let mut predecessor = vec![vec![0u32; n]; n];
        for round in 0..200 {
            let order = round_order(3, "net_stream_hotspot_rotation_4k", round, n);
            let mut sorted = order.clone();
            sorted.sort();
            assert_eq!(
                sorted,
                (0..n).collect::<Vec<_>>(),
                "round {round}: {order:?}"
            );
            for w in order.windows(2) {
                predecessor[w[0]][w[1]] += 1;
            }
        }
        // Every runtime follows every other one in some round, and none follows the same
        // one in most rounds (a rotation would give each one fixed predecessor).
        for (a, row) in predecessor.iter().enumerate() {
            for (b, &count) in row.iter().enumerate().filter(|&(b, _)| b != a) {
                assert!(count > 0, "{a} never ran before {b}");
                assert!(count < 100, "{a} ran before {b} in most rounds");
            }
        }
        assert_eq!(round_order(3, "g", 7, 4), round_order(3, "g", 7, 4));
        assert_eq!(round_order(3, "g", 7, 1), [0]);
        assert!(round_order(3, "g", 7, 0).is_empty());
    }

    #[test]
    fn the_order_depends_only_on_seed_and_key() {
        assert_eq!(offset(7, "timer_churn", 4), offset(7, "timer_churn", 4));
        assert_eq!(offset(7, "x", 1), 0);
        assert_eq!(offset(7, "x", 0), 0);
    }
}
