//! What a stream group's `<group>/interleaved` benchmark records: every runtime's turns, round
//! by round, printed as per-round ratios and medians and written to
//! `$CRITERION_HOME/net-streams/<group>.json`, where `scripts/bench_results.py` reads them for
//! the report's targets (a ratio taken within one round is not skewed by the host's drift
//! between rounds).
//!
//! ```
//! use std::time::Duration;
//! use ringsteal_benches::net::interleaved::Turns;
//!
//! let mut turns = Turns::new(&["ringsteal", "tokio"], 10);
//! turns.push(0, Duration::from_micros(100));
//! turns.push(1, Duration::from_micros(120));
//! assert_eq!(turns.ratio(0, 1), Some(1.2));
//! ```

use std::time::Duration;

use super::report;

/// The turns of one interleaved group: `durations[i][k]` is runtime `i`'s turn in round `k`,
/// each of `iterations` iterations of the shape.
#[derive(Debug)]
pub struct Turns {
    names: Vec<&'static str>,
    iterations: u64,
    durations: Vec<Vec<Duration>>,
}

impl Turns {
    /// No turns yet, for the runtimes `names` (in the order [`Turns::push`] indexes them).
    pub fn new(names: &[&'static str], iterations: u64) -> Self {
        Turns {
            names: names.to_vec(),
            iterations,
            durations: vec![Vec::new(); names.len()],
        }
    }

    /// Records runtime `i`'s turn of the current round.
    pub fn push(&mut self, i: usize, took: Duration) {
        self.durations[i].push(took);
    }

    /// Forgets the rounds before `first` (criterion's warm-up: see [`first_measured_round`]).
    pub fn drop_rounds_before(&mut self, first: usize) {
        for d in &mut self.durations {
            d.drain(..first.min(d.len()));
        }
    }

    /// Rounds every runtime has a turn in.
    pub fn rounds(&self) -> usize {
        self.durations.iter().map(Vec::len).min().unwrap_or(0)
    }

    /// Runtime `peer`'s time over runtime `mine`'s, per round, sorted.
    fn ratios(&self, mine: usize, peer: usize) -> Vec<f64> {
        let mut r: Vec<f64> = self.durations[peer]
            .iter()
            .zip(&self.durations[mine])
            .map(|(p, m)| p.as_secs_f64() / m.as_secs_f64())
            .collect();
        r.sort_by(f64::total_cmp);
        r
    }

    /// The median over the rounds of `peer`'s time divided by `mine`'s (above 1: `mine` is
    /// faster); `None` without a round.
    pub fn ratio(&self, mine: usize, peer: usize) -> Option<f64> {
        let r = self.ratios(mine, peer);
        r.get(r.len() / 2).copied()
    }

    /// Prints, for each of the runtimes `mine`, the median ratio (and range) to every runtime
    /// from `first_peer` on, then every runtime's median time per iteration; writes every turn
    /// to `$CRITERION_HOME/net-streams/<group>.json` if `write` (not in criterion's `--test`
    /// pass).
    pub fn report(&self, group: &str, mine: &[usize], first_peer: usize, write: bool) {
        if self.rounds() == 0 {
            return; // filtered out
        }
        for &m in mine {
            let ratios: Vec<String> = (first_peer..self.names.len())
                .map(|p| {
                    let r = self.ratios(m, p);
                    format!(
                        "{} {:.2}x ({:.2}-{:.2}x)",
                        self.names[p],
                        r[r.len() / 2],
                        r[0],
                        r[r.len() - 1]
                    )
                })
                .collect();
            eprintln!(
                "{group}/interleaved/{}: peer time / ringsteal time, median of {} rounds: {}",
                self.names[m],
                self.rounds(),
                ratios.join(", ")
            );
        }
        let medians: Vec<String> = (0..self.names.len())
            .map(|i| {
                let mut t: Vec<Duration> = self.durations[i]
                    .iter()
                    .map(|&d| d.div_f64(self.iterations as f64))
                    .collect();
                t.sort();
                format!("{} {:.2?}", self.names[i], t[t.len() / 2])
            })
            .collect();
        eprintln!(
            "{group}/interleaved: median time per iteration: {}",
            medians.join(", ")
        );
        if write {
            self.write(group);
        }
    }

    fn write(&self, group: &str) {
        let Some(path) = report::path_in("net-streams", group) else {
            return;
        };
        let rows: Vec<String> = self
            .names
            .iter()
            .zip(&self.durations)
            .map(|(name, turns)| {
                let ns: Vec<String> = turns.iter().map(|d| d.as_nanos().to_string()).collect();
                format!("\"{name}\": [{}]", ns.join(", "))
            })
            .collect();
        let json = format!(
            "{{\"group\": \"{group}\", \"iterations_per_turn\": {}, \"turns_ns\": {{\n  {}\n}}}}\n",
            self.iterations,
            rows.join(",\n  ")
        );
        report::write_json(group, &path, &json);
    }
}

/// The first round of criterion's measurement, given the round each call of the
/// benchmark's `iter_custom` began with (`call_starts`) and the group's sample size:
/// criterion warms up with calls of its own, then makes one call per sample, so only the last
/// `samples` calls are measured. With fewer calls (criterion's `--test` pass makes one),
/// every round counts.
///
/// ```
/// use ringsteal_benches::net::interleaved::first_measured_round;
///
/// // Warm-up calls of 1 and 2 rounds, then three samples of one round each.
/// assert_eq!(first_measured_round(&[0, 1, 3, 4, 5], 3), 3);
/// assert_eq!(first_measured_round(&[0], 3), 0);
/// ```
pub fn first_measured_round(call_starts: &[usize], samples: usize) -> usize {
    if call_starts.len() > samples {
        call_starts[call_starts.len() - samples]
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_up_rounds_are_dropped_for_every_runtime() {
        let mut t = Turns::new(&["mine", "peer"], 1);
        // A warm-up round where the peer looked 10x slower, then two measured rounds.
        for (m, p) in [(10, 100), (10, 20), (10, 20)] {
            t.push(0, Duration::from_micros(m));
            t.push(1, Duration::from_micros(p));
        }
        t.drop_rounds_before(first_measured_round(&[0, 1, 2], 2));
        assert_eq!(t.rounds(), 2);
        assert_eq!(t.ratios(0, 1), [2.0, 2.0]);
    }

    #[test]
    fn the_ratio_is_the_median_of_per_round_ratios_not_a_ratio_of_medians() {
        let mut t = Turns::new(&["mine", "peer"], 1);
        // Round by round the peer takes 2x, 3x and 0.5x as long.
        for (m, p) in [(10, 20), (100, 300), (40, 20)] {
            t.push(0, Duration::from_micros(m));
            t.push(1, Duration::from_micros(p));
        }
        assert_eq!(t.rounds(), 3);
        assert_eq!(t.ratio(0, 1), Some(2.0));
        assert_eq!(t.ratio(1, 0), Some(0.5));
    }

    #[test]
    fn without_rounds_there_is_no_ratio() {
        let t = Turns::new(&["mine", "peer"], 1);
        assert_eq!(t.ratio(0, 1), None);
        assert_eq!(t.rounds(), 0);
    }
}
