//! CPU pinning (for `Builder::pin_shards`): thread affinity masks, nothing of the runtime.
//!
//! The CPUs a runtime may use are read once, when it is built, from the building thread's
//! mask; shard `i` is pinned to the `i`-th of them (modulo their count). Shard 0 is the thread
//! that calls `block_on`: it is pinned for the duration of the call and gets its own mask back
//! afterwards ([`PinGuard`]), so a later runtime, or threads spawned later, see the mask the
//! user set. The blocking pool's threads take the building thread's mask ([`CpuMask`]).

use std::io;

/// The CPUs in the calling thread's affinity mask.
pub(crate) fn allowed_cpus() -> Vec<usize> {
    match current_mask() {
        Ok(mask) => (0..libc::CPU_SETSIZE as usize)
            // SAFETY: CPU_ISSET reads the owned set within its size.
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &mask) })
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn current_mask() -> io::Result<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut mask: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: sched_getaffinity writes into the owned set of the given size.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut mask) } != 0
    {
        return Err(io::Error::last_os_error());
    }
    Ok(mask)
}

fn set_mask(mask: &libc::cpu_set_t) {
    // SAFETY: sched_setaffinity reads the owned set. Failure leaves the thread unpinned,
    // which is not fatal.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), mask) };
}

/// Pins the calling thread to CPU `cpus[index % cpus.len()]` (no-op without CPUs).
pub(crate) fn pin_current_thread(cpus: &[usize], index: usize) {
    if cpus.is_empty() {
        return;
    }
    // SAFETY: as above.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU_SET writes a bit inside the owned set; the CPU comes from an allowed mask.
    unsafe { libc::CPU_SET(cpus[index % cpus.len()], &mut set) };
    set_mask(&set);
}

/// A thread's CPU affinity mask, as read from it: the blocking pool's threads take the mask
/// of the thread that built the runtime, not the one-CPU mask of the pinned shard that
/// happened to start them (a new thread inherits its starter's mask).
pub(crate) struct CpuMask(Option<libc::cpu_set_t>);

impl CpuMask {
    /// The calling thread's mask (none if it cannot be read: then nothing is applied).
    pub(crate) fn of_this_thread() -> Self {
        Self(current_mask().ok())
    }

    /// Makes this the calling thread's mask.
    pub(crate) fn apply_to_this_thread(&self) {
        if let Some(mask) = &self.0 {
            set_mask(mask);
        }
    }
}

/// Pins the calling thread while alive, then restores the mask it had.
pub(crate) struct PinGuard {
    saved: Option<libc::cpu_set_t>,
}

impl PinGuard {
    /// Pins to `cpus[index % len]`; does nothing (and restores nothing) without CPUs.
    pub(crate) fn pin(cpus: &[usize], index: usize) -> Self {
        let saved = if cpus.is_empty() {
            None
        } else {
            current_mask().ok()
        };
        if saved.is_some() {
            pin_current_thread(cpus, index);
        }
        Self { saved }
    }
}

impl Drop for PinGuard {
    fn drop(&mut self) {
        if let Some(mask) = &self.saved {
            set_mask(mask);
        }
    }
}
