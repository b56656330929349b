//! [`ListenerFd`]: a listening socket's descriptor as its user-side handles hold it (the
//! listener and every [`Incoming`](crate::Incoming) made from it share one), which stops the
//! socket listening the moment the last of them goes.
//!
//! Why: an accept request in flight names the descriptor, so after its future or stream is
//! dropped the socket stays open until the cancel completes (a later tick, maybe another
//! shard). A tokio user expects a dropped listener to free its address at once: a server
//! restarted in the same function, or a test binding the same port again, would otherwise
//! see `EADDRINUSE`. So when the last handle goes while a request still holds the
//! descriptor, the socket is shut down for reading (`shutdown(SHUT_RD)`): a TCP listener
//! leaves the listening state (its address can be bound again, queued connections are
//! reset, as `close` does), new connections to a Unix listener are refused, and the armed
//! accept ends, which lets the descriptor be closed.
//!
//! Owns: that rule. May not: accept (the listeners and `Incoming` do).

use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ringsteal_rt::op::SharedFd;

/// The shared handle: cloning it is what lets an `Incoming` outlive its listener.
pub(crate) type ListenerHandle = Arc<ListenerFd>;

/// A listening descriptor and whether dropping the last handle may shut it down.
#[derive(Debug)]
pub(crate) struct ListenerFd {
    fd: SharedFd,
    /// Cleared by `into_std`: the socket lives on in a std listener.
    stop_when_dropped: AtomicBool,
}

impl ListenerFd {
    /// The handle of a new listener.
    pub(crate) fn new(fd: SharedFd) -> ListenerHandle {
        Arc::new(ListenerFd {
            fd,
            stop_when_dropped: AtomicBool::new(true),
        })
    }

    /// The descriptor, for accept requests (each clones it for as long as it is in flight).
    pub(crate) fn shared(&self) -> &SharedFd {
        &self.fd
    }

    /// The descriptor handed on (`into_std`): nothing shuts the socket down any more, and the
    /// caller gets a holder of its own.
    pub(crate) fn hand_over(&self) -> SharedFd {
        self.stop_when_dropped.store(false, Ordering::Relaxed);
        self.fd.clone()
    }
}

impl AsRawFd for ListenerFd {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl Drop for ListenerFd {
    fn drop(&mut self) {
        // Only this handle holds it: the descriptor is closed right now, by `fd`'s drop.
        // (A request that lets go meanwhile makes the shutdown below merely redundant.)
        if self.fd.holders() > 1 && self.stop_when_dropped.load(Ordering::Relaxed) {
            // SAFETY: plain system call on a descriptor `self.fd` keeps open. An error (the
            // socket already shut down, say) changes nothing: it is closed when the last
            // request lets go either way.
            let _ = unsafe { libc::shutdown(self.fd.as_raw_fd(), libc::SHUT_RD) };
        }
    }
}
