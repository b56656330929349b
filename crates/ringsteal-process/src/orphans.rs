//! Reaping children whose [`Child`](crate::Child) was dropped before they were waited for, so
//! that none is left a zombie, without a thread per child and without a descriptor per child.
//!
//! A dropped child that has already exited is reaped on the spot. One still running goes to
//! the orphan reaper: one process-wide thread, started on the first orphan, that reaps each
//! child as it exits and ends once it has none left. It works whatever the runtimes do
//! (shard 0 runs only inside `block_on`, and a runtime may shut down before its children
//! exit), which a wait left on a ring would not (ADR-0012).
//!
//! The first [`WATCHED_MAX`] orphans keep their pidfds in the thread's `epoll` set: they cost
//! no CPU while they run. Orphans beyond those are *swept*: their pidfds are closed (a
//! program that starts thousands of long-running children and drops them, as tokio allows,
//! must not run out of descriptors) and the thread polls their pids with
//! `waitpid(WNOHANG)`, every 10 ms at first, backing off to once a second. A pid is safe to
//! poll because it stays ours until we reap it (ADR-0012's reasoning for `pidfd_open`); where
//! the kernel reaps children itself (`SIGCHLD` ignored) an orphan is not swept at all.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use ringsteal_rt::op::{self, SharedFd};

use crate::wait::PendingWait;

/// At most this many orphans keep their pidfd (watched in `epoll`); the rest are swept.
#[doc(hidden)]
pub const WATCHED_MAX: usize = 32;

/// The first pause between sweeps, after a swept orphan arrives or one is reaped.
const SWEEP_FIRST: Duration = Duration::from_millis(10);
/// The longest pause between sweeps: how long a swept orphan may stay a zombie.
const SWEEP_MAX: Duration = Duration::from_secs(1);

/// Makes sure the child `pidfd` names is reaped once it exits. `pending` (the wait a dropped
/// `wait()` left in flight) is cancelled; it never reaps, so the child is still there to reap.
pub(crate) fn detach(pid: u32, pidfd: SharedFd, pending: Option<PendingWait>) {
    drop(pending);
    if still_running(&pidfd) {
        adopt(pid, pidfd);
    }
}

/// Reaps the child if it has exited; true if it is still running. A child that is already
/// reaped (`ECHILD`) or whose state cannot be read is not running for our purposes.
fn still_running(pidfd: &SharedFd) -> bool {
    matches!(op::try_reap_pidfd(pidfd), Ok(None))
}

/// Reaps the child `pid` if it has exited; true if it is still running (as above).
fn pid_still_running(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    let mut status = 0;
    loop {
        // SAFETY: reaps (or looks at) our own child; `status` is a valid int to write.
        match unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } {
            0 => return true,
            -1 if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {}
            _ => return false,
        }
    }
}

/// The orphans and whether the thread runs.
struct Orphans {
    /// Watched orphans (pidfd and pid), by pidfd number: their pidfds are in the epoll set.
    watched: HashMap<RawFd, (SharedFd, u32)>,
    /// Swept orphans' pids.
    swept: Vec<u32>,
    running: bool,
}

static ORPHANS: OnceLock<Mutex<Orphans>> = OnceLock::new();

/// What the thread waits on: an epoll set of the watched pidfds, with a doorbell (an eventfd)
/// in it, rung when a swept orphan arrives, so that a thread waiting with no timeout starts
/// to sweep. Created once (tried again at the next orphan if creating it failed, say with the
/// descriptors used up), never closed.
struct Waiter {
    epoll: OwnedFd,
    bell: OwnedFd,
}

static WAITER: OnceLock<Waiter> = OnceLock::new();

/// The doorbell's key in the epoll set (no descriptor has it).
const BELL: u64 = u64::MAX;

fn orphans() -> std::sync::MutexGuard<'static, Orphans> {
    ORPHANS
        .get_or_init(|| {
            Mutex::new(Orphans {
                watched: HashMap::new(),
                swept: Vec::new(),
                running: false,
            })
        })
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

fn waiter() -> Option<&'static Waiter> {
    if let Some(w) = WAITER.get() {
        return Some(w);
    }
    // SAFETY: epoll_create1 and eventfd return a new descriptor or -1; each new one is
    // owned at once.
    let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if epoll < 0 {
        return None; // Not remembered: the next orphan tries again.
    }
    // SAFETY: as above.
    let epoll = unsafe { OwnedFd::from_raw_fd(epoll) };
    // SAFETY: as above.
    let bell = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if bell < 0 {
        return None;
    }
    // SAFETY: as above.
    let bell = unsafe { OwnedFd::from_raw_fd(bell) };
    let mut ev = libc::epoll_event {
        events: libc::EPOLLIN as u32,
        u64: BELL,
    };
    // SAFETY: registers an open eventfd in an open epoll set (both owned here).
    if unsafe {
        libc::epoll_ctl(
            epoll.as_raw_fd(),
            libc::EPOLL_CTL_ADD,
            bell.as_raw_fd(),
            &mut ev,
        )
    } != 0
    {
        return None;
    }
    // Another thread may have set one meanwhile: then ours is closed and theirs used.
    let _ = WAITER.set(Waiter { epoll, bell });
    WAITER.get()
}

/// Hands a running child to the reaper thread (starting it if needed): watched if there is
/// room, swept otherwise.
fn adopt(pid: u32, pidfd: SharedFd) {
    let waiter = waiter();
    let mut orphans = orphans();
    if orphans.watched.len() < WATCHED_MAX {
        if let Some(w) = waiter {
            let fd = pidfd.as_raw_fd();
            let mut ev = libc::epoll_event {
                events: libc::EPOLLIN as u32,
                u64: fd as u64,
            };
            // SAFETY: registers an open pidfd (held in the map until it is removed from the
            // set) in the open epoll set.
            if unsafe { libc::epoll_ctl(w.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) }
                == 0
            {
                orphans.watched.insert(fd, (pidfd, pid));
                start_thread(&mut orphans);
                return;
            }
        }
    }
    drop(pidfd); // the Child's copy goes too: the descriptor closes
    if crate::pidfd::children_reaped_by_kernel() {
        return; // the kernel reaps it, and its pid may be reused at any time
    }
    orphans.swept.push(pid);
    start_thread(&mut orphans);
    if let Some(w) = waiter {
        ring(w);
    }
}

fn start_thread(orphans: &mut Orphans) {
    if !orphans.running {
        let started = std::thread::Builder::new()
            .name("ringsteal-orphan-reaper".into())
            .spawn(run);
        // If it could not start, the next orphan tries again.
        orphans.running = started.is_ok();
    }
}

/// Wakes the thread from a wait with no timeout.
fn ring(w: &Waiter) {
    let one = 1u64;
    // SAFETY: writes 8 bytes from a valid u64 to our eventfd. Non-blocking: a full counter
    // (never, in practice) means it is rung already.
    unsafe { libc::write(w.bell.as_raw_fd(), (&one as *const u64).cast(), 8) };
}

/// Whether the orphan reaper thread is running and waits for the child `pid`, watched or
/// swept (tests).
#[doc(hidden)]
pub fn orphan_reaper_waits_for(pid: u32) -> bool {
    let o = orphans();
    o.running && (o.watched.values().any(|&(_, p)| p == pid) || o.swept.contains(&pid))
}

/// How many orphans keep their pidfd open (tests).
#[doc(hidden)]
pub fn orphans_watched() -> usize {
    orphans().watched.len()
}

fn run() {
    // SAFETY: all-zero is a valid epoll_event.
    let mut events = [unsafe { std::mem::zeroed::<libc::epoll_event>() }; 64];
    let mut pause = SWEEP_FIRST;
    let mut next_sweep = Instant::now() + pause;
    loop {
        let sweeping = {
            let mut orphans = orphans();
            if orphans.watched.is_empty() && orphans.swept.is_empty() {
                orphans.running = false;
                return;
            }
            !orphans.swept.is_empty()
        };
        let until_sweep = next_sweep.saturating_duration_since(Instant::now());
        let mut ready = 0;
        match WAITER.get() {
            Some(w) => {
                // A watched orphan adopted meanwhile is in the set already: its pidfd wakes
                // this wait when the child exits (or at once, if it has); a swept one rings.
                let timeout = if sweeping {
                    i32::try_from(until_sweep.as_micros().div_ceil(1000)).unwrap_or(i32::MAX)
                } else {
                    -1
                };
                // SAFETY: `events` is a valid array of its length; the set is never closed.
                let n = unsafe {
                    libc::epoll_wait(
                        w.epoll.as_raw_fd(),
                        events.as_mut_ptr(),
                        events.len() as i32,
                        timeout,
                    )
                };
                ready = n.max(0) as usize; // -1: EINTR
            }
            // No epoll set: nothing is watched, so there are swept orphans.
            None => std::thread::sleep(until_sweep),
        }
        let mut orphans = orphans();
        for ev in &events[..ready] {
            if ev.u64 == BELL {
                // A new swept orphan: sweep soon (a short-lived child is reaped quickly).
                // Only ever sooner: orphans arriving faster than the pause must not keep
                // pushing the sweep back.
                pause = SWEEP_FIRST;
                next_sweep = next_sweep.min(Instant::now() + pause);
                let mut count = 0u64;
                if let Some(w) = WAITER.get() {
                    // SAFETY: reads 8 bytes into a valid u64 from our eventfd (resets it).
                    unsafe { libc::read(w.bell.as_raw_fd(), (&mut count as *mut u64).cast(), 8) };
                }
                continue;
            }
            let fd = ev.u64 as RawFd;
            let Some((pidfd, _)) = orphans.watched.get(&fd) else {
                continue;
            };
            if still_running(pidfd) {
                continue;
            }
            if let Some(w) = WAITER.get() {
                // SAFETY: removes an fd we registered and still hold open.
                unsafe {
                    libc::epoll_ctl(
                        w.epoll.as_raw_fd(),
                        libc::EPOLL_CTL_DEL,
                        fd,
                        std::ptr::null_mut(),
                    )
                };
            }
            orphans.watched.remove(&fd);
        }
        if !orphans.swept.is_empty() && Instant::now() >= next_sweep {
            // Swept without the lock held (a `Child` dropped meanwhile adopts at once); the
            // pids stay listed until they are known gone.
            let pids = orphans.swept.clone();
            drop(orphans);
            let mut gone: Vec<u32> = if crate::pidfd::children_reaped_by_kernel() {
                // SIGCHLD ignored since they were adopted: the kernel reaps them from now on,
                // but not a zombie that was one before; reaped once here (no child becomes
                // a zombie any more, so no pid can have been reused by one), then let go.
                for &pid in &pids {
                    pid_still_running(pid);
                }
                pids
            } else {
                pids.into_iter()
                    .filter(|&pid| !pid_still_running(pid))
                    .collect()
            };
            pause = if gone.is_empty() {
                (pause * 2).min(SWEEP_MAX)
            } else {
                SWEEP_FIRST
            };
            next_sweep = Instant::now() + pause;
            gone.sort_unstable();
            self::orphans()
                .swept
                .retain(|pid| gone.binary_search(pid).is_err());
        }
    }
}
