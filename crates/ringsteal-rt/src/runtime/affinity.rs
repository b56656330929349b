//! CPU pinning for `Builder::pin_shards`.

/// Pins the calling thread to the `index`-th CPU (modulo the CPUs this process may use).
/// Failure is not fatal: the shard runs unpinned.
pub(crate) fn pin_current_thread(index: usize) {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut allowed: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: sched_getaffinity writes into the owned set of the given size.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut allowed) }
        != 0
    {
        return;
    }
    let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        // SAFETY: CPU_ISSET reads the owned set within its size.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &allowed) })
        .collect();
    if cpus.is_empty() {
        return;
    }
    // SAFETY: as above.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU_SET writes a bit inside the owned set; the index comes from the allowed set.
    unsafe { libc::CPU_SET(cpus[index % cpus.len()], &mut set) };
    // SAFETY: sched_setaffinity reads the owned set.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
}
