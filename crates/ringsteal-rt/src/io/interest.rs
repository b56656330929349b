//! [`Interest`] and [`Ready`]: tokio's readiness sets, for the `ready` methods of sockets
//! (what to wait for, and what a one-shot `IORING_OP_POLL_ADD` reported).
//!
//! May not: wait for anything (the sockets' `ready` methods do).

use std::fmt;
use std::ops::{BitOr, BitOrAssign};

/// What a `ready` call waits for, as tokio's `Interest`: [`READABLE`](Self::READABLE),
/// [`WRITABLE`](Self::WRITABLE), or both (`Interest::READABLE | Interest::WRITABLE`).
///
/// ```
/// use ringsteal_rt::io::Interest;
///
/// let both = Interest::READABLE | Interest::WRITABLE;
/// assert!(both.is_readable() && both.is_writable());
/// assert!(!Interest::READABLE.is_writable());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Interest(u8);

const R: u8 = 1;
const W: u8 = 2;

impl Interest {
    /// Bytes (or a datagram) to read, the peer's end of stream, or an error.
    pub const READABLE: Interest = Interest(R);
    /// Room to write, or an error.
    pub const WRITABLE: Interest = Interest(W);

    /// True if it includes [`READABLE`](Self::READABLE).
    pub const fn is_readable(self) -> bool {
        self.0 & R != 0
    }

    /// True if it includes [`WRITABLE`](Self::WRITABLE).
    pub const fn is_writable(self) -> bool {
        self.0 & W != 0
    }

    /// Both sets together (as `|`, in `const` contexts).
    pub const fn add(self, other: Interest) -> Interest {
        Interest(self.0 | other.0)
    }

    /// The `poll(2)` events to ask the kernel for (the peer's end of stream, `POLLRDHUP`,
    /// with reads; `POLLERR` and `POLLHUP` are always reported).
    pub fn poll_events(self) -> u32 {
        let mut events = 0;
        if self.is_readable() {
            events |= (libc::POLLIN | libc::POLLRDHUP) as u32;
        }
        if self.is_writable() {
            events |= libc::POLLOUT as u32;
        }
        events
    }
}

impl BitOr for Interest {
    type Output = Interest;
    fn bitor(self, other: Interest) -> Interest {
        self.add(other)
    }
}

impl BitOrAssign for Interest {
    fn bitor_assign(&mut self, other: Interest) {
        *self = self.add(other);
    }
}

impl fmt::Debug for Interest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.is_readable(), self.is_writable()) {
            (true, true) => f.write_str("READABLE | WRITABLE"),
            (true, false) => f.write_str("READABLE"),
            (false, true) => f.write_str("WRITABLE"),
            (false, false) => f.write_str("(none)"),
        }
    }
}

/// What a socket was found ready for, as tokio's `Ready`.
///
/// ```
/// use ringsteal_rt::io::{Interest, Ready};
///
/// // The peer hung up: readable (a read returns the end of stream) and closed both ways.
/// let ready = Ready::from_poll_events(libc::POLLHUP as u32, Interest::READABLE);
/// assert!(ready.is_readable() && ready.is_read_closed());
/// assert!(!ready.is_writable(), "not asked for");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Ready(u8);

const READ_CLOSED: u8 = 4;
const WRITE_CLOSED: u8 = 8;
const ERROR: u8 = 16;

impl Ready {
    /// Nothing.
    pub const EMPTY: Ready = Ready(0);
    /// Bytes or a datagram to read.
    pub const READABLE: Ready = Ready(R);
    /// Room to write.
    pub const WRITABLE: Ready = Ready(W);
    /// The peer ended its side: a read returns the end of stream.
    pub const READ_CLOSED: Ready = Ready(READ_CLOSED);
    /// This side can no longer send: a write fails.
    pub const WRITE_CLOSED: Ready = Ready(WRITE_CLOSED);
    /// An error is pending on the socket (a read or write returns it).
    pub const ERROR: Ready = Ready(ERROR);

    /// What the kernel's `revents` say, for the directions `interest` asked for. A pending
    /// error (`POLLERR`) is [`ERROR`](Self::ERROR) and makes every direction asked for ready
    /// too, so that the usual loop (`ready`, then `try_read` if readable) makes the call
    /// that returns the error instead of waiting again and again for a socket whose error
    /// keeps it reported ready.
    pub fn from_poll_events(revents: u32, interest: Interest) -> Ready {
        let has = |event: libc::c_short| revents & event as u32 != 0;
        let mut ready = 0;
        if interest.is_readable() {
            if has(libc::POLLIN) {
                ready |= R;
            }
            if has(libc::POLLRDHUP) || has(libc::POLLHUP) {
                ready |= READ_CLOSED;
            }
        }
        if interest.is_writable() {
            if has(libc::POLLOUT) {
                ready |= W;
            }
            if has(libc::POLLHUP) {
                ready |= WRITE_CLOSED;
            }
        }
        if has(libc::POLLERR) {
            ready |= ERROR;
            if interest.is_readable() {
                ready |= R;
            }
            if interest.is_writable() {
                ready |= W;
            }
        }
        Ready(ready)
    }

    /// Everything that answers `interest`: its directions, their closed states, and a
    /// pending error.
    pub(crate) const fn answering(interest: Interest) -> Ready {
        let mut bits = ERROR;
        if interest.is_readable() {
            bits |= R | READ_CLOSED;
        }
        if interest.is_writable() {
            bits |= W | WRITE_CLOSED;
        }
        Ready(bits)
    }

    /// What is in both.
    pub(crate) const fn intersection(self, other: Ready) -> Ready {
        Ready(self.0 & other.0)
    }

    /// `self` without the ready states of `other` that can be cleared: the closed states are
    /// final (an ended stream stays ended), as in tokio.
    pub(crate) const fn clearing(self, other: Ready) -> Ready {
        Ready(self.0 & !(other.0 & !(READ_CLOSED | WRITE_CLOSED)))
    }

    /// The bits, for storing in an atomic.
    pub(crate) const fn bits(self) -> u8 {
        self.0
    }

    /// The set `bits` (from [`bits`](Self::bits)) stand for.
    pub(crate) const fn from_bits(bits: u8) -> Ready {
        Ready(bits)
    }

    /// True if nothing is ready.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// True if a read would not wait: bytes to read, or the peer's end of stream.
    pub const fn is_readable(self) -> bool {
        self.0 & (R | READ_CLOSED) != 0
    }

    /// True if a write would not wait: room, or a side that can no longer send (the write
    /// fails at once).
    pub const fn is_writable(self) -> bool {
        self.0 & (W | WRITE_CLOSED) != 0
    }

    /// True if the peer ended its side.
    pub const fn is_read_closed(self) -> bool {
        self.0 & READ_CLOSED != 0
    }

    /// True if this side can no longer send.
    pub const fn is_write_closed(self) -> bool {
        self.0 & WRITE_CLOSED != 0
    }

    /// True if an error is pending.
    pub const fn is_error(self) -> bool {
        self.0 & ERROR != 0
    }
}

impl BitOr for Ready {
    type Output = Ready;
    fn bitor(self, other: Ready) -> Ready {
        Ready(self.0 | other.0)
    }
}

impl fmt::Debug for Ready {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (R, "READABLE"),
            (W, "WRITABLE"),
            (READ_CLOSED, "READ_CLOSED"),
            (WRITE_CLOSED, "WRITE_CLOSED"),
            (ERROR, "ERROR"),
        ];
        let mut set = f.debug_set();
        for (bit, name) in names {
            if self.0 & bit != 0 {
                set.entry(&format_args!("{name}"));
            }
        }
        set.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_events_map_to_the_directions_asked_for() {
        let both = Interest::READABLE | Interest::WRITABLE;
        let r = |ev: libc::c_short, i| Ready::from_poll_events(ev as u32, i);
        assert_eq!(r(libc::POLLIN, both), Ready::READABLE);
        assert_eq!(r(libc::POLLOUT, both), Ready::WRITABLE);
        assert_eq!(
            r(libc::POLLIN | libc::POLLOUT, Interest::WRITABLE),
            Ready::WRITABLE
        );
        assert!(r(libc::POLLRDHUP, Interest::READABLE).is_readable());
        assert!(!r(libc::POLLRDHUP, Interest::READABLE).is_error());
        let hup = r(libc::POLLHUP, both);
        assert!(hup.is_read_closed() && hup.is_write_closed());
        assert!(hup.is_readable() && hup.is_writable());
        let err = r(libc::POLLERR, Interest::READABLE);
        assert!(
            err.is_error() && err.is_readable() && !err.is_writable(),
            "{err:?}"
        );
        assert!(r(0, both).is_empty());
        assert_eq!(
            both.poll_events(),
            (libc::POLLIN | libc::POLLRDHUP | libc::POLLOUT) as u32
        );
        assert_eq!(format!("{both:?}"), "READABLE | WRITABLE");
        assert_eq!(format!("{hup:?}"), "{READ_CLOSED, WRITE_CLOSED}");
    }
}
