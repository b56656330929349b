//! The task cell: one allocation holding the header, the scheduler, the future (later its
//! output) and the join waker; and the vtable that erases the future's type.
//!
//! Owns: layout, allocation and deallocation. May not: change the state word except through
//! `state.rs`.

use std::alloc::Layout;
use std::cell::UnsafeCell;
use std::future::Future;
use std::ptr::NonNull;
use std::task::Waker;

use super::error::JoinError;
use super::id::Id;
use super::state::State;
use super::Schedule;
use crate::loom::sync::atomic::AtomicU32;
use crate::util::block_cache;
use std::sync::atomic::Ordering;

/// `home` before the first poll of a stealable task.
pub(crate) const HOME_UNSET: u32 = u32::MAX;
/// `home` of a task that runs on the blocking pool.
pub(crate) const HOME_BLOCKING: u32 = u32::MAX - 1;

/// Type-erased operations on a task.
pub(crate) struct Vtable {
    /// Runs a queued task (consumes the queued reference).
    pub(crate) poll: unsafe fn(NonNull<Header>),
    /// Queues the task through its scheduler (consumes one reference).
    pub(crate) schedule: unsafe fn(NonNull<Header>),
    /// Frees the allocation.
    pub(crate) dealloc: unsafe fn(NonNull<Header>),
    /// Moves the output into `*dst` (a `Poll<Result<T, JoinError>>`) or registers the waker.
    pub(crate) try_read_output: unsafe fn(NonNull<Header>, *mut (), &Waker),
    /// Drops the join handle's interest and reference.
    pub(crate) drop_join_handle: unsafe fn(NonNull<Header>),
    /// Cancels a started task in place (shutdown, on its home thread).
    pub(crate) shutdown: unsafe fn(NonNull<Header>),
    /// A queued reference is dropped without running (shutdown).
    pub(crate) drop_notified: unsafe fn(NonNull<Header>),
}

/// Links of the home shard's list of started tasks (touched only by the home thread).
#[derive(Default)]
pub(crate) struct Links {
    pub(crate) prev: Option<NonNull<Header>>,
    pub(crate) next: Option<NonNull<Header>>,
}

/// The first field of every task cell. Its fields are in an order that leaves no padding
/// but after `linked` and `movable`, which share it (48 bytes): a task cell that grows past
/// a size class of the block cache costs every spawn.
#[repr(C)]
pub(crate) struct Header {
    pub(crate) state: State,
    pub(crate) vtable: &'static Vtable,
    home: AtomicU32,
    /// Whether the task is in its home shard's list of started tasks (touched only by the
    /// home thread, as `links`).
    pub(crate) linked: UnsafeCell<bool>,
    /// Whether the task may move to another shard between polls (a `Send` task spawned
    /// `Stealable`; `shard/move_started.rs`). Set at the spawn, never changed.
    pub(crate) movable: bool,
    pub(crate) id: Id,
    pub(crate) links: UnsafeCell<Links>,
}

impl Header {
    /// The home shard, once the task has been polled (or was placed with one).
    pub(crate) fn home(&self) -> Option<usize> {
        match self.home.load(Ordering::Relaxed) {
            HOME_UNSET | HOME_BLOCKING => None,
            h => Some(h as usize),
        }
    }

    pub(crate) fn raw_home(&self) -> u32 {
        self.home.load(Ordering::Relaxed)
    }

    /// Sets the home shard. Called before the first poll, by the polling thread; wakers learn
    /// it through the synchronisation that hands them the waker.
    pub(crate) fn set_home(&self, home: usize) {
        self.home.store(home as u32, Ordering::Relaxed);
    }
}

// The header's size, kept (see `Header`): ids made it grow by 8 bytes once, which cost every
// spawn_join in the instruction-count probe some 40 instructions of malloc.
#[cfg(all(target_pointer_width = "64", not(loom)))]
const _: () = assert!(std::mem::size_of::<Header>() == 48);

/// What the future slot holds.
pub(crate) enum Stage<F: Future> {
    Running(F),
    Finished(Result<F::Output, JoinError>),
    Consumed,
}

/// The whole allocation.
#[repr(C)]
pub(crate) struct Cell<F: Future, S> {
    pub(crate) header: Header,
    pub(crate) scheduler: S,
    pub(crate) stage: UnsafeCell<Stage<F>>,
    pub(crate) join_waker: UnsafeCell<Option<Waker>>,
}

/// Frees a cell allocated by [`allocate`], dropping what it still holds.
///
/// # Safety
/// `ptr` must come from `allocate::<F, S>` and have no remaining users.
pub(crate) unsafe fn free<F: Future, S>(ptr: NonNull<Header>) {
    let cell = ptr.cast::<Cell<F, S>>();
    // SAFETY: forwarded from the caller: the cell is initialised and unused.
    unsafe { std::ptr::drop_in_place(cell.as_ptr()) };
    // SAFETY: allocated by block_cache::allocate with this layout.
    unsafe { block_cache::deallocate(cell.cast(), Layout::new::<Cell<F, S>>()) };
}

pub(crate) fn allocate<F, S>(future: F, scheduler: S, home: u32, movable: bool) -> NonNull<Header>
where
    F: Future + 'static,
    S: Schedule,
{
    let cell = Cell {
        header: Header {
            state: State::new(),
            vtable: vtable::<F, S>(),
            home: AtomicU32::new(home),
            linked: UnsafeCell::new(false),
            movable,
            id: Id::next(),
            links: UnsafeCell::new(Links::default()),
        },
        scheduler,
        stage: UnsafeCell::new(Stage::Running(future)),
        join_waker: UnsafeCell::new(None),
    };
    let ptr = block_cache::allocate(Layout::new::<Cell<F, S>>()).cast::<Cell<F, S>>();
    // SAFETY: freshly allocated for exactly this type; `Cell` is repr(C) with the header first,
    // so the cell pointer is the header pointer.
    unsafe { ptr.as_ptr().write(cell) };
    ptr.cast()
}

fn vtable<F: Future + 'static, S: Schedule>() -> &'static Vtable {
    use super::harness;
    &Vtable {
        poll: harness::poll::<F, S>,
        schedule: harness::schedule::<F, S>,
        dealloc: harness::dealloc::<F, S>,
        try_read_output: harness::try_read_output::<F, S>,
        drop_join_handle: harness::drop_join_handle::<F, S>,
        shutdown: harness::shutdown::<F, S>,
        drop_notified: harness::drop_notified::<F, S>,
    }
}
