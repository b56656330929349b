//! The process-wide signal handler and the state it may touch.
//!
//! Owns: per signal number, the delivery counter, the listener count (with the deliveries a
//! dropped listener left unreported) and the action that was in place before ringsteal's
//! handler (`SIGNALS`); installing the handler; and the handler
//! itself. The handler is async-signal-safe by construction: it only loads and updates
//! atomics, calls `write(2)` on eventfds not closed while it may use them ([`crate::slots`]),
//! and, for a signal nobody listens to, the async-signal-safe calls that carry out the previous action
//! (`sigaction`, `pthread_sigmask`, `raise`). No allocation, no lock, `errno` preserved.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering::SeqCst};

use crate::slots;

/// Signal numbers are 1..=64 on Linux.
pub(crate) const MAX_SIGNAL: i32 = 64;

/// [`SignalState::unreported_after`] when no dropped listener left deliveries unreported.
pub(crate) const NONE_UNREPORTED: u64 = u64::MAX;

/// What the handler knows about one signal number.
pub(crate) struct SignalState {
    /// Deliveries since the process started (counted from the first registration).
    pub(crate) deliveries: AtomicU64,
    /// Live [`Signal`](crate::Signal)s for this number.
    pub(crate) listeners: AtomicUsize,
    /// The delivery count a dropped listener had last reported, if deliveries came after it
    /// that it never reported ([`NONE_UNREPORTED`] if none did): while no listener has
    /// reported past it ([`reported`](Self::reported)), a new listener starts from there,
    /// so it reports them. Read and written under the registry lock only; the handler never
    /// touches it.
    pub(crate) unreported_after: AtomicU64,
    /// The delivery count when the last such listener was dropped: the handed-down
    /// deliveries end there. Those after it came while other listeners lived, and are
    /// theirs to report, not a new listener's. Under the registry lock too.
    pub(crate) unreported_until: AtomicU64,
    /// The highest delivery count a listener has reported (`Signal::recv` completing).
    pub(crate) reported: AtomicU64,
    /// Our handler is installed (set and cleared under the registry lock).
    pub(crate) installed: AtomicBool,
    /// The previous action's `sa_sigaction` (`SIG_DFL`, `SIG_IGN` or a function).
    prev_action: AtomicUsize,
    /// The previous action's `sa_flags` (`SA_SIGINFO` says how to call a function).
    prev_flags: AtomicI32,
    /// Flags of the previous action that ours keeps (see [`kept_flags`]).
    kept_flags: AtomicI32,
}

impl SignalState {
    const fn new() -> Self {
        Self {
            deliveries: AtomicU64::new(0),
            listeners: AtomicUsize::new(0),
            unreported_after: AtomicU64::new(NONE_UNREPORTED),
            unreported_until: AtomicU64::new(0),
            reported: AtomicU64::new(0),
            installed: AtomicBool::new(false),
            prev_action: AtomicUsize::new(libc::SIG_DFL),
            prev_flags: AtomicI32::new(0),
            kept_flags: AtomicI32::new(0),
        }
    }
}

/// Indexed by signal number (0 unused).
pub(crate) static SIGNALS: [SignalState; MAX_SIGNAL as usize + 1] =
    [const { SignalState::new() }; MAX_SIGNAL as usize + 1];

/// The state of `signum`, which the caller has checked is in `1..=MAX_SIGNAL`.
pub(crate) fn state(signum: i32) -> &'static SignalState {
    &SIGNALS[signum as usize]
}

/// Installs the handler for `signum` if it is not yet, remembering the previous action.
/// Called under the registry lock.
pub(crate) fn install(signum: i32) -> io::Result<()> {
    let st = state(signum);
    if st.installed.load(SeqCst) {
        return Ok(());
    }
    // SAFETY: all-zero is a valid sigaction to be filled in.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: reads the current action into `old`.
    if unsafe { libc::sigaction(signum, std::ptr::null(), &mut old) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if old.sa_sigaction == handler as *const () as usize {
        // Ours already (put back by a stopped process's default action as it continued):
        // what it replaced is recorded, and recording ours would make it call itself.
        st.installed.store(true, SeqCst);
        return Ok(());
    }
    previous_actions()[signum as usize] = Some(old);
    // Published before the handler can run for this signal.
    st.prev_action.store(old.sa_sigaction, SeqCst);
    st.prev_flags.store(old.sa_flags, SeqCst);
    st.kept_flags.store(kept_flags(signum, &old), SeqCst);
    let ours = our_action(st);
    // SAFETY: installs a valid action whose handler is async-signal-safe.
    if unsafe { libc::sigaction(signum, &ours, std::ptr::null_mut()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    st.installed.store(true, SeqCst);
    Ok(())
}

/// The last listener of `signum` is gone: puts back the action that was in place before ours,
/// exactly as it was, if ours is still the one installed. Our handler would imitate it, but
/// not for everyone: a handler installed later by another library (signal-hook, under
/// tokio's `signal`) calls the action it found, which would then be ours carrying out the
/// default action (terminating) behind its back; and `exec` resets a handler to the default
/// action where it keeps `SIG_IGN` (`nohup`). Only our own handler is replaced: if something
/// else installed an action since ours, it stays (it calls ours, which imitates the previous
/// action), and so does our record that ours is installed (so no later registration replaces
/// theirs either). Called under the registry lock; the next registration installs the
/// handler again.
pub(crate) fn uninstall_if_ours(signum: i32) {
    let st = state(signum);
    if !st.installed.load(SeqCst) {
        return;
    }
    let Some(prev) = previous_actions()[signum as usize] else {
        return;
    };
    // SAFETY: all-zero is a valid sigaction to be filled in.
    let mut current: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: reads the current action into `current`.
    if unsafe { libc::sigaction(signum, std::ptr::null(), &mut current) } != 0
        || current.sa_sigaction != handler as *const () as usize
    {
        return;
    }
    // SAFETY: installs the action the kernel gave us for this signal, unchanged.
    if unsafe { libc::sigaction(signum, &prev, std::ptr::null_mut()) } == 0 {
        st.installed.store(false, SeqCst);
    }
}

/// The whole action in place before ours, per signal number (the handler reads only the
/// atomics in [`SignalState`]; this also keeps the mask, for [`uninstall_if_ours`]). Read and
/// written under the registry lock.
fn previous_actions(
) -> std::sync::MutexGuard<'static, [Option<libc::sigaction>; MAX_SIGNAL as usize + 1]> {
    static PREVIOUS: std::sync::Mutex<[Option<libc::sigaction>; MAX_SIGNAL as usize + 1]> =
        std::sync::Mutex::new([None; MAX_SIGNAL as usize + 1]);
    PREVIOUS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The flags of the action `old` that ours must keep, because they change what the kernel
/// does rather than how the handler is called: for `SIGCHLD`, `SA_NOCLDSTOP` (no signal when
/// a child stops) and `SA_NOCLDWAIT` (children are reaped by the kernel, never left as
/// zombies). `SIG_IGN` for `SIGCHLD` means the latter too, and replacing it by a handler
/// would otherwise turn the kernel's reaping off: every child the program does not wait for
/// (it counted on not having to) would stay a zombie. With `SA_NOCLDWAIT`, Linux still sends
/// `SIGCHLD`, so the listener hears every exit.
fn kept_flags(signum: i32, old: &libc::sigaction) -> i32 {
    if signum != libc::SIGCHLD {
        return 0;
    }
    let mut kept = old.sa_flags & (libc::SA_NOCLDSTOP | libc::SA_NOCLDWAIT);
    if old.sa_sigaction == libc::SIG_IGN {
        kept |= libc::SA_NOCLDWAIT;
    }
    kept
}

/// Our action: the handler, with `siginfo` (to pass on to a previous `SA_SIGINFO` handler),
/// restarting interrupted system calls, no extra signals blocked while it runs, and the
/// flags of the previous action that [`kept_flags`] says to keep.
fn our_action(st: &SignalState) -> libc::sigaction {
    // SAFETY: all-zero is a valid sigaction; sigemptyset initialises the mask. Both are
    // async-signal-safe (this also runs inside the handler).
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = handler as *const () as usize;
        act.sa_flags =
            libc::SA_SIGINFO | libc::SA_RESTART | libc::SA_ONSTACK | st.kept_flags.load(SeqCst);
        libc::sigemptyset(&mut act.sa_mask);
        act
    }
}

/// The handler. Runs on whatever thread the kernel picked, interrupting it anywhere.
extern "C" fn handler(signum: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: errno is thread-local; saved and restored so the interrupted code never sees
    // a value this handler left.
    let errno = unsafe { *libc::__errno_location() };
    if (1..=MAX_SIGNAL).contains(&signum) {
        let st = state(signum);
        // Decided once, before the count moves: a listener that sees the new count may return
        // and be dropped while this handler still runs, and must not make it take the default
        // action (terminate) for a signal it has just received.
        let listened = st.listeners.load(SeqCst) > 0;
        st.deliveries.fetch_add(1, SeqCst);
        if listened {
            slots::notify(signum);
        }
        previous_action(signum, st, listened, info, ctx);
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

/// Does what the action in place before ours would have: calls a handler function always
/// (ringsteal adds a listener, it does not take a handler away); with nobody listening, also
/// `SIG_DFL`'s default action (so registering once does not make the process deaf to a
/// signal for good). `SIG_IGN`: nothing.
fn previous_action(
    signum: i32,
    st: &SignalState,
    listened: bool,
    info: *mut libc::siginfo_t,
    ctx: *mut libc::c_void,
) {
    let prev = st.prev_action.load(SeqCst);
    if prev == libc::SIG_IGN {
        return;
    }
    if prev != libc::SIG_DFL {
        if st.prev_flags.load(SeqCst) & libc::SA_SIGINFO != 0 {
            // SAFETY: `prev` was installed as an SA_SIGINFO handler with this signature.
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                unsafe { std::mem::transmute(prev) };
            f(signum, info, ctx);
        } else {
            // SAFETY: `prev` was installed as a plain handler with this signature.
            let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(prev) };
            f(signum);
        }
        return;
    }
    if listened || default_is_ignore(signum) {
        return;
    }
    default_action(signum);
}

/// Signals whose default action is to do nothing.
fn default_is_ignore(signum: i32) -> bool {
    matches!(
        signum,
        libc::SIGCHLD | libc::SIGCONT | libc::SIGURG | libc::SIGWINCH
    )
}

/// Carries out the default action of `signum` from inside its handler: puts `SIG_DFL` back,
/// unblocks the signal for this thread and raises it again. Terminating (or core-dumping)
/// signals end the process here; stopping ones stop it, and once it is continued our handler
/// is put back.
fn default_action(signum: i32) {
    // SAFETY: sigaction, sigemptyset, sigaddset, pthread_sigmask and raise are
    // async-signal-safe; every struct is a local, initialised before use.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut dfl.sa_mask);
        let mut displaced: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(signum, &dfl, &mut displaced) != 0 {
            return;
        }
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signum);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(signum);
        // Still here: the signal stopped the process, which has been continued. (The mask is
        // restored when the handler returns.) What was installed goes back: ours, or a
        // handler another library put over ours (which called us), unless something set
        // an action meanwhile.
        let mut now: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(signum, std::ptr::null(), &mut now) == 0
            && now.sa_sigaction == libc::SIG_DFL
        {
            libc::sigaction(signum, &displaced, std::ptr::null_mut());
        }
    }
}
