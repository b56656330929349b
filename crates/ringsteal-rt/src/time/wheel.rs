//! [`Wheel`]: a shard's hierarchical timer wheel. Insert, remove and re-arm are O(1) and
//! touch no kernel state: no syscall, no SQE. The shard's blocking `io_uring_enter` carries
//! the nearest deadline as its timeout.
//!
//! Resolution is one microsecond. Level `L` has 64 slots of `64^L` µs each, so level 0 spans
//! 64 µs and level 6 about 51 days; later deadlines wait in an overflow list. An entry sits
//! in the level where its deadline first differs from the wheel's position; when the position
//! reaches its slot, the entry either fires (deadline passed) or drops to a finer level. A
//! deadline is rounded *up* to the next microsecond and fires only once the clock, rounded
//! *down*, has reached it: a timer never fires early. Slots (and the overflow list) are
//! first in, first out, and a cascade keeps their order: timers with the same deadline fire
//! in the order they were set (or last reset), as tokio's do, however far off they were.
//!
//! The entries are a slab. Once the timers a shard holds fall to a quarter of the slab (of
//! at least [`TRIM_FROM`] entries), the free entries at its end are given back and the free
//! list is rebuilt lowest index first, so that new timers fill the start and the next trim
//! can give more back: a burst of a million timeouts does not keep its 48 MB once it is
//! over. (A long-lived timer at the end of the slab keeps what lies before it until it goes:
//! the attempts are spaced so that their cost stays proportional to the frees.)
//!
//! Owns: the entries (a slab with generation-checked keys) and their wakers. Runs under Miri
//! (no kernel, no clock inside: callers pass ticks).

use std::task::Waker;
use std::time::{Duration, Instant};

use crate::stats::ShardCounters;

const LEVELS: usize = 7;
const SLOT_BITS: u32 = 6;
const SLOTS: usize = 1 << SLOT_BITS;
const NIL: u32 = u32::MAX;
/// Ticks the levels span from a span-aligned start: deadlines in a later span of this many
/// bits wait in the overflow list.
const RANGE_BITS: u32 = SLOT_BITS * LEVELS as u32;
/// `level` value of an entry in the overflow list.
const OVERFLOW: u8 = LEVELS as u8;
/// `level` value of a free slab entry.
const FREE: u8 = u8::MAX;
/// The tick of a deadline too far to count (past `u64::MAX` µs, half a million years after
/// the runtime started): it never fires, the clock never reaches it (the wheel's position
/// stops at [`LAST_TICK`]), and the shard never waits for it.
const NEVER_TICK: u64 = u64::MAX;
/// The last tick the wheel's position reaches (a clock past it is counted as it).
const LAST_TICK: u64 = NEVER_TICK - 1;
/// Slab size below which the wheel never gives entries back (about 200 KB; smaller under
/// Miri, so that its tests of the trim stay quick there).
const TRIM_FROM: usize = if cfg!(miri) { 64 } else { 4096 };

/// Names a wheel entry; stale keys (entry fired or removed) are recognised and ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimerKey {
    index: u32,
    /// 64 bits: a slot reused 2^32 times (an hour at a million timers a second) must not
    /// make a forgotten key match a live entry.
    generation: u64,
}

#[cfg(test)]
impl TimerKey {
    /// A key naming entry `index`, for tests of code that only carries keys.
    pub(crate) fn for_tests(index: u32) -> Self {
        Self {
            index,
            generation: 0,
        }
    }
}

struct Entry {
    deadline: u64,
    waker: Option<Waker>,
    prev: u32,
    next: u32,
    generation: u64,
    level: u8,
    slot: u8,
}

struct Level {
    occupied: u64,
    heads: [u32; SLOTS],
    /// The last entry of each slot's list (new entries go after it).
    tails: [u32; SLOTS],
}

/// The wheel is already past this deadline.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Expired;

/// A shard's timers.
pub(crate) struct Wheel {
    origin: Instant,
    /// Ticks (µs since `origin`) the wheel has advanced to.
    elapsed: u64,
    levels: Box<[Level; LEVELS]>,
    overflow: u32,
    overflow_tail: u32,
    /// A lower bound of the overflow list's deadlines (`u64::MAX` when it is empty), exact
    /// after each cascade, so that advancing does not walk the list every tick.
    overflow_floor: u64,
    entries: Vec<Entry>,
    free: u32,
    len: usize,
    /// A trim is tried when `len` falls below this (0: never).
    trim_below: usize,
    /// The generation new slab entries start at: above every key's of an index given back.
    fresh_generation: u64,
}

impl Wheel {
    pub(crate) fn new(origin: Instant) -> Self {
        let level = || Level {
            occupied: 0,
            heads: [NIL; SLOTS],
            tails: [NIL; SLOTS],
        };
        Self {
            origin,
            elapsed: 0,
            levels: Box::new([
                level(),
                level(),
                level(),
                level(),
                level(),
                level(),
                level(),
            ]),
            overflow: NIL,
            overflow_tail: NIL,
            overflow_floor: u64::MAX,
            entries: Vec::new(),
            free: NIL,
            len: 0,
            trim_below: 0,
            fresh_generation: 0,
        }
    }

    /// The tick at or after `t` (rounded up: never early). Deadlines beyond `u64::MAX` µs
    /// (half a million years) saturate to [`NEVER_TICK`]: they never fire, rather than wrap
    /// around to now.
    pub(crate) fn deadline_tick(&self, t: Instant) -> u64 {
        let d = t.saturating_duration_since(self.origin);
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        if d.subsec_nanos() % 1000 != 0 {
            us.saturating_add(1)
        } else {
            us
        }
    }

    /// The tick `now` is in (rounded down), at most [`LAST_TICK`].
    pub(crate) fn now_tick(&self, now: Instant) -> u64 {
        let us = now.saturating_duration_since(self.origin).as_micros();
        u64::try_from(us).unwrap_or(LAST_TICK).min(LAST_TICK)
    }

    fn tick_instant(&self, tick: u64) -> Instant {
        let d = Duration::from_micros(tick);
        self.origin
            .checked_add(d)
            .unwrap_or_else(|| crate::util::deadline_after(d))
    }

    /// True if the wheel is past `deadline` (a tick): [`insert`](Self::insert) would refuse it.
    pub(crate) fn has_passed(&self, deadline: u64) -> bool {
        deadline <= self.elapsed
    }

    /// Registers `waker` for `deadline` (a tick). `Err(Expired)` if the wheel is already past
    /// it: the caller is ready now.
    pub(crate) fn insert(
        &mut self,
        deadline: u64,
        waker: Waker,
        counters: &ShardCounters,
    ) -> Result<TimerKey, Expired> {
        if deadline <= self.elapsed {
            return Err(Expired);
        }
        let index = if self.free != NIL {
            let i = self.free;
            self.free = self.entries[i as usize].next;
            let e = &mut self.entries[i as usize];
            e.deadline = deadline;
            e.waker = Some(waker);
            i
        } else {
            let i =
                u32::try_from(self.entries.len()).expect("fewer than 4 billion timers per shard");
            self.entries.push(Entry {
                deadline,
                waker: Some(waker),
                prev: NIL,
                next: NIL,
                generation: self.fresh_generation,
                level: FREE,
                slot: 0,
            });
            self.trim_below = trim_threshold(self.entries.len());
            i
        };
        self.link(index);
        self.len += 1;
        counters.timers_active.set(self.len as u64);
        Ok(TimerKey {
            index,
            generation: self.entries[index as usize].generation,
        })
    }

    fn live(&self, key: TimerKey) -> bool {
        self.entries
            .get(key.index as usize)
            .is_some_and(|e| e.generation == key.generation && e.level != FREE)
    }

    /// Replaces the waker of a pending entry. False if the key is stale (fired or removed).
    pub(crate) fn update_waker(&mut self, key: TimerKey, waker: &Waker) -> bool {
        if !self.live(key) {
            return false;
        }
        let slot = &mut self.entries[key.index as usize].waker;
        match slot {
            Some(w) if w.will_wake(waker) => {}
            _ => *slot = Some(waker.clone()),
        }
        true
    }

    /// Moves a pending entry to a new deadline, keeping its waker. False if stale or the new
    /// deadline has passed (the entry is then removed and its waker returned to be woken).
    pub(crate) fn reschedule(
        &mut self,
        key: TimerKey,
        deadline: u64,
        counters: &ShardCounters,
    ) -> Result<bool, Waker> {
        if !self.live(key) {
            return Ok(false);
        }
        if deadline <= self.elapsed {
            return match self.take(key.index, counters) {
                Some(w) => Err(w),
                None => Ok(false),
            };
        }
        self.unlink(key.index);
        self.entries[key.index as usize].deadline = deadline;
        self.link(key.index);
        Ok(true)
    }

    /// Removes an entry (no-op for a stale key), returning its waker for the caller to drop
    /// once the wheel is no longer borrowed (dropping a waker can run arbitrary code).
    #[must_use = "drop the waker after releasing the wheel"]
    pub(crate) fn remove(&mut self, key: TimerKey, counters: &ShardCounters) -> Option<Waker> {
        if self.live(key) {
            self.take(key.index, counters)
        } else {
            None
        }
    }

    /// Unlinks and frees an entry, returning its waker.
    fn take(&mut self, index: u32, counters: &ShardCounters) -> Option<Waker> {
        self.unlink(index);
        let e = &mut self.entries[index as usize];
        e.level = FREE;
        e.generation = e.generation.wrapping_add(1);
        let waker = e.waker.take();
        e.next = self.free;
        self.free = index;
        self.len -= 1;
        counters.timers_active.set(self.len as u64);
        if self.len < self.trim_below {
            self.trim();
        }
        waker
    }

    /// Gives back the free entries at the end of the slab (the capacity too) and rebuilds
    /// the free list lowest index first. The next try waits until the timers halve again
    /// (or are all gone), so a live entry at the end that keeps the slab from shrinking
    /// does not make every free pay for a scan.
    #[cold]
    #[inline(never)]
    fn trim(&mut self) {
        let keep = self
            .entries
            .iter()
            .rposition(|e| e.level != FREE)
            .map_or(0, |i| i + 1);
        for e in &self.entries[keep..] {
            // A key of a given-back index holds an older generation than its entry's now.
            self.fresh_generation = self.fresh_generation.max(e.generation);
        }
        self.entries.truncate(keep);
        self.entries.shrink_to(keep.max(TRIM_FROM / 4));
        self.free = NIL;
        for i in (0..keep).rev() {
            if self.entries[i].level == FREE {
                self.entries[i].next = self.free;
                self.free = i as u32;
            }
        }
        self.trim_below = if self.len < trim_threshold(keep) {
            // Held at its size by a live entry near its end.
            (self.len / 2).max(1)
        } else {
            trim_threshold(keep)
        };
    }

    fn level_for(&self, deadline: u64) -> usize {
        let masked = (self.elapsed ^ deadline) | (SLOTS as u64 - 1);
        let significant = 63 - masked.leading_zeros() as usize;
        significant / SLOT_BITS as usize
    }

    /// Appends the entry to the list its deadline belongs in.
    fn link(&mut self, index: u32) {
        let deadline = self.entries[index as usize].deadline;
        let level = self.level_for(deadline);
        let tail = if level >= LEVELS {
            let old = std::mem::replace(&mut self.overflow_tail, index);
            if old == NIL {
                self.overflow = index;
            }
            self.overflow_floor = self.overflow_floor.min(deadline);
            self.entries[index as usize].level = OVERFLOW;
            old
        } else {
            let slot = ((deadline >> (SLOT_BITS as usize * level)) & (SLOTS as u64 - 1)) as usize;
            let lvl = &mut self.levels[level];
            let old = std::mem::replace(&mut lvl.tails[slot], index);
            if old == NIL {
                lvl.heads[slot] = index;
            }
            lvl.occupied |= 1 << slot;
            let e = &mut self.entries[index as usize];
            e.level = level as u8;
            e.slot = slot as u8;
            old
        };
        let e = &mut self.entries[index as usize];
        e.prev = tail;
        e.next = NIL;
        if tail != NIL {
            self.entries[tail as usize].next = index;
        }
    }

    fn unlink(&mut self, index: u32) {
        let (prev, next, level, slot) = {
            let e = &self.entries[index as usize];
            (e.prev, e.next, e.level, e.slot as usize)
        };
        if prev != NIL {
            self.entries[prev as usize].next = next;
        } else if level == OVERFLOW {
            self.overflow = next;
            if next == NIL {
                self.overflow_floor = u64::MAX;
            }
        } else {
            let lvl = &mut self.levels[level as usize];
            lvl.heads[slot] = next;
            if next == NIL {
                lvl.occupied &= !(1 << slot);
            }
        }
        if next != NIL {
            self.entries[next as usize].prev = prev;
        } else if level == OVERFLOW {
            self.overflow_tail = prev;
        } else {
            self.levels[level as usize].tails[slot] = prev;
        }
    }

    /// The start tick of the earliest occupied slot, with its level and slot.
    fn next_expiration(&self) -> Option<(usize, usize, u64)> {
        for (level, lvl) in self.levels.iter().enumerate() {
            if lvl.occupied == 0 {
                continue;
            }
            let shift = SLOT_BITS as usize * level;
            let slot_range = 1u64 << shift;
            let level_range = slot_range << SLOT_BITS;
            let now_slot = ((self.elapsed >> shift) & (SLOTS as u64 - 1)) as u32;
            let zeros = lvl.occupied.rotate_right(now_slot).trailing_zeros();
            let slot = ((zeros + now_slot) % SLOTS as u32) as u64;
            let level_start = self.elapsed & !(level_range - 1);
            let mut start = level_start + slot * slot_range;
            if slot < u64::from(now_slot) {
                start += level_range;
            }
            return Some((level, slot as usize, start));
        }
        None
    }

    /// The earliest tick an entry may fire at (a lower bound for coarse levels); `None` if
    /// only never-firing entries are left.
    fn next_tick(&self) -> Option<u64> {
        let tick = match self.next_expiration() {
            Some((_, _, start)) => start.max(self.elapsed),
            // A lower bound: waking early only cascades the list and sleeps again.
            None => (self.overflow != NIL).then_some(self.overflow_floor)?,
        };
        (tick != NEVER_TICK).then_some(tick)
    }

    /// How long from `now` the shard may sleep: `None` without timers, zero if one is due.
    pub(crate) fn next_timeout(&self, now: Instant) -> Option<Duration> {
        if self.len == 0 {
            return None;
        }
        let tick = self.next_tick()?;
        Some(self.tick_instant(tick).saturating_duration_since(now))
    }

    /// True if no timer is registered.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Fires every entry due by `now` (the runtime clock's time): their wakers go into
    /// `wakers`.
    pub(crate) fn fire(&mut self, now: Instant, wakers: &mut Vec<Waker>, counters: &ShardCounters) {
        if self.len == 0 {
            return;
        }
        let now = self.now_tick(now);
        self.advance(now, wakers, counters);
    }

    /// Advances the wheel to tick `now`, collecting the wakers of due entries in deadline
    /// order (entries of a coarse slot are first moved down to finer levels, never fired
    /// straight from it, so that a long jump still fires them earliest first).
    pub(crate) fn advance(&mut self, now: u64, wakers: &mut Vec<Waker>, counters: &ShardCounters) {
        // Below the overflow list's empty mark (and a never-firing deadline's tick), so
        // that the loop below ends.
        let now = now.min(LAST_TICK);
        loop {
            // Never jump past a deadline waiting in the overflow list. An entry waits there
            // while its deadline lies in a later span of 2^42 ticks than the wheel's
            // position; stop at the start of that span, so the cascade links it into the
            // levels (where it fires on time, in order with the rest) instead of finding
            // it already overdue, which would put it in a slot up to a level's span late.
            // The floor is a lower bound, so this may stop short of a span no entry waits
            // for (its entry was removed); the cascade then makes the floor exact, and the
            // next round goes on.
            let floor = self.overflow_floor;
            let target = if floor <= now {
                (floor & !((1 << RANGE_BITS) - 1)).max(self.elapsed)
            } else {
                now
            };
            self.advance_levels(target, wakers, counters);
            if target == now && floor > now {
                return;
            }
            self.cascade_overflow();
        }
    }

    /// Advances the levels to tick `now` (not beyond an overflow deadline: the caller
    /// ensures that).
    fn advance_levels(&mut self, now: u64, wakers: &mut Vec<Waker>, counters: &ShardCounters) {
        while let Some((level, slot, start)) = self.next_expiration() {
            if start > now {
                break;
            }
            self.elapsed = self.elapsed.max(start);
            let mut i = self.levels[level].heads[slot];
            self.levels[level].heads[slot] = NIL;
            self.levels[level].tails[slot] = NIL;
            self.levels[level].occupied &= !(1 << slot);
            while i != NIL {
                let next = self.entries[i as usize].next;
                self.entries[i as usize].prev = NIL;
                if level == 0 {
                    // A level-0 slot is one tick: every entry in it is due now.
                    self.fire_entry(i, wakers, counters);
                } else {
                    self.link(i);
                }
                i = next;
            }
        }
        self.elapsed = self.elapsed.max(now);
    }

    fn fire_entry(&mut self, index: u32, wakers: &mut Vec<Waker>, counters: &ShardCounters) {
        // Already unlinked from its slot by the caller; free it.
        let e = &mut self.entries[index as usize];
        e.level = FREE;
        e.generation = e.generation.wrapping_add(1);
        if let Some(w) = e.waker.take() {
            wakers.push(w);
        }
        e.next = self.free;
        self.free = index;
        self.len -= 1;
        counters.timers_active.set(self.len as u64);
        counters.timers_fired.incr();
        if self.len < self.trim_below {
            self.trim();
        }
    }

    /// Re-links overflow entries that came within the wheel's range, and makes the floor
    /// the exact minimum of those still waiting.
    fn cascade_overflow(&mut self) {
        let mut i = std::mem::replace(&mut self.overflow, NIL);
        self.overflow_tail = NIL;
        self.overflow_floor = u64::MAX;
        while i != NIL {
            let next = self.entries[i as usize].next;
            self.entries[i as usize].prev = NIL;
            self.link(i);
            i = next;
        }
    }

    /// Removes every entry (shutdown) and returns their wakers, for the caller to drop once
    /// the wheel is no longer borrowed (dropping a waker runs user code). Keys stay
    /// recognisably stale.
    #[must_use = "drop the wakers after releasing the wheel"]
    pub(crate) fn clear(&mut self, counters: &ShardCounters) -> Vec<Waker> {
        let mut wakers = Vec::new();
        // No trim while walking the slab by index.
        self.trim_below = 0;
        for index in 0..self.entries.len() as u32 {
            if self.entries[index as usize].level != FREE {
                wakers.extend(self.take(index, counters));
            }
        }
        wakers
    }
}

/// The timer count below which a slab of `entries` entries is worth trimming (0: never).
fn trim_threshold(entries: usize) -> usize {
    if entries >= TRIM_FROM {
        entries / 4
    } else {
        0
    }
}

#[cfg(test)]
#[path = "wheel_tests.rs"]
mod tests;
