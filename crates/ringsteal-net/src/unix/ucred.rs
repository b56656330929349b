//! [`UCred`]: the credentials of the process at the other end of a Unix stream, as tokio's.

/// The process at the other end of a [`UnixStream`](super::UnixStream): its user, group and
/// process ids when it connected (or made the pair), from `SO_PEERCRED`, as tokio's `UCred`.
///
/// ```
/// let (a, _b) = ringsteal_net::UnixStream::pair().unwrap();
/// let cred = a.peer_cred().unwrap();
/// // SAFETY: getuid and getpid cannot fail and take no arguments.
/// let (uid, pid) = unsafe { (libc::getuid(), libc::getpid()) };
/// assert_eq!((cred.uid(), cred.pid()), (uid, Some(pid)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UCred {
    pid: Option<libc::pid_t>,
    uid: libc::uid_t,
    gid: libc::gid_t,
}

impl UCred {
    pub(crate) fn from_raw(cred: libc::ucred) -> Self {
        Self {
            // 0: a peer in another pid namespace the kernel cannot name here.
            pid: (cred.pid != 0).then_some(cred.pid),
            uid: cred.uid,
            gid: cred.gid,
        }
    }

    /// The peer's user id.
    pub fn uid(&self) -> libc::uid_t {
        self.uid
    }

    /// The peer's group id.
    pub fn gid(&self) -> libc::gid_t {
        self.gid
    }

    /// The peer's process id, if the kernel could give one (`None` for a process it cannot
    /// name in this pid namespace).
    pub fn pid(&self) -> Option<libc::pid_t> {
        self.pid
    }
}
