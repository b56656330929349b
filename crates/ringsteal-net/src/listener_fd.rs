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
//! leaves the listening state (queued connections are reset, as `close` does), new
//! connections to a Unix listener are refused, and the armed accept ends, which lets the
//! descriptor be closed. The dying socket also gets `SO_REUSEADDR`, so that any socket
//! with `SO_REUSEADDR` (as `TcpListener::bind` sets) can bind its address at once; one
//! without it waits for the close, as the kernel lets a bind pass a closed but still bound
//! socket only when both have the option.
//!
//! A socket adopted with `from_std` is never shut down: someone else may hold it too (a
//! `try_clone`, a socket-activation manager, a pre-forked sibling), and a shutdown acts on
//! the socket, not on one descriptor. It stops listening when the last request lets go.
//!
//! Owns: that rule. May not: accept (the listeners and `Incoming` do).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ringsteal_rt::op::{SharedFd, SockAddr};

use crate::kept_accept::{self, Kept};

/// The shared handle: cloning it is what lets an `Incoming` outlive its listener.
pub(crate) type ListenerHandle = Arc<ListenerFd>;

/// A listening descriptor and whether dropping the last handle may shut it down.
#[derive(Debug)]
pub(crate) struct ListenerFd {
    fd: SharedFd,
    /// Cleared by `into_std`: the socket lives on in a std listener.
    stop_when_dropped: AtomicBool,
    /// Connections accepted for abandoned accepts, for the next accept (`kept_accept.rs`).
    kept: Arc<Kept>,
}

impl ListenerFd {
    /// The handle of a listener this runtime made: the socket is nobody else's.
    pub(crate) fn new(fd: SharedFd) -> ListenerHandle {
        Arc::new(ListenerFd {
            fd,
            stop_when_dropped: AtomicBool::new(true),
            kept: Arc::default(),
        })
    }

    /// The handle of a listener adopted from std (`from_std`): other descriptors may refer
    /// to the same socket, so dropping it never shuts the socket down.
    pub(crate) fn adopted(fd: SharedFd) -> ListenerHandle {
        Arc::new(ListenerFd {
            fd,
            stop_when_dropped: AtomicBool::new(false),
            kept: Arc::default(),
        })
    }

    /// The descriptor, for accept requests (each clones it for as long as it is in flight).
    pub(crate) fn shared(&self) -> &SharedFd {
        &self.fd
    }

    /// One connection: one an abandoned accept kept, else a new accept request, cancel-safe
    /// (`kept_accept.rs`).
    pub(crate) async fn accept(&self) -> io::Result<(OwnedFd, SockAddr)> {
        kept_accept::accept(&self.fd, &self.kept).await
    }

    /// The connections kept for the next accept (abandoned accepts and dropped `Incoming`s
    /// fill it; `Incoming` takes from it first).
    pub(crate) fn kept(&self) -> &Arc<Kept> {
        &self.kept
    }

    /// The descriptor handed on (`into_std`) by the listener's handle: nothing shuts the
    /// socket down any more, and the handle is given up, so the result is the descriptor's
    /// only holder unless an `Incoming` or a cancelled accept still shares it.
    pub(crate) fn hand_over(handle: ListenerHandle) -> SharedFd {
        handle.stop_when_dropped.store(false, Ordering::Relaxed);
        let fd = handle.fd.clone();
        drop(handle);
        fd
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
            let fd = self.fd.as_raw_fd();
            let on: libc::c_int = 1;
            // SAFETY: plain system calls on a descriptor `self.fd` keeps open; `on` outlives
            // the call that reads it. An error (the socket already shut down, say) changes
            // nothing: it is closed when the last request lets go either way.
            unsafe {
                libc::setsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    libc::SO_REUSEADDR,
                    (&on as *const libc::c_int).cast(),
                    std::mem::size_of_val(&on) as libc::socklen_t,
                );
                libc::shutdown(fd, libc::SHUT_RD);
            }
        }
    }
}
