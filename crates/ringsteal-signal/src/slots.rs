//! Listener slots: where the signal handler finds whom to wake.
//!
//! Each live [`Signal`](crate::Signal) owns a slot: its signal number and an eventfd the
//! handler writes to. The table is an append-only list of fixed-size chunks that the handler
//! walks with atomic loads; chunks are never freed. A dropped listener's slot (with its
//! eventfd) goes to the next listener at once. That is safe because listeners wait with a
//! poll, which consumes nothing: a cancelled poll of the previous owner still in flight
//! cannot take a wake meant for the new one (only the owner reads the count, to reset it).
//!
//! Up to [`KEEP_FREE`] freed slots keep their eventfds; beyond that (after a burst of
//! listeners: one `ctrl_c()` per connection of a busy server) an eventfd is closed, so the
//! descriptors left are the live listeners plus a few, not the peak for good. The handler
//! must never write to a descriptor that was closed and reused for something else: the
//! slot's descriptor is set to -1 first, then the close waits until no handler is inside
//! [`notify`] (a count it keeps), so every handler either saw -1 or has finished its write.
//!
//! Everything but [`notify`] runs under the registry lock (`Registry`).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicUsize, Ordering::SeqCst};
use std::sync::{Mutex, MutexGuard};

use ringsteal_rt::op::SharedFd;

/// Slots per chunk.
const CHUNK: usize = 64;

/// Freed slots that keep their eventfds for the next listeners; the rest are closed.
pub(crate) const KEEP_FREE: usize = 16;

/// Handlers inside [`notify`] now (on any thread): a close waits for none.
static IN_NOTIFY: AtomicUsize = AtomicUsize::new(0);

struct Slot {
    /// The signal its listener waits for; 0 while free.
    signum: AtomicI32,
    /// The eventfd to write to; -1 while the slot has none (never used, or its eventfd
    /// closed).
    fd: AtomicI32,
}

struct Chunk {
    slots: [Slot; CHUNK],
    next: AtomicPtr<Chunk>,
}

impl Chunk {
    const fn new() -> Self {
        Self {
            slots: [const {
                Slot {
                    signum: AtomicI32::new(0),
                    fd: AtomicI32::new(-1),
                }
            }; CHUNK],
            next: AtomicPtr::new(ptr::null_mut()),
        }
    }
}

/// The first chunk; later ones hang off it and are leaked (never freed).
static FIRST: Chunk = Chunk::new();

/// Writes to the eventfd of every slot listening for `signum`. Async-signal-safe: atomic
/// loads and `write(2)` only.
pub(crate) fn notify(signum: i32) {
    // Before any descriptor is read: a close that sees no handler here after setting a slot's
    // descriptor to -1 knows every later handler reads -1.
    IN_NOTIFY.fetch_add(1, SeqCst);
    let one: u64 = 1;
    let mut chunk: *const Chunk = &FIRST;
    while !chunk.is_null() {
        // SAFETY: chunks are static or leaked: valid for the rest of the process.
        let c = unsafe { &*chunk };
        for slot in &c.slots {
            if slot.signum.load(SeqCst) == signum {
                let fd = slot.fd.load(SeqCst);
                if fd >= 0 {
                    // SAFETY: `fd` is an eventfd not closed before this handler leaves
                    // `notify` (`IN_NOTIFY`, see `give_back`); writes 8 bytes from a live u64.
                    // A failure (a full counter) still leaves it readable.
                    unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
                }
            }
        }
        chunk = c.next.load(SeqCst);
    }
    IN_NOTIFY.fetch_sub(1, SeqCst);
}

/// A slot taken by a listener.
#[derive(Debug)]
pub(crate) struct Taken {
    index: usize,
    /// The slot's eventfd, to poll through the ring.
    pub(crate) fd: SharedFd,
}

impl Taken {
    /// Resets the eventfd's count (only the slot's owner does this), so the next poll waits
    /// for a new write.
    pub(crate) fn reset(&self) {
        let mut sink = 0u64;
        // SAFETY: reads 8 bytes into a live u64 from a non-blocking eventfd we hold open.
        // Nothing to read (EAGAIN) is fine.
        unsafe { libc::read(self.fd.as_raw_fd(), (&mut sink as *mut u64).cast(), 8) };
    }
}

/// The slots' bookkeeping (not touched by the handler).
pub(crate) struct Registry {
    /// Every chunk, by index, for finding a slot.
    chunks: Vec<&'static Chunk>,
    /// Slots in use or ever used.
    used: usize,
    /// Freed slots with their eventfds.
    free: Vec<(usize, SharedFd)>,
    /// Freed slots whose eventfds were closed.
    vacant: Vec<usize>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    chunks: Vec::new(),
    used: 0,
    free: Vec::new(),
    vacant: Vec::new(),
});

/// The registry, locked. Also serialises installing handlers and counting listeners.
pub(crate) fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

impl Registry {
    fn slot(&mut self, index: usize) -> &'static Slot {
        if self.chunks.is_empty() {
            self.chunks.push(&FIRST);
        }
        while index / CHUNK >= self.chunks.len() {
            let last = *self.chunks.last().expect("at least the first chunk");
            let new: &'static Chunk = Box::leak(Box::new(Chunk::new()));
            last.next.store(new as *const Chunk as *mut Chunk, SeqCst);
            self.chunks.push(new);
        }
        &self.chunks[index / CHUNK].slots[index % CHUNK]
    }

    /// A slot for a listener of `signum`: a freed one, or a new one with a new eventfd.
    pub(crate) fn take(&mut self, signum: i32) -> io::Result<Taken> {
        let (index, fd) = match self.free.pop() {
            Some(free) => free,
            None => {
                // Non-blocking: neither the handler's write nor the owner's reset may block.
                // SAFETY: eventfd returns a new descriptor or -1.
                let raw = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
                if raw < 0 {
                    return Err(io::Error::last_os_error());
                }
                // SAFETY: the descriptor is new and ours.
                let fd = SharedFd::new(unsafe { OwnedFd::from_raw_fd(raw) });
                let index = self.vacant.pop().unwrap_or_else(|| {
                    self.used += 1;
                    self.used - 1
                });
                // From now on the eventfd is held, by its listener or by `free`, until
                // `give_back` takes it out of the slot before closing it.
                self.slot(index).fd.store(fd.as_raw_fd(), SeqCst);
                (index, fd)
            }
        };
        self.slot(index).signum.store(signum, SeqCst);
        Ok(Taken { index, fd })
    }

    /// Gives a listener's slot back (a cancelled poll may still be in flight on its eventfd:
    /// harmless, see the module docs).
    /// Beyond [`KEEP_FREE`] freed slots, the eventfd is closed (see the module docs).
    pub(crate) fn give_back(&mut self, taken: Taken) {
        let slot = self.slot(taken.index);
        slot.signum.store(0, SeqCst);
        if self.free.len() < KEEP_FREE {
            self.free.push((taken.index, taken.fd));
            return;
        }
        slot.fd.store(-1, SeqCst);
        // A handler that read the descriptor before the store is still inside `notify`; one
        // that enters later reads -1. Handlers are short (a walk and a few writes), and one
        // that interrupted this thread has finished before this runs on.
        while IN_NOTIFY.load(SeqCst) != 0 {
            std::thread::yield_now();
        }
        // The descriptor closes once no request holds it either (a cancelled poll of the
        // listener may still be in flight): by then no handler can write to its number.
        drop(taken.fd);
        self.vacant.push(taken.index);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_close_waits_for_every_handler_inside_notify() {
        // Free slots up to what is kept, so the next one given back is closed.
        let signum = libc::SIGUSR2;
        let mut taken: Vec<_> = {
            let mut reg = registry();
            (0..=KEEP_FREE).map(|_| reg.take(signum).unwrap()).collect()
        };
        let last = taken.pop().unwrap();
        {
            let mut reg = registry();
            for t in taken {
                reg.give_back(t);
            }
        }
        let index = last.index;
        let slot = registry().slot(index);
        assert!(slot.fd.load(SeqCst) >= 0);
        // A handler that has entered `notify` (and may have read the descriptor).
        IN_NOTIFY.fetch_add(1, SeqCst);
        let closer = std::thread::spawn(move || registry().give_back(last));
        while slot.fd.load(SeqCst) != -1 {
            std::thread::yield_now();
        }
        // The descriptor is out of the slot, but the close waits for the handler to leave.
        for _ in 0..1000 {
            std::thread::yield_now();
            assert!(
                !closer.is_finished(),
                "closed while a handler was in notify"
            );
        }
        IN_NOTIFY.fetch_sub(1, SeqCst);
        closer.join().unwrap();
        assert!(registry().vacant.contains(&index));
    }
}
