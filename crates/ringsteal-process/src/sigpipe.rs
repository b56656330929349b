//! Keeping `SIGPIPE` from killing the process when a write to a child's stdin finds the child
//! gone. The kernel sends `SIGPIPE` to the thread that performs the write, and a write through
//! the ring is performed by the shard thread that submitted it (inline, or in task work on
//! it; kernel worker threads block every signal). Rust programs ignore `SIGPIPE`, but one that
//! restored the default action would die instead of seeing `BrokenPipe`.
//!
//! A program that ignores `SIGPIPE` (Rust's runtime sets that up at start, so nearly every
//! Rust program) has nothing to fear from it: there a write changes no mask at all, so
//! threads and children started from a shard (`std::process::Command` included) see the
//! program's own mask. The disposition is read at each write until the thread blocks.
//!
//! Otherwise a thread that submits a pipe write first blocks `SIGPIPE` for itself (once per thread);
//! the signal a failed write then raises stays pending on that thread and is discarded when
//! the `EPIPE` comes back. The disposition is never changed, and only that thread's mask is,
//! for the thread's life (the kernel may run the write at any return to user mode of a ring
//! without `DEFER_TASKRUN`). Threads started from that thread inherit the block, except the
//! runtime's blocking-pool threads, which take the mask of the thread that built the runtime
//! (ADR-0012). So would children (a spawned process inherits its spawning thread's mask, and
//! a shell pipeline in a child with `SIGPIPE` blocked never ends): `Command::spawn` from such
//! a thread, or from one that inherited its block, unblocks it in the child
//! ([`unblock_in_children`]). The cost: that hook makes std `fork` and `exec` instead of
//! using `posix_spawn`, slower for a large process. Unblocking around the spawn in the
//! spawning thread instead would let a pending `SIGPIPE` (or one raised by task work that
//! runs at the spawn's system calls) kill a program that restored the default action.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Some thread of the process blocked `SIGPIPE` here (threads it started inherit the block).
static EVER_BLOCKED: AtomicBool = AtomicBool::new(false);

thread_local! {
    static BLOCKED: Cell<bool> = const { Cell::new(false) };
}

fn sigpipe_set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise and fill a local sigset_t.
    unsafe {
        let mut set = std::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        set
    }
}

/// Whether the process ignores `SIGPIPE` (`SIG_IGN`, as Rust's runtime sets it at start): a
/// failed write then raises nothing that could kill it.
fn ignored() -> bool {
    // SAFETY: reads the disposition only (a null new action); `old` is all-zero, a valid
    // `sigaction` to be written by the call.
    unsafe {
        let mut old = std::mem::zeroed::<libc::sigaction>();
        libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Before a pipe write: blocks `SIGPIPE` for the calling thread unless the process ignores
/// it (one system call to read the disposition per write until the thread blocks; nothing
/// once it has).
pub(crate) fn block_on_this_thread() {
    BLOCKED.with(|b| {
        if !b.get() && !ignored() {
            let set = sigpipe_set();
            // SAFETY: adds SIGPIPE to this thread's mask; `set` is initialised.
            unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
            b.set(true);
            EVER_BLOCKED.store(true, Relaxed);
        }
    });
}

/// Whether this thread has `SIGPIPE` blocked because of ringsteal: it submitted a write to a
/// pipe, or it was started (directly or not) by a thread that had. The second is read from
/// the thread's real mask (one system call, only once some thread blocked the signal), since
/// the flag of the thread that blocked it is not inherited. A thread of a program that never
/// wrote to a child's stdin through ringsteal answers no without a system call, whatever its
/// mask. Once one has, the mask cannot tell ringsteal's block from one the program chose: a
/// thread that blocks `SIGPIPE` on purpose then also spawns children with it unblocked (std
/// would hand them its mask), which only a program that counts on its children starting
/// with `SIGPIPE` blocked would notice.
pub(crate) fn blocked_here() -> bool {
    if BLOCKED.with(Cell::get) {
        return true;
    }
    EVER_BLOCKED.load(Relaxed) && mask_blocks_sigpipe()
}

/// Whether this thread's mask blocks `SIGPIPE` (one system call).
fn mask_blocks_sigpipe() -> bool {
    // SAFETY: all-zero is a valid sigset_t to be filled in; reads this thread's mask only.
    let mut current = unsafe { std::mem::zeroed::<libc::sigset_t>() };
    // SAFETY: as above; a null new set changes nothing.
    let read =
        unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut current) } == 0;
    // SAFETY: `current` was filled in by pthread_sigmask.
    read && unsafe { libc::sigismember(&current, libc::SIGPIPE) } == 1
}

/// Makes `command`'s children start with `SIGPIPE` unblocked (a hook that runs in the child
/// between `fork` and `exec`). Add it once per command: hooks accumulate.
pub(crate) fn unblock_in_children(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let set = sigpipe_set();
    // SAFETY: the hook only calls pthread_sigmask (async-signal-safe) with a set built
    // before the fork; it allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(move || {
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            Ok(())
        });
    }
}

/// Discards a `SIGPIPE` pending on this thread (raised by a write that failed with `EPIPE`),
/// if this thread blocks it: because of ringsteal, or a block it inherited or set itself
/// (an ignored signal stays pending while blocked, and would be delivered if the program
/// later restored the default action and unblocked it).
pub(crate) fn discard_pending() {
    if !BLOCKED.with(Cell::get) && !mask_blocks_sigpipe() {
        return;
    }
    let set = sigpipe_set();
    let zero = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a non-blocking sigtimedwait for SIGPIPE, which this thread blocks; `set` and
    // `zero` are initialised, and a null siginfo is allowed.
    unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &zero) };
}
