//! Reaping children whose [`Child`](crate::Child) was dropped before they were waited for, so
//! that none is left a zombie, without a thread per child.
//!
//! A dropped child that has already exited is reaped on the spot. One still running goes to
//! the orphan reaper: one process-wide thread, started on the first orphan, that waits in
//! `epoll_wait` on every orphan's pidfd, reaps each child as it exits and ends once it has
//! none left. It works whatever the runtimes do (shard 0 runs only inside `block_on`, and a
//! runtime may shut down before its children exit), which a wait left on a ring would not
//! (ADR-0012). It costs no CPU while it waits.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Mutex, OnceLock};

use ringsteal_rt::op::{self, SharedFd};

use crate::wait::PendingWait;

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

/// The orphans (pidfd and pid), by pidfd number, and whether the thread runs.
struct Orphans {
    children: HashMap<RawFd, (SharedFd, u32)>,
    running: bool,
}

static ORPHANS: OnceLock<Mutex<Orphans>> = OnceLock::new();
/// The epoll instance the thread waits on. Created once (tried again at the next orphan if
/// creating it failed, say with the descriptors used up), never closed.
static EPOLL: OnceLock<OwnedFd> = OnceLock::new();

fn orphans() -> std::sync::MutexGuard<'static, Orphans> {
    ORPHANS
        .get_or_init(|| {
            Mutex::new(Orphans {
                children: HashMap::new(),
                running: false,
            })
        })
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

fn epoll() -> Option<RawFd> {
    if let Some(ep) = EPOLL.get() {
        return Some(ep.as_raw_fd());
    }
    // SAFETY: epoll_create1 returns a new descriptor or -1.
    let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if fd < 0 {
        return None; // Not remembered: the next orphan tries again.
    }
    // SAFETY: the descriptor is new and ours.
    let ours = unsafe { OwnedFd::from_raw_fd(fd) };
    // Another thread may have set one meanwhile: then ours is closed and theirs used.
    let _ = EPOLL.set(ours);
    EPOLL.get().map(AsRawFd::as_raw_fd)
}

/// Hands a running child to the reaper thread (starting it if needed).
fn adopt(pid: u32, pidfd: SharedFd) {
    let Some(ep) = epoll() else {
        // No epoll (out of descriptors): a thread of its own waits for this one.
        return reap_on_its_own_thread(pidfd);
    };
    let mut orphans = orphans();
    let fd = pidfd.as_raw_fd();
    let mut ev = libc::epoll_event {
        events: libc::EPOLLIN as u32,
        u64: fd as u64,
    };
    // SAFETY: registers an open pidfd (held in the map until it is removed from the set).
    if unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) } != 0 {
        drop(orphans);
        return reap_on_its_own_thread(pidfd);
    }
    orphans.children.insert(fd, (pidfd, pid));
    if !orphans.running {
        let started = std::thread::Builder::new()
            .name("ringsteal-orphan-reaper".into())
            .spawn(move || run(ep));
        orphans.running = started.is_ok();
    }
}

/// Reaps one orphan on a thread of its own, blocked in `waitid` on its pidfd: for when the
/// reaper's epoll set cannot take it (no descriptor left to create the set, or the kernel
/// refused to add it). Needs no new descriptor. If no thread can be started either, the
/// child stays a zombie until the process ends: nothing else is left to try.
fn reap_on_its_own_thread(pidfd: SharedFd) {
    let _ = std::thread::Builder::new()
        .name("ringsteal-orphan".into())
        .spawn(move || loop {
            // SAFETY: an all-zero siginfo_t is valid; waitid writes it.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: waits for (and reaps) our own child through its open pidfd.
            let r = unsafe {
                libc::waitid(
                    libc::P_PIDFD,
                    pidfd.as_raw_fd() as libc::id_t,
                    &mut info,
                    libc::WEXITED,
                )
            };
            if r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return;
            }
        });
}

/// Whether the orphan reaper thread is running and waits for the child `pid` (tests).
#[doc(hidden)]
pub fn orphan_reaper_waits_for(pid: u32) -> bool {
    let o = orphans();
    o.running && o.children.values().any(|&(_, p)| p == pid)
}

fn run(ep: RawFd) {
    // SAFETY: all-zero is a valid epoll_event.
    let mut events = [unsafe { std::mem::zeroed::<libc::epoll_event>() }; 64];
    loop {
        {
            let mut orphans = orphans();
            if orphans.children.is_empty() {
                orphans.running = false;
                return;
            }
        }
        // An orphan adopted meanwhile is in the set already: its pidfd wakes this wait when
        // the child exits (or at once, if it has).
        // SAFETY: `events` is a valid array of its length; `ep` is never closed.
        let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, -1) };
        if n <= 0 {
            continue; // EINTR
        }
        let mut orphans = orphans();
        for ev in &events[..n as usize] {
            let fd = ev.u64 as RawFd;
            let Some((pidfd, _)) = orphans.children.get(&fd) else {
                continue;
            };
            if still_running(pidfd) {
                continue;
            }
            // SAFETY: removes an fd we registered and still hold open.
            unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_DEL, fd, std::ptr::null_mut()) };
            orphans.children.remove(&fd);
        }
    }
}
