//! [`SharedFd`]: a file descriptor shared by its owner and the ops in flight on it, closed
//! only when the last of them lets go, so an op never acts on a reused descriptor number.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;

/// A reference-counted owned descriptor. Every op on it holds a clone until its last CQE.
///
/// ```
/// use ringsteal_rt::op::SharedFd;
/// use std::os::fd::AsRawFd;
///
/// let file = std::fs::File::open("/dev/null").unwrap();
/// let raw = file.as_raw_fd();
/// let fd = SharedFd::new(file.into());
/// assert_eq!(fd.as_raw_fd(), raw);
/// ```
#[derive(Clone, Debug)]
pub struct SharedFd {
    inner: Arc<OwnedFd>,
}

impl SharedFd {
    /// Takes ownership of `fd`.
    pub fn new(fd: OwnedFd) -> Self {
        Self {
            inner: Arc::new(fd),
        }
    }

    /// The descriptor, if no op (and no clone) holds it any more.
    pub fn try_unwrap(self) -> Result<OwnedFd, Self> {
        Arc::try_unwrap(self.inner).map_err(|inner| Self { inner })
    }

    /// Number of holders (the owner plus ops in flight plus clones).
    pub fn holders(&self) -> usize {
        Arc::strong_count(&self.inner)
    }
}

impl AsRawFd for SharedFd {
    fn as_raw_fd(&self) -> RawFd {
        self.inner.as_raw_fd()
    }
}
