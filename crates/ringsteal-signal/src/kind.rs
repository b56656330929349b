//! [`SignalKind`]: which signal to listen for.

use std::fmt;

/// A signal to listen for: the common ones by name, any other by number.
///
/// ```
/// use ringsteal_signal::SignalKind;
///
/// assert_eq!(SignalKind::terminate().as_raw_value(), libc::SIGTERM);
/// assert_eq!(SignalKind::from_raw(libc::SIGRTMIN() + 1).as_raw_value(), libc::SIGRTMIN() + 1);
/// assert_eq!(format!("{}", SignalKind::interrupt()), "SIGINT");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SignalKind(i32);

impl SignalKind {
    /// Any signal, by number (validated by [`signal`](crate::signal)).
    pub const fn from_raw(signum: i32) -> Self {
        Self(signum)
    }

    /// The signal's number.
    pub const fn as_raw_value(&self) -> i32 {
        self.0
    }

    /// `SIGINT`: interrupt from the terminal (Ctrl-C).
    pub const fn interrupt() -> Self {
        Self(libc::SIGINT)
    }

    /// `SIGTERM`: the polite request to stop (`kill`, systemd, Kubernetes).
    pub const fn terminate() -> Self {
        Self(libc::SIGTERM)
    }

    /// `SIGHUP`: the terminal went away; daemons use it to reload configuration.
    pub const fn hangup() -> Self {
        Self(libc::SIGHUP)
    }

    /// `SIGQUIT`: quit from the terminal (Ctrl-\).
    pub const fn quit() -> Self {
        Self(libc::SIGQUIT)
    }

    /// `SIGUSR1`.
    pub const fn user_defined1() -> Self {
        Self(libc::SIGUSR1)
    }

    /// `SIGUSR2`.
    pub const fn user_defined2() -> Self {
        Self(libc::SIGUSR2)
    }

    /// `SIGCHLD`: a child stopped or exited. (Waiting for children does not need it:
    /// `ringsteal-process` waits on pidfds.) Listening keeps what the previous action asked
    /// of the kernel: no signal for stops (`SA_NOCLDSTOP`), and children reaped by the
    /// kernel (`SA_NOCLDWAIT`, or `SIGCHLD` ignored).
    pub const fn child() -> Self {
        Self(libc::SIGCHLD)
    }

    /// `SIGPIPE`: a write to a pipe or socket nobody reads any more.
    pub const fn pipe() -> Self {
        Self(libc::SIGPIPE)
    }

    /// `SIGWINCH`: the terminal's window size changed.
    pub const fn window_change() -> Self {
        Self(libc::SIGWINCH)
    }

    /// `SIGALRM`: a timer set with `alarm(2)` or `setitimer(2)` expired.
    pub const fn alarm() -> Self {
        Self(libc::SIGALRM)
    }

    /// `SIGIO`: I/O is possible on a descriptor set up for signal-driven I/O (`O_ASYNC`), as
    /// tokio's `SignalKind::io`.
    pub const fn io() -> Self {
        Self(libc::SIGIO)
    }

    /// The signal's name (`"SIGINT"`), if it is one of the named kinds.
    pub fn name(&self) -> Option<&'static str> {
        Some(match self.0 {
            libc::SIGINT => "SIGINT",
            libc::SIGTERM => "SIGTERM",
            libc::SIGHUP => "SIGHUP",
            libc::SIGQUIT => "SIGQUIT",
            libc::SIGUSR1 => "SIGUSR1",
            libc::SIGUSR2 => "SIGUSR2",
            libc::SIGCHLD => "SIGCHLD",
            libc::SIGPIPE => "SIGPIPE",
            libc::SIGWINCH => "SIGWINCH",
            libc::SIGALRM => "SIGALRM",
            libc::SIGIO => "SIGIO",
            _ => return None,
        })
    }
}

impl From<i32> for SignalKind {
    fn from(signum: i32) -> Self {
        Self(signum)
    }
}

impl fmt::Display for SignalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "signal {}", self.0),
        }
    }
}
