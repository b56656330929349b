//! Listener slots: where the signal handler finds whom to wake.
//!
//! Each live [`Signal`](crate::Signal) owns a slot: its signal number and an eventfd the
//! handler writes to. The table is an append-only list of fixed-size chunks that the handler
//! walks with atomic loads; chunks are never freed and eventfds never closed, so the handler
//! can never write to a descriptor that was closed and reused for something else. A dropped
//! listener's slot (with its eventfd) goes to the next listener at once, so the number of
//! eventfds is the peak number of listeners, not the total. That is safe because listeners
//! wait with a poll, which consumes nothing: a cancelled poll of the previous owner still in
//! flight cannot take a wake meant for the new one (only the owner reads the count, to reset
//! it).
//!
//! Everything but [`notify`] runs under the registry lock (`Registry`).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering::SeqCst};
use std::sync::{Mutex, MutexGuard};

use ringsteal_rt::op::SharedFd;

/// Slots per chunk.
const CHUNK: usize = 64;

struct Slot {
    /// The signal its listener waits for; 0 while free.
    signum: AtomicI32,
    /// The eventfd to write to; -1 until the slot is first used, then fixed for good.
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
    let one: u64 = 1;
    let mut chunk: *const Chunk = &FIRST;
    while !chunk.is_null() {
        // SAFETY: chunks are static or leaked: valid for the rest of the process.
        let c = unsafe { &*chunk };
        for slot in &c.slots {
            if slot.signum.load(SeqCst) == signum {
                let fd = slot.fd.load(SeqCst);
                if fd >= 0 {
                    // SAFETY: `fd` is an eventfd that is never closed; writes 8 bytes from a
                    // live u64. A failure (a full counter) still leaves it readable.
                    unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
                }
            }
        }
        chunk = c.next.load(SeqCst);
    }
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
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    chunks: Vec::new(),
    used: 0,
    free: Vec::new(),
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
                let index = self.used;
                self.used += 1;
                // From now on the eventfd is always held, by its listener or by `free`, and
                // the registry is never dropped: it is never closed.
                self.slot(index).fd.store(fd.as_raw_fd(), SeqCst);
                (index, fd)
            }
        };
        self.slot(index).signum.store(signum, SeqCst);
        Ok(Taken { index, fd })
    }

    /// Gives a listener's slot back (a cancelled poll may still be in flight on its eventfd:
    /// harmless, see the module docs).
    pub(crate) fn give_back(&mut self, taken: Taken) {
        self.slot(taken.index).signum.store(0, SeqCst);
        self.free.push((taken.index, taken.fd));
    }
}
