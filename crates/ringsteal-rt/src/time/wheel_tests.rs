//! Specifications of the timer wheel, driven with explicit ticks (no clock, no kernel), so
//! they run under Miri (`scripts/miri.sh`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::task::{Wake, Waker};
use std::time::{Duration, Instant};

use super::*;

/// Records the id of every waker woken, in order.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<u32>>>);

struct IdWaker {
    id: u32,
    log: Log,
}

impl Wake for IdWaker {
    fn wake(self: Arc<Self>) {
        self.log.0.lock().unwrap().push(self.id);
    }
}

impl Log {
    fn waker(&self, id: u32) -> Waker {
        Waker::from(Arc::new(IdWaker {
            id,
            log: self.clone(),
        }))
    }

    fn take(&self) -> Vec<u32> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// A wheel, its counters and a log of fired timer ids.
struct Harness {
    wheel: Wheel,
    counters: ShardCounters,
    log: Log,
}

impl Harness {
    fn new() -> Self {
        Self {
            wheel: Wheel::new(Instant::now()),
            counters: ShardCounters::default(),
            log: Log::default(),
        }
    }

    fn insert(&mut self, deadline: u64, id: u32) -> TimerKey {
        let waker = self.log.waker(id);
        self.wheel
            .insert(deadline, waker, &self.counters)
            .expect("deadline in the future")
    }

    /// Advances to `now` and returns the ids fired, in firing order.
    fn advance(&mut self, now: u64) -> Vec<u32> {
        let mut wakers = Vec::new();
        self.wheel.advance(now, &mut wakers, &self.counters);
        wakers.into_iter().for_each(Waker::wake);
        self.log.take()
    }

    /// Removes a timer, dropping its waker.
    fn remove(&mut self, key: TimerKey) {
        drop(self.wheel.remove(key, &self.counters));
    }

    fn active(&self) -> u64 {
        self.counters.timers_active.get()
    }
}

/// Deadlines on every level, at level edges, and in the overflow list.
fn spread_deadlines() -> Vec<u64> {
    let mut d = vec![
        1, 2, 63, 64, 65, 100, 4095, 4096, 4097, 262_143, 262_144, 262_145,
    ];
    for level in 3..7u32 {
        let edge = 1u64 << (6 * level);
        d.extend([edge - 1, edge, edge + 1, edge + 12_345]);
    }
    d.extend([(1 << 42) - 1, 1 << 42, (1 << 42) + 1, (1 << 43) + 7]);
    d.sort_unstable();
    d.dedup();
    d
}

#[test]
fn timers_with_equal_deadlines_fire_together_at_that_tick() {
    let mut h = Harness::new();
    for id in 0..5 {
        h.insert(100, id);
    }
    assert_eq!(h.active(), 5);
    assert!(h.advance(99).is_empty());
    let mut fired = h.advance(100);
    fired.sort_unstable();
    assert_eq!(fired, vec![0, 1, 2, 3, 4]);
    assert_eq!(h.active(), 0);
    assert_eq!(h.counters.timers_fired.get(), 5);
}

#[test]
fn timers_with_equal_deadlines_fire_in_the_order_they_were_set_at_any_distance() {
    // As tokio's: however many cascades a deadline goes through (a slot taken whole and
    // re-linked entry by entry), timers set for it fire first in, first out.
    for deadline in spread_deadlines() {
        let mut h = Harness::new();
        let keys: Vec<_> = (0..6).map(|id| h.insert(deadline, id)).collect();
        // One removed from the middle and one from the end, and one reset to the same
        // deadline (it goes last, as a timer set anew).
        h.remove(keys[2]);
        h.remove(keys[5]);
        assert_eq!(
            h.wheel.reschedule(keys[0], deadline, &h.counters).ok(),
            Some(true)
        );
        h.insert(deadline, 6);
        // Set later, from nearer, after a first jump towards the deadline: still after.
        assert!(h.advance(deadline / 2).is_empty());
        if deadline / 2 < deadline {
            h.insert(deadline, 7);
        }
        let fired = h.advance(deadline);
        let mut expected = vec![1, 3, 4, 0, 6];
        if deadline / 2 < deadline {
            expected.push(7);
        }
        assert_eq!(fired, expected, "deadline {deadline}");
    }
}

#[test]
fn timers_fire_at_their_deadline_never_a_tick_early() {
    let mut h = Harness::new();
    let deadlines = spread_deadlines();
    // Inserted out of order.
    for (id, &d) in deadlines.iter().enumerate().rev() {
        h.insert(d, id as u32);
    }
    let mut sorted: Vec<(u64, u32)> = deadlines
        .iter()
        .enumerate()
        .map(|(id, &d)| (d, id as u32))
        .collect();
    sorted.sort_unstable();
    for (d, id) in sorted {
        assert!(h.advance(d - 1).is_empty(), "something fired before {d}");
        assert_eq!(h.advance(d), vec![id], "the timer due at {d}");
    }
    assert_eq!(h.active(), 0);
}

#[test]
fn a_long_jump_fires_every_due_timer_in_deadline_order() {
    let mut h = Harness::new();
    let deadlines = spread_deadlines();
    for (id, &d) in deadlines.iter().enumerate().rev() {
        h.insert(d, id as u32);
    }
    // A jump to just before the last level edge, then past everything.
    let mid = 1 << 30;
    let first = h.advance(mid);
    let rest = h.advance(1 << 44);
    let fired_deadlines: Vec<u64> = first
        .iter()
        .chain(&rest)
        .map(|&id| deadlines[id as usize])
        .collect();
    assert!(first.iter().all(|&id| deadlines[id as usize] <= mid));
    let mut sorted = deadlines.clone();
    sorted.sort_unstable();
    assert_eq!(fired_deadlines, sorted, "fired out of deadline order");
}

#[test]
fn a_timer_beyond_the_wheel_range_fires_in_the_jump_that_passes_it() {
    // About 51 days (2^42 us) is the wheel's reach; later deadlines wait in the overflow
    // list and must fire neither early nor late.
    for overshoot in [0, 1, 1000, 1 << 20, 1 << 41] {
        let mut h = Harness::new();
        let d = (1u64 << 42) + 12_345;
        h.insert(d, 1);
        h.insert(d + (1 << 43), 2);
        h.insert(100, 3);
        assert_eq!(h.advance(d - 1), vec![3]);
        assert_eq!(h.advance(d + overshoot), vec![1], "overshoot {overshoot}");
        assert_eq!(h.active(), 1);
        // And in one jump from the start, with a timer inserted meanwhile.
        let mut h = Harness::new();
        h.insert(d, 1);
        h.insert(d + 5, 2);
        h.insert(d - 5, 3);
        assert_eq!(
            h.advance(d + 5 + overshoot),
            vec![3, 1, 2],
            "overshoot {overshoot}"
        );
    }
}

#[test]
fn a_timer_just_across_a_2_pow_42_boundary_fires_on_time() {
    // Every 2^42 us (about 51 days of runtime) the wheel's position crosses a span boundary;
    // a deadline just beyond it waits in the overflow list although it is near.
    let edge = 1u64 << 42;
    for (pos, deadline, now) in [
        (edge - 100, edge + 3, edge + 50),
        (edge - 1, edge, edge + 4_000),
        (3 * edge - 7, 3 * edge + 70_000, 3 * edge + 1_000_000),
    ] {
        let mut h = Harness::new();
        assert!(h.advance(pos).is_empty());
        h.insert(deadline, 1);
        assert!(
            h.advance(deadline - 1).is_empty(),
            "fired before {deadline}"
        );
        assert_eq!(h.advance(now), vec![1], "due at {deadline}, clock at {now}");
    }
}

#[test]
fn a_removed_overflow_timer_leaves_the_others_on_time() {
    // The overflow list keeps a lower bound of its deadlines; removing the earliest entry
    // leaves the bound stale. Advancing past it must neither fire anything nor disturb the
    // entries still waiting, and must not walk the list on every tick.
    let far = 5u64 << 42;
    let mut h = Harness::new();
    let first = h.insert(far, 1);
    h.insert(far + (3 << 42), 2);
    h.insert(far + (3 << 42) + 1, 3);
    h.remove(first);
    for now in [1, 1000, far - 1, far, far + 1, far + (1 << 42)] {
        assert!(h.advance(now).is_empty(), "nothing is due at {now}");
    }
    assert_eq!(h.active(), 2);
    assert_eq!(h.advance(far + (3 << 42)), vec![2]);
    assert_eq!(h.advance(u64::MAX - 1), vec![3]);
    assert_eq!(h.active(), 0);
}

#[test]
fn deadlines_too_far_to_count_saturate_instead_of_wrapping() {
    // A deadline about 584,000 years away does not fit u64 microseconds: it saturates to the
    // never-firing tick, where wrapping would have made it due about now.
    let mut h = Harness::new();
    let origin = h.wheel.origin;
    let beyond = [
        Duration::from_micros(u64::MAX),
        Duration::from_millis(u64::MAX),
        Duration::from_secs(u64::MAX / 2),
    ];
    for (i, d) in beyond.into_iter().enumerate() {
        if let Some(t) = origin.checked_add(d + Duration::from_nanos(1)) {
            assert_eq!(h.wheel.deadline_tick(t), u64::MAX);
            h.insert(h.wheel.deadline_tick(t), i as u32);
        }
    }
    assert!(h.advance(1 << 50).is_empty());
    // Nothing for the shard to wait for: these never fire.
    assert_eq!(h.wheel.next_timeout(Instant::now()), None);
    assert!(h.active() > 0, "they are still registered");
}

#[test]
fn a_removed_timer_never_fires_and_stale_keys_are_ignored() {
    let mut h = Harness::new();
    let a = h.insert(50, 1);
    let b = h.insert(50, 2);
    h.remove(a);
    assert_eq!(h.active(), 1);
    h.remove(a); // twice: no-op
    assert_eq!(h.advance(50), vec![2]);
    h.remove(b); // already fired: no-op
    assert!(!h.wheel.update_waker(b, &h.log.waker(9)));
    // A new timer reuses the freed slab entry; the stale key must not touch it.
    let c = h.insert(80, 3);
    h.remove(a);
    h.remove(b);
    assert!(!h.wheel.update_waker(a, &h.log.waker(9)));
    assert_eq!(h.active(), 1);
    assert_eq!(h.advance(80), vec![3]);
    assert!(
        !h.wheel.reschedule(c, 500, &h.counters).unwrap(),
        "c already fired"
    );
    assert_eq!(h.counters.timers_fired.get(), 2);
}

#[test]
fn rescheduling_moves_a_timer_earlier_or_later_and_keeps_its_waker() {
    let mut h = Harness::new();
    let early = h.insert(100_000, 1);
    let late = h.insert(10, 2);
    assert!(h.wheel.reschedule(early, 20, &h.counters).unwrap());
    assert!(h.wheel.reschedule(late, 300_000, &h.counters).unwrap());
    assert!(h.advance(19).is_empty());
    assert_eq!(h.advance(20), vec![1]);
    assert!(
        h.advance(299_999).is_empty(),
        "moved later, it must not fire at 10"
    );
    assert_eq!(h.advance(300_000), vec![2]);
    // A new waker replaces the old one.
    let k = h.insert(400_000, 3);
    assert!(h.wheel.update_waker(k, &h.log.waker(4)));
    assert_eq!(h.advance(400_000), vec![4]);
    // Moved to a deadline already passed: removed, its waker handed back.
    let k = h.insert(500_000, 5);
    let waker = h.wheel.reschedule(k, 400_000, &h.counters).unwrap_err();
    assert_eq!(h.active(), 0);
    waker.wake();
    assert_eq!(h.log.take(), vec![5]);
    assert!(h.advance(600_000).is_empty());
}

#[test]
fn inserting_at_or_before_the_current_tick_reports_expired() {
    let mut h = Harness::new();
    h.advance(1000);
    let w = h.log.waker(1);
    assert_eq!(
        h.wheel.insert(1000, w.clone(), &h.counters).unwrap_err(),
        Expired
    );
    assert_eq!(h.wheel.insert(5, w, &h.counters).unwrap_err(), Expired);
    h.insert(1001, 2);
    assert_eq!(h.advance(1001), vec![2]);
}

#[test]
fn ticks_round_deadlines_up_and_the_clock_down() {
    let h = Harness::new();
    let origin = h.wheel.origin;
    let at = |ns: u64| origin + Duration::from_nanos(ns);
    assert_eq!(h.wheel.deadline_tick(at(1_500)), 2);
    assert_eq!(h.wheel.now_tick(at(1_500)), 1);
    assert_eq!(h.wheel.deadline_tick(at(2_000)), 2);
    assert_eq!(h.wheel.now_tick(at(2_000)), 2);
    assert_eq!(h.wheel.deadline_tick(at(1)), 1);
    assert_eq!(h.wheel.now_tick(at(999)), 0);
    // Before the origin saturates to tick 0.
    if let Some(before) = origin.checked_sub(Duration::from_millis(1)) {
        assert_eq!(h.wheel.deadline_tick(before), 0);
        assert_eq!(h.wheel.now_tick(before), 0);
    }
}

#[test]
fn random_timers_fire_exactly_when_the_clock_passes_them() {
    // Deterministic pseudo-random deadlines, removals and reschedules against a model.
    let mut h = Harness::new();
    let mut model: BTreeMap<u32, u64> = BTreeMap::new();
    let mut keys = BTreeMap::new();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut rand = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let mut now = 0;
    let steps = if cfg!(miri) { 60 } else { 600 };
    for id in 0..steps as u32 {
        let scale = rand(6) * 6 + 6;
        let d = now + 1 + rand(1 << scale);
        keys.insert(id, h.insert(d, id));
        model.insert(id, d);
        match rand(8) {
            0 => {
                let victim = rand(u64::from(id) + 1) as u32;
                if let Some(k) = keys.remove(&victim) {
                    h.remove(k);
                    model.remove(&victim);
                }
            }
            1 => {
                let victim = rand(u64::from(id) + 1) as u32;
                if let (Some(&k), Some(deadline)) = (keys.get(&victim), model.get_mut(&victim)) {
                    let nd = now + 1 + rand(100_000);
                    assert!(h.wheel.reschedule(k, nd, &h.counters).unwrap());
                    *deadline = nd;
                }
            }
            _ => {}
        }
        now += rand(5_000);
        let fired = h.advance(now);
        let mut due: Vec<(u64, u32)> = model
            .iter()
            .filter(|(_, &d)| d <= now)
            .map(|(&i, &d)| (d, i))
            .collect();
        due.sort_unstable();
        let fired_deadlines: Vec<u64> = fired.iter().map(|i| model[i]).collect();
        let due_deadlines: Vec<u64> = due.iter().map(|&(d, _)| d).collect();
        assert_eq!(fired_deadlines, due_deadlines, "at tick {now}");
        for i in fired {
            model.remove(&i);
            keys.remove(&i);
        }
        assert_eq!(h.active(), model.len() as u64);
    }
}

#[test]
fn clear_drops_every_timer_and_leaves_keys_stale() {
    let mut h = Harness::new();
    let keys: Vec<_> = (0..10).map(|i| h.insert(100 + i, i as u32)).collect();
    assert_eq!(
        h.wheel.clear(&h.counters).len(),
        10,
        "every waker is handed back"
    );
    assert_eq!(h.active(), 0);
    for k in keys {
        h.remove(k);
        assert!(!h.wheel.update_waker(k, &h.log.waker(0)));
    }
    assert!(h.advance(1 << 20).is_empty());
    assert_eq!(h.wheel.next_timeout(Instant::now()), None);
}

#[test]
fn the_next_timeout_is_none_without_timers_and_bounded_by_the_nearest_one() {
    let mut h = Harness::new();
    assert_eq!(h.wheel.next_timeout(Instant::now()), None);
    let tick = h
        .wheel
        .deadline_tick(Instant::now() + Duration::from_secs(3600));
    h.insert(tick, 1);
    let t = h
        .wheel
        .next_timeout(Instant::now())
        .expect("a timer is pending");
    assert!(t <= Duration::from_secs(3600), "{t:?}");
    // The nearest timer bounds it: one due a microsecond after the origin.
    h.insert(1, 2);
    let t = h
        .wheel
        .next_timeout(Instant::now())
        .expect("timers are pending");
    assert!(t <= Duration::from_micros(1), "{t:?}");
}

#[test]
fn the_position_stops_at_the_last_tick_and_a_never_deadline_never_fires() {
    let mut h = Harness::new();
    h.insert(86_400_000_000, 1); // a day
    h.insert(NEVER_TICK, 2); // saturated: never
                             // The clock passing the last countable tick (a long advance of a paused clock): the
                             // day fires, the advance ends, the never-firing entry stays.
    assert_eq!(h.advance(u64::MAX), vec![1]);
    assert_eq!(h.active(), 1);
    assert_eq!(h.advance(u64::MAX), Vec::<u32>::new());
    // The shard is not told to wait for it (it would wake at once, for ever).
    assert_eq!(h.wheel.next_tick(), None);
    let mut h = Harness::new();
    h.insert(NEVER_TICK, 3);
    let far = Instant::now() + Duration::from_secs(3600);
    // Coarse slots may wake the shard early to cascade; never past the last tick.
    while let Some(tick) = h.wheel.next_tick() {
        assert!(tick <= LAST_TICK);
        assert!(h.advance(tick).is_empty());
    }
    assert_eq!(h.wheel.next_timeout(far), None);
}

/// Enough timers for a slab worth trimming.
const MANY: u32 = super::TRIM_FROM as u32 * 2;

#[test]
fn a_burst_of_timers_gives_its_slab_back_once_removed_and_old_keys_stay_stale() {
    let mut h = Harness::new();
    let keys: Vec<_> = (0..MANY)
        .map(|i| h.insert(1_000 + u64::from(i), i))
        .collect();
    assert_eq!(h.wheel.entries.len(), MANY as usize);
    for &k in &keys {
        h.remove(k);
    }
    assert_eq!(h.active(), 0);
    assert!(
        h.wheel.entries.capacity() <= super::TRIM_FROM,
        "kept {} entries' room",
        h.wheel.entries.capacity()
    );
    // New timers take fresh entries at the old indices: no old key may name them.
    let fresh: Vec<_> = (0..8).map(|i| h.insert(2_000, 100 + i)).collect();
    for &k in &keys[..8] {
        h.remove(k);
        assert!(!h.wheel.update_waker(k, &h.log.waker(9)));
    }
    assert_eq!(h.active(), 8);
    let mut fired = h.advance(2_000);
    fired.sort_unstable();
    assert_eq!(fired, (100..108).collect::<Vec<_>>());
    assert!(fresh
        .iter()
        .all(|&k| !h.wheel.update_waker(k, &h.log.waker(9))));
}

#[test]
fn timers_that_fire_give_the_slab_back_too_once_a_late_one_at_its_end_goes() {
    let mut h = Harness::new();
    for i in 0..MANY {
        h.insert(10 + u64::from(i % 50), i);
    }
    // One long-lived timer at the end of the slab holds it while it lives.
    let late = h.insert(1_000_000, MANY);
    assert_eq!(h.advance(100).len(), MANY as usize);
    assert_eq!(h.active(), 1);
    assert_eq!(
        h.wheel.entries.len(),
        MANY as usize + 1,
        "held by the late timer"
    );
    let k = h.insert(2_000, 7);
    h.remove(k);
    h.remove(late);
    assert_eq!(h.active(), 0);
    assert!(h.wheel.entries.capacity() <= super::TRIM_FROM);
    assert!(!h.wheel.update_waker(late, &h.log.waker(9)));
}

#[test]
fn a_timer_held_slab_is_scanned_only_as_the_timers_halve() {
    let mut h = Harness::new();
    let keys: Vec<_> = (0..MANY).map(|i| h.insert(1_000, i)).collect();
    let _held = h.insert(5_000, MANY);
    for &k in &keys {
        h.remove(k);
    }
    assert_eq!(h.active(), 1);
    // The threshold for the next try is half of what was live at the last one.
    assert!(
        h.wheel.trim_below <= 1,
        "next try at {}",
        h.wheel.trim_below
    );
}
