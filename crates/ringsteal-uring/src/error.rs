//! Why a ring could not be created, in words that name the cause and the fix.
//!
//! Owns: the mapping from the errno values of `io_uring_setup` (and of a new ring's first
//! `io_uring_enter` and `io_uring_register`, which a sandbox may refuse on their own) to
//! [`SetupError`]. May not: retry or
//! fall back; that is the caller's choice (the runtime retries with fewer setup flags on
//! `EINVAL`).

use std::fmt;
use std::io;

/// Why `io_uring_setup` (or mapping the rings) failed.
///
/// The `Display` text says what the cause is and how to fix it, because the person reading it
/// is usually deploying, not developing:
///
/// ```
/// use ringsteal_uring::{SetupError, Unavailable};
///
/// let err = SetupError::from_errno(libc::EPERM, 0, 256);
/// assert!(matches!(err.cause(), Unavailable::Refused { .. }));
/// assert!(err.to_string().contains("seccomp"));
/// let io: std::io::Error = err.into();
/// assert_eq!(io.kind(), std::io::ErrorKind::PermissionDenied);
/// ```
#[derive(Debug, Clone)]
pub struct SetupError {
    errno: i32,
    flags: u32,
    entries: u32,
    cause: Unavailable,
    /// The system call that failed: `io_uring_setup` unless [`in_call`](Self::in_call) said
    /// otherwise (the first enter or registration of a new ring, which a seccomp filter or a
    /// sandbox can refuse on its own).
    call: &'static str,
}

/// The cause of a [`SetupError`], for a program that reacts to each (the error's `Display`
/// already names the cause and its fix).
///
/// ```
/// use ringsteal_uring::{SetupError, Unavailable};
///
/// let err = SetupError::from_errno(libc::ENOMEM, 0, 256);
/// match err.cause() {
///     Unavailable::OutOfMemory { memlock } => println!("RLIMIT_MEMLOCK is {memlock:?}: {err}"),
///     other => panic!("ENOMEM is out of memory, not {other:?}"),
/// }
/// assert_eq!(*SetupError::from_errno(libc::ENOSYS, 0, 256).cause(), Unavailable::NotImplemented);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unavailable {
    /// `ENOSYS`: the kernel has no io_uring (older than 5.1, or built without it).
    NotImplemented,
    /// `EPERM`: refused by `kernel.io_uring_disabled` or by a seccomp filter.
    Refused {
        /// The value of `/proc/sys/kernel/io_uring_disabled`, if it could be read.
        sysctl: Option<u32>,
    },
    /// `ENOMEM`: locked memory (`RLIMIT_MEMLOCK`) or kernel memory ran out.
    OutOfMemory {
        /// The soft `RLIMIT_MEMLOCK` in bytes (`None` = unlimited or unreadable).
        memlock: Option<u64>,
    },
    /// `EMFILE`/`ENFILE`: no file descriptor was available for the ring.
    TooManyFiles,
    /// `EINVAL`: this kernel rejects these setup flags or entry counts.
    InvalidArguments,
    /// Setup flags this binding cannot drive (outside
    /// [`SUPPORTED_SETUP_FLAGS`](crate::SUPPORTED_SETUP_FLAGS)); the kernel was not asked.
    UnsupportedFlags {
        /// The unsupported flags that were requested.
        flags: u32,
    },
    /// Any other errno.
    Other,
}

impl SetupError {
    /// Classifies an errno from `io_uring_setup` called with `flags` and `entries`.
    pub fn from_errno(errno: i32, flags: u32, entries: u32) -> Self {
        let cause = match errno {
            libc::ENOSYS => Unavailable::NotImplemented,
            libc::EPERM | libc::EACCES => Unavailable::Refused {
                sysctl: read_io_uring_disabled(),
            },
            libc::ENOMEM => Unavailable::OutOfMemory {
                memlock: read_memlock(),
            },
            libc::EMFILE | libc::ENFILE => Unavailable::TooManyFiles,
            libc::EINVAL => Unavailable::InvalidArguments,
            _ => Unavailable::Other,
        };
        Self {
            errno,
            flags,
            entries,
            cause,
            call: "io_uring_setup",
        }
    }

    /// The same error, reported as a failure of system call `call` (`io_uring_enter`,
    /// `io_uring_register`) rather than of `io_uring_setup`.
    ///
    /// ```
    /// use ringsteal_uring::SetupError;
    ///
    /// let err = SetupError::from_errno(libc::EPERM, 0, 8).in_call("io_uring_enter");
    /// assert!(err.to_string().contains("io_uring_enter returned EPERM"));
    /// ```
    pub fn in_call(mut self, call: &'static str) -> Self {
        self.call = call;
        self
    }

    /// Setup flags `unsupported` (among `flags`) that this binding cannot drive.
    pub(crate) fn unsupported_flags(unsupported: u32, flags: u32, entries: u32) -> Self {
        Self {
            errno: libc::EINVAL,
            flags,
            entries,
            cause: Unavailable::UnsupportedFlags { flags: unsupported },
            call: "io_uring_setup",
        }
    }

    /// Classifies an `io::Error` from setup (or from mapping the rings).
    pub fn from_io(err: &io::Error, flags: u32, entries: u32) -> Self {
        Self::from_errno(err.raw_os_error().unwrap_or(libc::EIO), flags, entries)
    }

    /// The raw errno.
    pub fn errno(&self) -> i32 {
        self.errno
    }

    /// The setup flags that were requested.
    pub fn flags(&self) -> u32 {
        self.flags
    }

    /// What went wrong.
    pub fn cause(&self) -> &Unavailable {
        &self.cause
    }

    /// True if the kernel rejected the flags or sizes (so fewer flags may work).
    pub fn is_invalid_arguments(&self) -> bool {
        self.cause == Unavailable::InvalidArguments
    }
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let call = self.call;
        match &self.cause {
            Unavailable::NotImplemented if call == "io_uring_setup" => write!(
                f,
                "io_uring is not available: io_uring_setup returned ENOSYS, so this kernel is \
                 older than 5.1 or was built without CONFIG_IO_URING. ringsteal needs Linux \
                 5.15 or newer with io_uring enabled"
            ),
            Unavailable::NotImplemented => write!(
                f,
                "io_uring is not available: {call} returned ENOSYS although io_uring_setup \
                 worked, so a sandbox (gVisor, a seccomp profile that answers ENOSYS) hides \
                 it. Fix: allow io_uring_setup, io_uring_enter and io_uring_register"
            ),
            Unavailable::Refused { sysctl: Some(v) } if *v > 0 => write!(
                f,
                "io_uring is disabled: {call} returned EPERM and \
                 kernel.io_uring_disabled = {v} ({}). Fix: `sysctl -w \
                 kernel.io_uring_disabled=0` (or, for value 1, add this user to the group in \
                 kernel.io_uring_group)",
                if *v == 1 {
                    "only allowed for the io_uring_group"
                } else {
                    "off for everyone"
                }
            ),
            Unavailable::Refused { .. } => write!(
                f,
                "io_uring is blocked: {call} returned EPERM while \
                 kernel.io_uring_disabled allows it, so a seccomp filter refuses the syscall \
                 (container runtimes such as Docker and Kubernetes block io_uring by default). \
                 Fix: run with a seccomp profile that allows io_uring_setup, io_uring_enter \
                 and io_uring_register"
            ),
            Unavailable::OutOfMemory { memlock } => {
                let limit = match memlock {
                    Some(b) => format!("{} KiB", b / 1024),
                    None => "unknown".to_string(),
                };
                write!(
                    f,
                    "{call} returned ENOMEM for a ring of {} entries: the rings need \
                     locked memory and RLIMIT_MEMLOCK is {limit} (on many kernels rings \
                     count against it for a user without CAP_IPC_LOCK). Fix: raise the limit (`ulimit -l`, \
                     LimitMEMLOCK= in systemd, --ulimit memlock= in Docker) or use fewer or \
                     smaller rings",
                    self.entries
                )
            }
            Unavailable::TooManyFiles => write!(
                f,
                "{call} failed: no file descriptor is available for the ring \
                 (EMFILE/ENFILE). Fix: raise the open-file limit (`ulimit -n`) or close \
                 descriptors"
            ),
            Unavailable::InvalidArguments => write!(
                f,
                "{call} returned EINVAL for setup flags {:#x} and {} entries: this \
                 kernel does not accept that combination (retry with fewer flags)",
                self.flags, self.entries
            ),
            Unavailable::UnsupportedFlags { flags } => {
                let names: Vec<String> = (0..32)
                    .map(|bit| 1u32 << bit)
                    .filter(|bit| flags & bit != 0)
                    .map(|bit| {
                        crate::abi::SETUP_FLAG_NAMES
                            .iter()
                            .find(|(f, _)| *f == bit)
                            .map_or_else(|| format!("{bit:#x}"), |(_, n)| (*n).to_string())
                    })
                    .collect();
                write!(
                    f,
                    "ringsteal-uring cannot drive rings set up with IORING_SETUP_{}: its SQ and \
                     CQ code handles 64-byte SQEs and 16-byte CQEs in rings it maps itself and \
                     reaches through a descriptor",
                    names.join(" | IORING_SETUP_")
                )
            }
            Unavailable::Other => write!(
                f,
                "{call} failed: {}",
                io::Error::from_raw_os_error(self.errno)
            ),
        }
    }
}

impl std::error::Error for SetupError {}

impl From<SetupError> for io::Error {
    fn from(err: SetupError) -> Self {
        let kind = match err.cause {
            Unavailable::NotImplemented => io::ErrorKind::Unsupported,
            Unavailable::Refused { .. } => io::ErrorKind::PermissionDenied,
            Unavailable::OutOfMemory { .. } => io::ErrorKind::OutOfMemory,
            Unavailable::InvalidArguments | Unavailable::UnsupportedFlags { .. } => {
                io::ErrorKind::InvalidInput
            }
            Unavailable::TooManyFiles | Unavailable::Other => {
                return io::Error::new(io::Error::from_raw_os_error(err.errno).kind(), err)
            }
        };
        io::Error::new(kind, err)
    }
}

fn read_io_uring_disabled() -> Option<u32> {
    std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn read_memlock() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the valid, owned `lim`.
    let ret = unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) };
    (ret == 0 && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur)
}
