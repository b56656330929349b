//! Signal masks (for the threads a runtime starts): nothing of the runtime.
//!
//! A new thread inherits the signal mask of the thread that starts it. The blocking pool
//! starts its threads from whichever thread needs one first, usually a shard, and a shard's
//! mask is not the program's: `ringsteal-process` blocks `SIGPIPE` on a shard that writes to a
//! child's pipe (the kernel raises it on the submitting thread). So the pool's threads take
//! the mask of the thread that built the runtime ([`SignalMask::of_this_thread`], read once
//! at build) instead, and the user code they run sees signals as the program set them up.

/// A thread's signal mask, as read from it.
pub(crate) struct SignalMask(libc::sigset_t);

impl SignalMask {
    /// The calling thread's mask (the empty set if it cannot be read, which does not happen
    /// for a valid call).
    pub(crate) fn of_this_thread() -> Self {
        // SAFETY: all-zero is a valid sigset; sigemptyset initialises it, and pthread_sigmask
        // only writes the current mask into it (a null new set changes nothing).
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut set);
            Self(set)
        }
    }

    /// Makes this the calling thread's mask.
    pub(crate) fn apply_to_this_thread(&self) {
        // SAFETY: sets the calling thread's mask from an initialised set.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut()) };
    }
}
