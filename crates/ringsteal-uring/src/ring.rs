//! [`Ring`]: one io_uring instance (fd, mappings, SQ, CQ) and [`RingBuilder`] to create it.
//!
//! Owns: `io_uring_setup`, the ring mappings (single-mmap and the two-mapping fallback),
//! submission and waiting through `io_uring_enter`, CQ-overflow flushing and the handling of
//! `EINTR`/`EBUSY`/`EAGAIN`/`ETIME`. May not: keep track of what SQEs mean; that is the
//! runtime's driver.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

use crate::abi::*;
use crate::cq::CompletionQueue;
use crate::error::SetupError;
use crate::mmap::Mmap;
use crate::ring_fd::RingFdRegistration;
use crate::ring_share::RingShare;
use crate::sq::SubmissionQueue;
use crate::sys;

/// The setup flags [`RingBuilder::build`] accepts. The others change what the rings look
/// like or how they are reached, which the SQ and CQ code here does not handle: `SQE128`
/// (128-byte SQEs), `CQE32` (32-byte CQEs), `NO_MMAP` (ring memory supplied by the caller),
/// `REGISTERED_FD_ONLY` (no descriptor for the ring), and any flag newer than this binding
/// (a later kernel's mixed-size SQEs and CQEs, say).
pub const SUPPORTED_SETUP_FLAGS: u32 = IORING_SETUP_IOPOLL
    | IORING_SETUP_SQPOLL
    | IORING_SETUP_SQ_AFF
    | IORING_SETUP_CQSIZE
    | IORING_SETUP_CLAMP
    | IORING_SETUP_ATTACH_WQ
    | IORING_SETUP_R_DISABLED
    | IORING_SETUP_SUBMIT_ALL
    | IORING_SETUP_COOP_TASKRUN
    | IORING_SETUP_TASKRUN_FLAG
    | IORING_SETUP_SINGLE_ISSUER
    | IORING_SETUP_DEFER_TASKRUN
    | IORING_SETUP_NO_SQARRAY
    | IORING_SETUP_HYBRID_IOPOLL;

/// Options for `io_uring_setup`, one method per setup flag.
///
/// ```
/// use ringsteal_uring::RingBuilder;
///
/// let ring = RingBuilder::new(64).cq_entries(256).clamp().build()?;
/// assert_eq!(ring.sq_entries(), 64);
/// assert_eq!(ring.cq_entries(), 256);
/// # Ok::<(), ringsteal_uring::SetupError>(())
/// ```
#[derive(Clone, Debug)]
pub struct RingBuilder {
    entries: u32,
    params: io_uring_params,
}

impl RingBuilder {
    /// A ring with `entries` SQ slots (rounded up to a power of two by the kernel) and, unless
    /// [`cq_entries`](Self::cq_entries) says otherwise, twice as many CQ slots.
    pub fn new(entries: u32) -> Self {
        Self {
            entries,
            params: io_uring_params::default(),
        }
    }

    /// Adds raw `IORING_SETUP_*` flags. Flags outside [`SUPPORTED_SETUP_FLAGS`] (such as
    /// `SQE128` or `CQE32`) make [`build`](Self::build) fail with
    /// [`Unavailable::UnsupportedFlags`](crate::Unavailable::UnsupportedFlags).
    ///
    /// ```
    /// use ringsteal_uring::{abi::IORING_SETUP_CQE32, RingBuilder, Unavailable};
    ///
    /// let err = RingBuilder::new(8).flags(IORING_SETUP_CQE32).build().unwrap_err();
    /// assert_eq!(err.cause(), &Unavailable::UnsupportedFlags { flags: IORING_SETUP_CQE32 });
    /// assert!(err.to_string().contains("CQE32"));
    /// ```
    pub fn flags(mut self, flags: u32) -> Self {
        self.params.flags |= flags;
        self
    }

    /// The setup flags requested so far.
    pub fn setup_flags(&self) -> u32 {
        self.params.flags
    }

    /// The SQ entries requested.
    pub fn entries(&self) -> u32 {
        self.entries
    }

    /// `SQPOLL`: a kernel thread polls the SQ, sleeping after `idle_ms` without work.
    pub fn sqpoll(mut self, idle_ms: u32) -> Self {
        self.params.flags |= IORING_SETUP_SQPOLL;
        self.params.sq_thread_idle = idle_ms;
        self
    }

    /// `SQ_AFF`: pin the SQPOLL thread to `cpu` (implies nothing without [`sqpoll`](Self::sqpoll)).
    pub fn sqpoll_cpu(mut self, cpu: u32) -> Self {
        self.params.flags |= IORING_SETUP_SQ_AFF;
        self.params.sq_thread_cpu = cpu;
        self
    }

    /// `IOPOLL`: busy-poll completions (O_DIRECT files on pollable devices only).
    pub fn iopoll(self) -> Self {
        self.flags(IORING_SETUP_IOPOLL)
    }

    /// `CQSIZE`: `n` CQ slots (at least the SQ size).
    pub fn cq_entries(mut self, n: u32) -> Self {
        self.params.flags |= IORING_SETUP_CQSIZE;
        self.params.cq_entries = n;
        self
    }

    /// `CLAMP`: clamp entry counts to the kernel's maximum instead of failing.
    pub fn clamp(self) -> Self {
        self.flags(IORING_SETUP_CLAMP)
    }

    /// `ATTACH_WQ`: share the io-wq worker pool of the ring `fd`.
    pub fn attach_wq(mut self, fd: RawFd) -> Self {
        self.params.flags |= IORING_SETUP_ATTACH_WQ;
        self.params.wq_fd = fd as u32;
        self
    }

    /// `SUBMIT_ALL`: keep submitting a batch after one SQE fails at submission.
    pub fn submit_all(self) -> Self {
        self.flags(IORING_SETUP_SUBMIT_ALL)
    }

    /// `COOP_TASKRUN`: no IPIs to post completions; they appear at the next kernel entry.
    pub fn coop_taskrun(self) -> Self {
        self.flags(IORING_SETUP_COOP_TASKRUN)
    }

    /// `TASKRUN_FLAG`: report pending completion work in the SQ flags (`IORING_SQ_TASKRUN`).
    pub fn taskrun_flag(self) -> Self {
        self.flags(IORING_SETUP_TASKRUN_FLAG)
    }

    /// `SINGLE_ISSUER`: only the creating (or enabling) thread submits.
    pub fn single_issuer(self) -> Self {
        self.flags(IORING_SETUP_SINGLE_ISSUER)
    }

    /// `DEFER_TASKRUN`: completions are posted only when the issuer waits with GETEVENTS
    /// (needs [`single_issuer`](Self::single_issuer)).
    pub fn defer_taskrun(self) -> Self {
        self.flags(IORING_SETUP_DEFER_TASKRUN)
    }

    /// `R_DISABLED`: create the ring disabled; [`Ring::enable`] enables it.
    pub fn r_disabled(self) -> Self {
        self.flags(IORING_SETUP_R_DISABLED)
    }

    /// `NO_SQARRAY`: no SQ index array (6.6).
    pub fn no_sqarray(self) -> Self {
        self.flags(IORING_SETUP_NO_SQARRAY)
    }

    /// Creates the ring. Fails without asking the kernel if a flag outside
    /// [`SUPPORTED_SETUP_FLAGS`] was set.
    pub fn build(&self) -> Result<Ring, SetupError> {
        let mut p = self.params;
        let flags = p.flags;
        if flags & !SUPPORTED_SETUP_FLAGS != 0 {
            return Err(SetupError::unsupported_flags(
                flags & !SUPPORTED_SETUP_FLAGS,
                flags,
                self.entries,
            ));
        }
        let fd = setup_once_memory_is_back(self.entries, &mut p)
            .map_err(|e| SetupError::from_io(&e, flags, self.entries))?;
        // SAFETY: io_uring_setup returned a fresh fd that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ring::map(fd, p).map_err(|e| SetupError::from_io(&e, flags, self.entries))
    }

    /// Asks the kernel whether it accepts these parameters: `io_uring_setup` with them, the
    /// ring closed at once without being mapped. For probing flags [`build`](Self::build)
    /// refuses. The error is the kernel's (`EINVAL` for a refusal, `EMFILE` for no free
    /// descriptor...): telling them apart is the caller's job.
    pub(crate) fn kernel_accepts(&self) -> io::Result<()> {
        let mut p = self.params;
        let fd = setup_once_memory_is_back(self.entries, &mut p)?;
        // SAFETY: a fresh descriptor nothing else owns; closed right away.
        drop(unsafe { OwnedFd::from_raw_fd(fd) });
        Ok(())
    }
}

/// `io_uring_setup(entries, params)`, asked again when it answers `ENOMEM`, after 1, 2, 4 ...
/// 128 ms (a quarter of a second in all). Ring memory counts against `RLIMIT_MEMLOCK` (for a
/// user without `CAP_IPC_LOCK`), and the kernel gives a closed ring's share back later, from
/// a worker: rings set up right after others were closed (the feature detection's trial
/// rings, then the shards' rings; a runtime built right after another was dropped) can fail
/// under a limit that holds them all, and pass a moment later. A limit too low for good
/// still fails, a quarter of a second later.
fn setup_once_memory_is_back(entries: u32, params: &mut io_uring_params) -> io::Result<RawFd> {
    const LAST_PAUSE: Duration = Duration::from_millis(128);
    let mut pause = Duration::from_millis(1);
    loop {
        let mut p = *params;
        // SAFETY: `p` is a valid, writable io_uring_params owned by this frame.
        match unsafe { sys::io_uring_setup(entries, &mut p) } {
            Err(e) if e.raw_os_error() == Some(libc::ENOMEM) && pause <= LAST_PAUSE => {
                std::thread::sleep(pause);
                pause *= 2;
            }
            outcome => {
                *params = p;
                return outcome;
            }
        }
    }
}

/// The longest wait [`Ring::submit_and_wait_timeout`] passes to the kernel: about 30 years.
const LONGEST_WAIT: Duration = Duration::from_secs(86400 * 365 * 30);

/// How a wait in the kernel ([`Ring::submit_and_wait_timeout`]) ended.
///
/// ```
/// use std::time::Duration;
/// use ringsteal_uring::{opcode, Ring, Wait};
///
/// let mut ring = Ring::new(8)?;
/// // Nothing queued: the wait for one completion ends with the timeout.
/// let ended = ring.submit_and_wait_timeout(1, Some(Duration::from_millis(1)))?;
/// assert_eq!(ended, Wait::TimedOut);
/// // SAFETY: a NOP references no memory.
/// unsafe { ring.push(&opcode::nop()) }.unwrap();
/// assert_eq!(ring.submit_and_wait_timeout(1, Some(Duration::from_secs(5)))?, Wait::Completed);
/// assert!(ring.pop_cqe().is_some());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// The kernel returned normally (completions may or may not be ready).
    Completed,
    /// The timeout expired first (`ETIME`, which is success here).
    TimedOut,
    /// A signal interrupted the wait (`EINTR`).
    Interrupted,
}

/// One io_uring instance: its fd, its shared mappings, and the SQ and CQ inside them.
///
/// `Ring` is `Send` but not `Sync`: one thread at a time owns it. With `SINGLE_ISSUER` the
/// kernel additionally requires that thread to be the one that created (or enabled) it.
///
/// ```
/// use ringsteal_uring::{opcode, Ring};
///
/// let mut ring = Ring::new(8)?;
/// // SAFETY: a NOP references no memory.
/// unsafe { ring.push(&opcode::nop().with_user_data(7)) }.unwrap();
/// ring.submit_and_wait(1)?;
/// let cqe = ring.pop_cqe().unwrap();
/// assert_eq!((cqe.user_data, cqe.res), (7, 0));
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Ring {
    sq: SubmissionQueue,
    cq: CompletionQueue,
    params: io_uring_params,
    // Field order matters for drop: the mappings go before the fd.
    _sq_map: Mmap,
    _cq_map: Option<Mmap>,
    _sqe_map: Mmap,
    /// The descriptor registered with the thread that enters the ring, if it was
    /// (`ring_fd.rs`); dropped (unregistered) before the descriptor closes.
    registration: Option<RingFdRegistration>,
    /// Shared with the [`BufRing`](crate::BufRing)s registered on this ring, which must
    /// reach this ring, and no other, until they unregister (`ring_share.rs`).
    fd: Arc<RingShare>,
}

// SAFETY: all raw pointers in the queues point into mappings owned by this Ring, which are
// valid from any thread; the kernel's own single-issuer rule is documented above. A ring
// whose descriptor was registered with its thread (`register_ring_fd`) must be entered and
// dropped on that thread: that is the caller's promise to the `unsafe` registration.
unsafe impl Send for Ring {}

impl Ring {
    /// A ring with `entries` SQ slots and default flags.
    pub fn new(entries: u32) -> Result<Self, SetupError> {
        RingBuilder::new(entries).build()
    }

    fn map(fd: OwnedFd, p: io_uring_params) -> io::Result<Self> {
        let raw = fd.as_raw_fd();
        let sq_len = p.sq_off.array as usize + p.sq_entries as usize * std::mem::size_of::<u32>();
        let cq_len =
            p.cq_off.cqes as usize + p.cq_entries as usize * std::mem::size_of::<io_uring_cqe>();
        let single = p.features & IORING_FEAT_SINGLE_MMAP != 0;
        let (sq_map, cq_map) = if single {
            (
                Mmap::ring(raw, sq_len.max(cq_len), IORING_OFF_SQ_RING)?,
                None,
            )
        } else {
            let sq = Mmap::ring(raw, sq_len, IORING_OFF_SQ_RING)?;
            (sq, Some(Mmap::ring(raw, cq_len, IORING_OFF_CQ_RING)?))
        };
        let sqe_len = p.sq_entries as usize * std::mem::size_of::<io_uring_sqe>();
        let sqe_map = Mmap::ring(raw, sqe_len, IORING_OFF_SQES)?;
        // SAFETY: the mappings are the SQ ring, CQ ring and SQEs of the ring set up with `p`.
        let (sq, cq) = unsafe {
            (
                SubmissionQueue::new(&sq_map, &sqe_map, &p),
                CompletionQueue::new(cq_map.as_ref().unwrap_or(&sq_map), &p),
            )
        };
        Ok(Self {
            sq,
            cq,
            params: p,
            _sq_map: sq_map,
            _cq_map: cq_map,
            _sqe_map: sqe_map,
            registration: None,
            fd: Arc::new(RingShare::new(fd)),
        })
    }

    /// The ring's descriptor, shared: it stays open (and the io_uring instance alive) until
    /// the ring and every holder of this handle are dropped.
    pub(crate) fn shared_fd(&self) -> Arc<RingShare> {
        self.fd.clone()
    }

    /// The ring's file descriptor (the target of MSG_RING, the first register argument).
    pub fn fd(&self) -> RawFd {
        self.fd.raw()
    }

    /// True if the ring enters the kernel through a descriptor registered with its thread
    /// ([`register_ring_fd`](Self::register_ring_fd)).
    pub fn ring_fd_registered(&self) -> bool {
        self.registration.is_some()
    }

    /// Registers the ring's descriptor with the calling thread (`IORING_REGISTER_RING_FDS`);
    /// from then on the ring enters the kernel through the registered slot. A kernel without
    /// it (before 5.18: `EINVAL`) or a full table (16 slots per thread: `EBUSY`) returns the
    /// error and leaves the ring entering by its descriptor, which works the same, only with
    /// a lookup per call. Registering twice is a no-op.
    ///
    /// ```
    /// use ringsteal_uring::{opcode, Ring};
    ///
    /// let mut ring = Ring::new(4)?;
    /// // SAFETY: this thread is the only one that uses the ring, and it drops it.
    /// if unsafe { ring.register_ring_fd() }.is_ok() {
    ///     assert!(ring.ring_fd_registered());
    /// }
    /// // SAFETY: a NOP references no memory.
    /// unsafe { ring.push(&opcode::nop().with_user_data(3)) }.unwrap();
    /// ring.submit_and_wait(1)?;
    /// assert_eq!(ring.pop_cqe().unwrap().user_data, 3);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Safety
    /// A registration belongs to the calling thread: another thread using the slot would name
    /// nothing, or a ring of its own. So from this call until the ring is dropped, every call
    /// on it that enters the kernel (the submits, waits and flushes), and the drop itself,
    /// must happen on the calling thread.
    pub unsafe fn register_ring_fd(&mut self) -> io::Result<()> {
        if self.ring_fd_registered() {
            return Ok(());
        }
        // SAFETY: the descriptor is this ring's and stays open until the registration, which
        // the ring drops first, is gone; the caller's contract puts that drop on this thread.
        let registration = unsafe { RingFdRegistration::register(self.fd()) }?;
        self.registration = Some(registration);
        Ok(())
    }

    /// What `io_uring_enter` is given to name this ring, and the flag that says which kind
    /// of name it is.
    #[inline]
    fn enter_target(&self) -> (RawFd, u32) {
        match &self.registration {
            Some(r) => (r.index() as RawFd, IORING_ENTER_REGISTERED_RING),
            None => (self.fd(), 0),
        }
    }

    /// The parameters the kernel returned from setup.
    pub fn params(&self) -> &io_uring_params {
        &self.params
    }

    /// The `IORING_FEAT_*` bits of this kernel.
    pub fn features(&self) -> u32 {
        self.params.features
    }

    /// The setup flags this ring was created with.
    pub fn setup_flags(&self) -> u32 {
        self.params.flags
    }

    /// SQ slots.
    pub fn sq_entries(&self) -> u32 {
        self.sq.entries()
    }

    /// CQ slots.
    pub fn cq_entries(&self) -> u32 {
        self.cq.entries()
    }

    /// Free SQ slots.
    #[inline]
    pub fn sq_space_left(&self) -> u32 {
        self.sq.space_left()
    }

    /// SQEs pushed but not yet consumed by the kernel.
    #[inline]
    pub fn sq_pending(&self) -> u32 {
        self.sq.len()
    }

    /// SQEs the kernel has consumed since the ring was made, wrapping at `u32::MAX`: the
    /// kernel's SQ head. On an SQPOLL ring the poller thread advances it at any time, so the
    /// difference between two readings counts what was consumed between them, however it
    /// was submitted.
    #[inline]
    pub fn sq_consumed(&self) -> u32 {
        self.sq.khead()
    }

    /// The SQ flags word (`IORING_SQ_NEED_WAKEUP`, `IORING_SQ_CQ_OVERFLOW`, `IORING_SQ_TASKRUN`).
    #[inline]
    pub fn sq_flags(&self) -> u32 {
        self.sq.flags()
    }

    /// True when the kernel holds overflowed CQEs that only an enter with GETEVENTS flushes.
    #[inline]
    pub fn cq_overflow_pending(&self) -> bool {
        self.sq.flags() & IORING_SQ_CQ_OVERFLOW != 0
    }

    /// True when completion work waits for a kernel entry (`TASKRUN_FLAG` rings only).
    #[inline]
    pub fn taskrun_pending(&self) -> bool {
        self.sq.flags() & IORING_SQ_TASKRUN != 0
    }

    /// Sets `IORING_SQ_TASKRUN` with no completion work behind it, for tests of code that
    /// must not spin on the flag.
    ///
    /// The flag is a hint. The kernel can leave it set after the work it announced has run
    /// (work queued while an enter runs deferred work sets it again, and that same enter runs
    /// the work), and clears it only when deferred work runs next. A program that enters
    /// whenever the flag is set, and never waits while it is, spins until then. This makes
    /// that state on purpose.
    #[doc(hidden)]
    pub fn mark_taskrun_without_work(&self) {
        self.sq.set_flags(IORING_SQ_TASKRUN);
    }

    /// SQEs the kernel rejected as invalid and dropped.
    pub fn sq_dropped(&self) -> u32 {
        self.sq.dropped()
    }

    /// CQEs lost to overflow (only on kernels without `FEAT_NODROP`).
    pub fn cq_dropped(&self) -> u32 {
        self.cq.overflow()
    }

    /// Queues one SQE. Returns it back if the SQ is full; submit (or reap) and retry.
    ///
    /// # Safety
    /// Every pointer in `sqe` (buffers, paths, iovecs, sockaddrs, timespecs...) must stay valid,
    /// and buffers the kernel writes must not be read or written by anyone else, until the
    /// request's final CQE has been reaped (or the opcode is documented to copy them at
    /// submission and the SQE has been submitted). The fd must stay open until then too.
    /// A request that selects a provided buffer (`IOSQE_BUFFER_SELECT`, as the multishot
    /// receives do) holds no pointer, but may already have taken a buffer's address from its
    /// group: the group it names must stay registered, and its [`BufRing`](crate::BufRing)
    /// alive (not dropped; [`leak`](crate::BufRing::leak) is fine), until that final CQE.
    #[inline]
    pub unsafe fn push(&mut self, sqe: &io_uring_sqe) -> Result<(), io_uring_sqe> {
        // SAFETY: forwarded from the caller.
        if unsafe { self.sq.push(std::slice::from_ref(sqe)) } {
            Ok(())
        } else {
            Err(*sqe)
        }
    }

    /// Queues several SQEs in consecutive slots, all or none (a link chain must never be split
    /// across a submission boundary the kernel could see half of). Returns false if they do
    /// not fit.
    ///
    /// # Safety
    /// As for [`push`](Self::push), for every SQE.
    #[inline]
    pub unsafe fn push_all(&mut self, sqes: &[io_uring_sqe]) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.sq.push(sqes) }
    }

    /// Replaces the most recently pushed SQE with `sqe` if the kernel has not consumed it yet
    /// (a submission was refused with `EBUSY`, or stopped at an earlier SQE, or has not
    /// happened), so that it is never submitted: a NOP without a completion
    /// (`IOSQE_CQE_SKIP_SUCCESS`) withdraws it. Returns false if it was consumed already, or
    /// if the ring has an SQPOLL thread, which may be reading it at any moment.
    ///
    /// ```
    /// use ringsteal_uring::{abi::IOSQE_CQE_SKIP_SUCCESS, opcode, Ring};
    ///
    /// let mut ring = Ring::new(4)?;
    /// // SAFETY: NOPs reference no memory; no other thread uses this ring.
    /// unsafe {
    ///     ring.push(&opcode::nop().with_user_data(1)).unwrap();
    ///     assert!(ring.replace_last_pending(&opcode::nop().with_flags(IOSQE_CQE_SKIP_SUCCESS)));
    /// }
    /// ring.submit()?;
    /// assert!(ring.pop_cqe().is_none(), "the NOP with user_data 1 was never submitted");
    /// // SAFETY: as above.
    /// assert!(!unsafe { ring.replace_last_pending(&opcode::nop()) }, "nothing pending now");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Safety
    /// No other thread may enter this ring (`io_uring_enter`) during the call: the kernel
    /// reads SQEs inside that call. `sqe` is under the contract of [`push`](Self::push).
    pub unsafe fn replace_last_pending(&mut self, sqe: &io_uring_sqe) -> bool {
        if self.params.flags & IORING_SETUP_SQPOLL != 0 {
            return false;
        }
        // SAFETY: no SQPOLL thread; the caller guarantees no concurrent enter.
        unsafe { self.sq.replace_last(sqe) }
    }

    /// Takes back every SQE pushed and not consumed by the kernel, oldest first, so that none
    /// of them is ever submitted: what a program does with requests it cannot submit at all
    /// (the ring refuses `io_uring_enter` for good), to fail each itself. Returns false and
    /// takes nothing on an SQPOLL ring, whose poller thread may be reading them.
    ///
    /// ```
    /// use ringsteal_uring::{opcode, Ring};
    ///
    /// let mut ring = Ring::new(4)?;
    /// // SAFETY: NOPs reference no memory; no other thread uses this ring.
    /// unsafe {
    ///     ring.push(&opcode::nop().with_user_data(1)).unwrap();
    ///     ring.push(&opcode::nop().with_user_data(2)).unwrap();
    ///     let mut taken = Vec::new();
    ///     assert!(ring.withdraw_pending(&mut taken));
    ///     assert_eq!(taken.iter().map(|s| s.user_data).collect::<Vec<_>>(), [1, 2]);
    /// }
    /// assert_eq!(ring.submit()?, 0, "nothing left to submit");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Safety
    /// No other thread may enter this ring during the call (as for
    /// [`replace_last_pending`](Self::replace_last_pending)). The SQEs taken still point
    /// where they pointed; whatever they referenced is the caller's again.
    pub unsafe fn withdraw_pending(&mut self, out: &mut Vec<io_uring_sqe>) -> bool {
        if self.params.flags & IORING_SETUP_SQPOLL != 0 {
            return false;
        }
        // SAFETY: no SQPOLL thread; the caller guarantees no concurrent enter.
        unsafe { self.sq.withdraw_pending(out) };
        true
    }

    /// Submits every queued SQE without waiting; returns how many the kernel consumed. On an
    /// SQPOLL ring, how many were handed to the poller thread (woken if it slept), which
    /// reads them on its own time.
    #[inline]
    pub fn submit(&mut self) -> io::Result<u32> {
        self.submit_and_wait(0)
    }

    /// Submits every queued SQE and waits until at least `want` CQEs are ready; returns what
    /// [`submit`](Self::submit) does. If the kernel takes fewer SQEs than were queued (without
    /// `IORING_SETUP_SUBMIT_ALL`, an SQE that fails at submission ends the batch), it returns
    /// that count at once, without waiting: fewer than `want` CQEs may be ready then.
    ///
    /// `EINTR` restarts the wait. `EBUSY`/`EAGAIN` (the kernel cannot take more while
    /// completions are backed up, or could not allocate) are reported as
    /// `ErrorKind::WouldBlock`; the SQEs it did not consume stay queued, so callers reap what
    /// is ready and submit again.
    #[inline]
    pub fn submit_and_wait(&mut self, want: u32) -> io::Result<u32> {
        loop {
            match self.enter_getevents(want, None) {
                Ok((n, _)) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Submits queued SQEs and waits for `want` CQEs or until `timeout` passes, whichever is
    /// first, using `IORING_ENTER_EXT_ARG` (no timeout SQE is queued). `None` waits without a
    /// bound. Returns how the wait ended; `ETIME` is [`Wait::TimedOut`], not an error. A
    /// timeout over about 30 years waits 30 years.
    pub fn submit_and_wait_timeout(
        &mut self,
        want: u32,
        timeout: Option<Duration>,
    ) -> io::Result<Wait> {
        match self.enter_getevents(want, timeout) {
            Ok((_, wait)) => Ok(wait),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(Wait::Interrupted),
            Err(e) => Err(e),
        }
    }

    /// Enters the kernel once: publishes the SQ, submits, and (if `want > 0`, or to run
    /// deferred completion work and flush overflow) waits.
    #[inline]
    fn enter_getevents(&mut self, want: u32, timeout: Option<Duration>) -> io::Result<(u32, Wait)> {
        let to_submit = self.sq.publish();
        let sqpoll = self.params.flags & IORING_SETUP_SQPOLL != 0;
        if sqpoll {
            // The SQPOLL thread sets NEED_WAKEUP, then (after a full barrier) looks at the
            // tail once more before it sleeps. Our side stores the tail, then reads the flag:
            // without a full fence between, the load may pass the store, each side misses the
            // other, and the thread sleeps with our SQEs unread while we wait for their CQEs.
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        }
        let mut flags = 0;
        // Wake a sleeping poller only for SQEs it has not read: waking it to find nothing
        // would cost it a whole idle period of polling.
        if sqpoll && to_submit > 0 && self.sq.flags() & IORING_SQ_NEED_WAKEUP != 0 {
            flags |= IORING_ENTER_SQ_WAKEUP;
        }
        let must_get_events = want > 0
            || timeout.is_some()
            || self.params.flags & IORING_SETUP_DEFER_TASKRUN != 0
            || self.sq.flags() & (IORING_SQ_CQ_OVERFLOW | IORING_SQ_TASKRUN) != 0;
        if must_get_events {
            flags |= IORING_ENTER_GETEVENTS;
        }
        if sqpoll && flags == 0 {
            // The SQPOLL thread is awake and will pick the SQEs up by itself.
            return Ok((to_submit, Wait::Completed));
        }
        let submit_arg = if sqpoll { 0 } else { to_submit };
        if submit_arg == 0 && flags == 0 {
            return Ok((0, Wait::Completed));
        }
        // Capped: some kernels add the timeout to the current time without an overflow
        // check, so a timeout near `Duration::MAX` would end the wait at once with ETIME.
        let ts = timeout.map(|t| __kernel_timespec::from_duration(t.min(LONGEST_WAIT)));
        let arg = io_uring_getevents_arg {
            ts: ts.as_ref().map_or(0, |t| t as *const _ as u64),
            ..Default::default()
        };
        let (argp, argsz) = if timeout.is_some() {
            if self.params.features & IORING_FEAT_EXT_ARG == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "io_uring_enter with a timeout needs IORING_FEAT_EXT_ARG (Linux 5.11)",
                ));
            }
            flags |= IORING_ENTER_EXT_ARG;
            (
                &arg as *const io_uring_getevents_arg as *const libc::c_void,
                std::mem::size_of_val(&arg),
            )
        } else {
            (std::ptr::null(), 0)
        };
        // SAFETY: `arg` and `ts` live on this frame for the duration of the syscall; the SQEs
        // being submitted were pushed under `push`'s contract.
        let (target, registered) = self.enter_target();
        // SAFETY: as above; `target` names this ring (a registered slot is this thread's:
        // `register_ring_fd`'s contract).
        let ret = unsafe {
            sys::io_uring_enter(target, submit_arg, want, flags | registered, argp, argsz)
        };
        match ret {
            // The kernel answers an SQPOLL ring with the count it was given: `submit_arg`, 0.
            Ok(_) if sqpoll => Ok((to_submit, Wait::Completed)),
            Ok(n) => Ok((n, Wait::Completed)),
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => Ok((0, Wait::TimedOut)),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EBUSY) | Some(libc::EAGAIN)) => {
                // The kernel could not accept more work while CQEs are backed up (or could
                // not allocate). If CQEs are ready, let the caller reap them first.
                Err(io::Error::new(io::ErrorKind::WouldBlock, e))
            }
            Err(e) => Err(e),
        }
    }

    /// Flushes completions the kernel holds back (CQ overflow, deferred task work) into the CQ
    /// without waiting.
    pub fn flush_completions(&mut self) -> io::Result<()> {
        let (target, registered) = self.enter_target();
        loop {
            // SAFETY: no argument pointer; submits nothing; `target` names this ring.
            match unsafe {
                sys::io_uring_enter(
                    target,
                    0,
                    0,
                    IORING_ENTER_GETEVENTS | registered,
                    std::ptr::null(),
                    0,
                )
            } {
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if matches!(e.raw_os_error(), Some(libc::EBUSY) | Some(libc::EAGAIN)) => {
                    return Ok(())
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// CQEs ready to be reaped.
    #[inline]
    pub fn cq_ready(&self) -> u32 {
        self.cq.ready()
    }

    /// Reaps the oldest ready CQE.
    #[inline]
    pub fn pop_cqe(&mut self) -> Option<io_uring_cqe> {
        self.cq.pop()
    }

    /// Reaps up to `out.len()` ready CQEs into `out`; returns how many.
    #[inline]
    pub fn reap(&mut self, out: &mut [io_uring_cqe]) -> usize {
        self.cq.copy_into(out)
    }

    /// `IORING_REGISTER_ENABLE_RINGS`: enables a ring created with `R_DISABLED`. With
    /// `SINGLE_ISSUER`, the calling thread becomes the only one allowed to submit.
    pub fn enable(&self) -> io::Result<()> {
        // SAFETY: ENABLE_RINGS takes no argument.
        unsafe {
            sys::io_uring_register(self.fd(), IORING_REGISTER_ENABLE_RINGS, std::ptr::null(), 0)
        }
        .map(drop)
    }
}
