//! [`Features`]: what this kernel's io_uring can do, found by asking it.
//!
//! Owns: feature detection: `params.features` of a fresh ring, `IORING_REGISTER_PROBE`, a
//! trial setup per setup flag, and trial operations for what neither reports (multishot
//! accept/recv, provided-buffer rings, ring-less MSG_RING). Never reads `uname`.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::abi::*;
use crate::buf_ring::BufRing;
use crate::error::{SetupError, Unavailable};
use crate::msg_ring::send_msg_ring;
use crate::opcode;
use crate::probe::Probe;
use crate::ring::{Ring, RingBuilder};

/// What this kernel's io_uring supports.
///
/// ```
/// use ringsteal_uring::{abi::IORING_OP_NOP, Features};
///
/// let f = Features::get()?;
/// assert!(f.opcode_supported(IORING_OP_NOP));
/// println!("MSG_RING: {}", f.msg_ring());
/// # Ok::<(), ringsteal_uring::SetupError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Features {
    features: u32,
    setup_flags: u32,
    probe: Probe,
    multishot_accept: bool,
    multishot_recv: bool,
    pbuf_ring: bool,
    send_msg_ring: bool,
}

impl Features {
    /// Detects the features once per process and caches the answer.
    ///
    /// Only an answer that cannot change is cached: the features, or an error that will
    /// recur (`ENOSYS`: no io_uring; `EPERM`: refused by the sysctl or a seccomp filter). A
    /// detection that ran out of descriptors or memory (`EMFILE`, `ENFILE`, `ENOMEM`) returns
    /// that error and is tried again by the next call.
    pub fn get() -> Result<&'static Features, SetupError> {
        static CACHE: OnceLock<Result<Features, SetupError>> = OnceLock::new();
        static DETECTING: Mutex<()> = Mutex::new(());
        if let Some(answer) = CACHE.get() {
            return answer.as_ref().map_err(Clone::clone);
        }
        // One detection at a time: callers that waited take the answer it cached.
        let _one = DETECTING.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(answer) = CACHE.get() {
            return answer.as_ref().map_err(Clone::clone);
        }
        match Features::detect() {
            Err(e) if !is_permanent(&e) => Err(e),
            answer => CACHE.get_or_init(|| answer).as_ref().map_err(Clone::clone),
        }
    }

    /// Detects the features now (creates a few short-lived rings and sockets).
    ///
    /// A trial the kernel refuses (`EINVAL`, or `EPERM` for an SQPOLL ring without the
    /// privilege) reports its feature missing; a trial that could not run for want of
    /// descriptors or memory fails the detection instead, rather than report a feature
    /// missing that the kernel has.
    pub fn detect() -> Result<Features, SetupError> {
        let mut ring = Ring::new(8)?;
        first_enter(&mut ring)?;
        let probe = ring
            .probe()
            .map_err(|e| SetupError::from_io(&e, 0, 8).in_call("io_uring_register"))?;
        let mut setup_flags = 0;
        for (flag, _) in SETUP_FLAG_NAMES {
            if setup_flag_works(*flag)? {
                setup_flags |= flag;
            }
        }
        let pbuf_ring = judge(BufRing::new(&ring, 0, 2, 64).map(drop))?;
        let multishot_accept =
            probe.is_supported(IORING_OP_ACCEPT) && trial_multishot_accept(&mut ring)?;
        let multishot_recv = pbuf_ring && trial_multishot_recv(&mut ring)?;
        let send_msg_ring =
            probe.is_supported(IORING_OP_MSG_RING) && trial_send_msg_ring(&mut ring)?;
        Ok(Features {
            features: ring.features(),
            setup_flags,
            probe,
            multishot_accept,
            multishot_recv,
            pbuf_ring,
            send_msg_ring,
        })
    }

    /// The raw `IORING_FEAT_*` bits.
    pub fn feature_bits(&self) -> u32 {
        self.features
    }

    /// True if the kernel reports `IORING_FEAT_*` bit `feature`.
    pub fn has_feature(&self, feature: u32) -> bool {
        self.features & feature == feature
    }

    /// The `IORING_SETUP_*` flags a trial setup accepted (each with what it depends on).
    pub fn setup_flags(&self) -> u32 {
        self.setup_flags
    }

    /// True if a ring can be set up with `flag` (plus the flags it requires).
    pub fn setup_flag_accepted(&self, flag: u32) -> bool {
        self.setup_flags & flag == flag
    }

    /// False for the setup flags detection does not try (`NO_MMAP`, `REGISTERED_FD_ONLY`:
    /// both need ring memory supplied by the caller, which this binding does not do).
    pub fn setup_flag_tried(&self, flag: u32) -> bool {
        flag & (IORING_SETUP_NO_MMAP | IORING_SETUP_REGISTERED_FD_ONLY) == 0
    }

    /// The opcode probe.
    pub fn probe(&self) -> &Probe {
        &self.probe
    }

    /// True if the kernel implements `opcode`.
    pub fn opcode_supported(&self, opcode: u8) -> bool {
        self.probe.is_supported(opcode)
    }

    /// `IORING_OP_MSG_RING` (5.18).
    pub fn msg_ring(&self) -> bool {
        self.probe.is_supported(IORING_OP_MSG_RING)
    }

    /// `IORING_REGISTER_SEND_MSG_RING`: MSG_RING from a thread without a ring (6.13).
    pub fn send_msg_ring(&self) -> bool {
        self.send_msg_ring
    }

    /// Multishot accept (5.19), tried on a loopback listener.
    pub fn multishot_accept(&self) -> bool {
        self.multishot_accept
    }

    /// Multishot recv with provided buffers (6.0), tried on a socket pair.
    pub fn multishot_recv(&self) -> bool {
        self.multishot_recv
    }

    /// `IORING_REGISTER_PBUF_RING` (5.19).
    pub fn pbuf_ring(&self) -> bool {
        self.pbuf_ring
    }

    /// `SINGLE_ISSUER | DEFER_TASKRUN` (6.1).
    pub fn defer_taskrun(&self) -> bool {
        self.setup_flag_accepted(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN)
    }

    /// `COOP_TASKRUN | TASKRUN_FLAG` (5.19).
    pub fn coop_taskrun(&self) -> bool {
        self.setup_flag_accepted(IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG)
    }

    /// `IOSQE_CQE_SKIP_SUCCESS` (5.17).
    pub fn cqe_skip(&self) -> bool {
        self.has_feature(IORING_FEAT_CQE_SKIP)
    }

    /// `IORING_ENTER_EXT_ARG` timeouts (5.11).
    pub fn ext_arg(&self) -> bool {
        self.has_feature(IORING_FEAT_EXT_ARG)
    }
}

/// An error that detecting again will meet again: no io_uring, or io_uring refused.
fn is_permanent(e: &SetupError) -> bool {
    matches!(
        e.cause(),
        Unavailable::NotImplemented | Unavailable::Refused { .. }
    )
}

/// Whether a trial ran out of descriptors or memory: it says nothing about the kernel.
fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM)
    ) || e.kind() == io::ErrorKind::OutOfMemory
}

/// A trial's outcome: `Ok(true)` if it worked, else as [`refused`].
fn judge(outcome: io::Result<()>) -> Result<bool, SetupError> {
    outcome.map_or_else(refused, |()| Ok(true))
}

/// A trial that failed with `e`: the kernel refused the feature (`Ok(false)`; `EINVAL`
/// mostly, `EPERM` for an unprivileged SQPOLL ring on old kernels), unless the trial ran out
/// of descriptors or memory, which says nothing about the kernel and fails the detection.
fn refused(e: io::Error) -> Result<bool, SetupError> {
    if !is_transient(&e) {
        return Ok(false);
    }
    // A registration's ENOMEM comes back with a hint about RLIMIT_MEMLOCK, no errno.
    let errno = e.raw_os_error().unwrap_or(libc::ENOMEM);
    Err(SetupError::from_errno(errno, 0, 0))
}

/// [`refused`] for a ring that could not be set up, judged by its errno: the conversion of
/// a [`SetupError`] into `io::Error` keeps only a kind, and `EMFILE` and `ENFILE` have none,
/// so a descriptor shortfall would read as the kernel refusing the feature (and be cached as
/// that for good).
fn refused_setup(e: &SetupError) -> Result<bool, SetupError> {
    refused(io::Error::from_raw_os_error(e.errno()))
}

/// Tries a ring with `flag` and the flags it cannot be used without.
fn setup_flag_works(flag: u32) -> Result<bool, SetupError> {
    let builder = match flag {
        IORING_SETUP_SQ_AFF => RingBuilder::new(2).sqpoll(10).sqpoll_cpu(0),
        IORING_SETUP_SQPOLL => RingBuilder::new(2).sqpoll(10),
        IORING_SETUP_CQSIZE => RingBuilder::new(2).cq_entries(8),
        IORING_SETUP_TASKRUN_FLAG => RingBuilder::new(2).coop_taskrun().taskrun_flag(),
        IORING_SETUP_DEFER_TASKRUN => RingBuilder::new(2).single_issuer().defer_taskrun(),
        IORING_SETUP_HYBRID_IOPOLL => RingBuilder::new(2).iopoll().flags(flag),
        IORING_SETUP_ATTACH_WQ => {
            let base = match Ring::new(2) {
                Ok(base) => base,
                Err(e) => return refused_setup(&e),
            };
            return judge(RingBuilder::new(2).attach_wq(base.fd()).kernel_accepts());
        }
        // Both need memory supplied by the caller; this binding does not use them.
        IORING_SETUP_NO_MMAP | IORING_SETUP_REGISTERED_FD_ONLY => return Ok(false),
        _ => RingBuilder::new(2).flags(flag),
    };
    // `build` refuses what this binding cannot drive (SQE128, CQE32): ask the kernel alone.
    judge_flag(flag, builder.kernel_accepts())
}

/// The verdict on setup flag `flag` from the kernel's answer to a ring that asked for it.
fn judge_flag(flag: u32, outcome: io::Result<()>) -> Result<bool, SetupError> {
    if matches!(flag, IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF) {
        if let Err(e) = &outcome {
            if sqpoll_thread_refused(e.raw_os_error()) {
                return Ok(true);
            }
        }
    }
    judge(outcome).map_err(|e| SetupError::from_errno(e.errno(), flag, 2))
}

/// `EAGAIN` from an SQPOLL ring's setup: the kernel took the flags but could not start the
/// poller thread (`RLIMIT_NPROC`, a pids cgroup full). That says the kernel has SQPOLL, and a
/// later ring may get its thread; caching it as "no SQPOLL" would never ask again. (A ring
/// that is refused its poller later falls back to a plain ring: ADR-0018.)
fn sqpoll_thread_refused(errno: Option<i32>) -> bool {
    errno == Some(libc::EAGAIN)
}

/// Waits up to a second for the CQEs with the `wanted` user_data values, discarding others,
/// and returns the last `res` seen for each (`None` if it never arrived). All wanted CQEs are
/// collected in one pass: waiting for them one at a time would throw away a CQE that arrives
/// before the one being waited for, and then wait the full second for it.
fn wait_for<const N: usize>(ring: &mut Ring, wanted: [u64; N]) -> [Option<i32>; N] {
    let mut res = [None; N];
    for _ in 0..8 {
        while let Some(cqe) = ring.pop_cqe() {
            if let Some(i) = wanted.iter().position(|w| *w == cqe.user_data) {
                res[i] = Some(cqe.res);
            }
        }
        if res.iter().all(Option::is_some) {
            break;
        }
        if ring
            .submit_and_wait_timeout(1, Some(std::time::Duration::from_millis(125)))
            .is_err()
        {
            break;
        }
    }
    res
}

/// Arms a multishot accept on a loopback listener, then cancels it: `-ECANCELED` (or a
/// still-armed request) means the kernel accepted the multishot flag; `-EINVAL` means not.
fn trial_multishot_accept(ring: &mut Ring) -> Result<bool, SetupError> {
    // A Unix listener with a name the kernel picks, or failing that a loopback TCP one: the
    // trial must not read a listener it could not make (loopback down in a fresh network
    // namespace, a policy that refuses abstract names) as the kernel lacking multishot
    // accept, which would be cached for good. The kernel's accept path is the same for both.
    let listener: OwnedFd = match autobound_unix_listener() {
        Ok(listener) => listener,
        Err(_) => match std::net::TcpListener::bind("127.0.0.1:0") {
            Ok(listener) => listener.into(),
            Err(e) => return refused(e),
        },
    };
    // SAFETY: the request names only the listener's descriptor, no memory of ours; the
    // listener stays open while `arm_then_cancel` waits for the cancel's completion, and if
    // that wait gives up, closing it later is safe (the kernel holds its own reference to the
    // socket while a request is armed).
    if unsafe {
        ring.push(&opcode::accept_multishot(listener.as_raw_fd(), 0).with_user_data(ACCEPT_TRIAL))
    }
    .is_err()
    {
        return Ok(false);
    }
    arm_then_cancel(ring, ACCEPT_TRIAL)
}

/// A listening Unix stream socket bound with an address of only its family, so that the
/// kernel gives it a fresh abstract name (autobind): no name of ours can collide with another
/// process's, in this namespace or a container sharing it.
fn autobound_unix_listener() -> io::Result<OwnedFd> {
    // SAFETY: plain system call; a non-negative result is a new descriptor nobody owns.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above: owned from here on.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let family = libc::AF_UNIX as libc::sa_family_t;
    // SAFETY: `family` is a valid address of the length given (a `sockaddr_un` cut after its
    // family, which is what asks for autobind) and outlives the call.
    let bound = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&family as *const libc::sa_family_t).cast(),
            std::mem::size_of::<libc::sa_family_t>() as libc::socklen_t,
        )
    };
    // SAFETY: plain system call on the descriptor `fd` owns.
    if bound != 0 || unsafe { libc::listen(fd.as_raw_fd(), 1) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

/// Arms a multishot recv with a provided-buffer ring on a socket pair, then cancels it.
fn trial_multishot_recv(ring: &mut Ring) -> Result<bool, SetupError> {
    let bufs = match BufRing::new(ring, 1, 2, 64) {
        Ok(bufs) => bufs,
        Err(e) => return refused(e),
    };
    let mut fds = [0; 2];
    // SAFETY: socketpair writes two fds into the owned array.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    } != 0
    {
        return refused(io::Error::last_os_error());
    }
    // SAFETY: both fds are fresh and owned from here on.
    let (a, _b) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: the fd and the buffer ring outlive the request: we wait for its final CQE, or
    // leak the buffer ring if it did not come.
    if unsafe {
        ring.push(
            &opcode::recv_multishot(a.as_raw_fd(), bufs.group(), 0).with_user_data(RECV_TRIAL),
        )
    }
    .is_err()
    {
        return Ok(false);
    }
    let armed = arm_then_cancel(ring, RECV_TRIAL);
    if !matches!(armed, Ok(true)) {
        // The request may still be armed: never free memory the kernel may pick and write.
        // The ring's descriptor may close, though (its teardown cancels the request).
        bufs.leak();
    }
    armed
}

/// Enters `ring` once, with a NOP, and waits for it: a seccomp filter or a sandbox can allow
/// `io_uring_setup` and refuse `io_uring_enter`, and a runtime built on such rings would
/// never see a completion. Any error fails the detection, named as the enter's (nothing
/// else is queued, so no error of a fresh ring's first enter means the kernel is busy).
fn first_enter(ring: &mut Ring) -> Result<(), SetupError> {
    // SAFETY: a NOP references no memory.
    let pushed = unsafe { ring.push(&opcode::nop().with_user_data(ENTER_TRIAL)) };
    debug_assert!(pushed.is_ok(), "a fresh ring has room for one SQE");
    ring.submit_and_wait(1)
        .map_err(|e| SetupError::from_io(&e, 0, 8).in_call("io_uring_enter"))?;
    while ring.pop_cqe().is_some() {}
    Ok(())
}

/// The user_data of the first enter's NOP.
const ENTER_TRIAL: u64 = 5;
/// The user_data of the multishot accept trial's request (its cancel's is one more).
const ACCEPT_TRIAL: u64 = 1;
/// The user_data of the multishot receive trial's request (its cancel's is one more): not
/// the accept trial's, whose late completions (a cancel that `wait_for` gave up on) may
/// still arrive on the same ring.
const RECV_TRIAL: u64 = 3;

/// Submits the armed request queued with user_data `id`, then cancels it (the cancel is
/// `id + 1`): `-ECANCELED` or a result means the kernel took the request's flags.
fn arm_then_cancel(ring: &mut Ring, id: u64) -> Result<bool, SetupError> {
    if let Err(e) = ring.submit() {
        return refused(e);
    }
    // An immediate failure (EINVAL: unknown flag) is already in the CQ. Other CQEs there are
    // an earlier trial's, completed late: not this verdict.
    while let Some(cqe) = ring.pop_cqe() {
        if cqe.user_data == id {
            return judge_res(cqe.res);
        }
    }
    // SAFETY: a cancel references no memory.
    if unsafe { ring.push(&opcode::cancel(id, 0).with_user_data(id + 1)) }.is_err() {
        return Ok(false);
    }
    let _ = ring.submit();
    let [res, _] = wait_for(ring, [id, id + 1]);
    Ok(matches!(res, Some(r) if r == -libc::ECANCELED || r >= 0))
}

/// An armed request's immediate result: `EINVAL` refuses the flag; running out of
/// descriptors or memory fails the detection; anything else means the flag was taken.
fn judge_res(res: i32) -> Result<bool, SetupError> {
    match res {
        r if r == -libc::EINVAL => Ok(false),
        r if r < 0 && is_transient(&io::Error::from_raw_os_error(-r)) => {
            Err(SetupError::from_errno(-r, 0, 0))
        }
        _ => Ok(true),
    }
}

/// Sends a ring-less MSG_RING to our own ring and looks for it.
fn trial_send_msg_ring(ring: &mut Ring) -> Result<bool, SetupError> {
    if let Err(e) = send_msg_ring(ring.fd(), 0, 0xfeed) {
        return refused(e);
    }
    Ok(wait_for(ring, [0xfeed])[0].is_some())
}

/// Reports that the io_uring syscalls are missing or refused, as an `io::Error`.
pub fn check_available() -> io::Result<()> {
    Features::get().map(drop).map_err(Into::into)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_that_ran_out_of_descriptors_fails_the_trial_rather_than_refusing_the_feature() {
        for errno in [libc::EMFILE, libc::ENFILE, libc::ENOMEM] {
            let e = SetupError::from_errno(errno, 0, 2);
            assert!(refused_setup(&e).is_err(), "errno {errno}");
        }
        let e = SetupError::from_errno(libc::EINVAL, 0, 2);
        assert_eq!(refused_setup(&e).ok(), Some(false));
    }

    #[test]
    fn an_sqpoll_ring_refused_its_thread_still_counts_as_sqpoll() {
        let answer = |errno| Err(io::Error::from_raw_os_error(errno));
        for flag in [IORING_SETUP_SQPOLL, IORING_SETUP_SQ_AFF] {
            assert_eq!(judge_flag(flag, answer(libc::EAGAIN)).ok(), Some(true));
            assert_eq!(judge_flag(flag, answer(libc::EINVAL)).ok(), Some(false));
            assert_eq!(judge_flag(flag, answer(libc::EPERM)).ok(), Some(false));
            assert!(
                judge_flag(flag, answer(libc::EMFILE)).is_err(),
                "out of descriptors"
            );
            assert_eq!(judge_flag(flag, Ok(())).ok(), Some(true));
        }
        // Other flags: EAGAIN is no thread of theirs, and not taken as a yes.
        assert_eq!(
            judge_flag(IORING_SETUP_CQSIZE, answer(libc::EAGAIN)).ok(),
            Some(false)
        );
    }

    #[test]
    fn a_trial_judges_its_own_completion_not_one_left_by_an_earlier_trial() {
        let mut ring = Ring::new(8).unwrap();
        // A completion of another request is in the CQ already (an earlier trial's, late).
        // SAFETY: a NOP references no memory.
        unsafe { ring.push(&opcode::nop().with_user_data(ACCEPT_TRIAL)) }.unwrap();
        ring.submit_and_wait(1).unwrap();
        // The trial's own request is refused: an opcode no kernel has.
        let mut refused = opcode::nop().with_user_data(RECV_TRIAL);
        refused.opcode = 250;
        // SAFETY: as above.
        unsafe { ring.push(&refused) }.unwrap();
        assert_eq!(arm_then_cancel(&mut ring, RECV_TRIAL).ok(), Some(false));
    }

    #[test]
    fn the_multishot_accept_trial_listens_on_a_name_the_kernel_picks() {
        use std::os::linux::net::SocketAddrExt;
        // Two probes at once get two names, both abstract, and each listens: a client can
        // connect to it by that name.
        let (a, b) = (
            autobound_unix_listener().unwrap(),
            autobound_unix_listener().unwrap(),
        );
        let name = |fd: &OwnedFd| {
            let l = std::os::unix::net::UnixListener::from(fd.try_clone().unwrap());
            l.local_addr()
                .unwrap()
                .as_abstract_name()
                .map(<[u8]>::to_vec)
        };
        let (na, nb) = (name(&a).expect("abstract"), name(&b).expect("abstract"));
        assert_ne!(na, nb);
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(&na).unwrap();
        std::os::unix::net::UnixStream::connect_addr(&addr).expect("it listens");
    }
}
