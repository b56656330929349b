//! `spawn_join`: spawn 100k tiny tasks, then join all of them.
//!
//! One criterion iteration = all [`TASKS`] tasks spawned and joined; the group
//! reports `Throughput::Elements(TASKS)`, so criterion prints tasks per second
//! and the time divided by [`TASKS`] is the cost per task. Task `i` returns
//! [`task_value`]`(i)`; the driver sums the joined values and [`check`]s them.

/// Tasks per iteration.
pub const TASKS: usize = 100_000;

/// What task `i` returns (kept trivially cheap).
#[inline]
pub fn task_value(i: usize) -> u64 {
    i as u64
}

/// Sum of `task_value(i)` for `i` in `range`.
pub fn expected_sum(range: std::ops::Range<usize>) -> u64 {
    range.map(task_value).sum()
}

/// Panics unless `sum` is the sum of all `TASKS` task values.
pub fn check(sum: u64) {
    assert_eq!(
        sum,
        expected_sum(0..TASKS),
        "spawn_join: joined values do not add up"
    );
}
