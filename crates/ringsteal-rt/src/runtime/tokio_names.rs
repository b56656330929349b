//! tokio's names for [`Builder`] settings (ADR-0044), so that a ported
//! `tokio::runtime::Builder` chain compiles once its path is changed.

use std::time::Duration;

use super::Builder;

impl Builder {
    /// tokio's `Builder::new_multi_thread()`: [`Builder::new`], a shard per available CPU.
    ///
    /// A tokio chain, with its path changed:
    ///
    /// ```
    /// let rt = ringsteal_rt::Builder::new_multi_thread()
    ///     .worker_threads(2)
    ///     .enable_all()
    ///     .thread_name("svc")
    ///     .build()?;
    /// assert_eq!(rt.handle().shards(), 2);
    /// assert_eq!(rt.block_on(async { 6 * 7 }), 42);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn new_multi_thread() -> Self {
        Self::new()
    }

    /// tokio's `Builder::new_current_thread()`: one shard, the thread that calls
    /// `block_on`, which runs every task, as tokio's current-thread runtime does.
    ///
    /// ```
    /// let rt = ringsteal_rt::Builder::new_current_thread().enable_all().build()?;
    /// assert_eq!(rt.handle().shards(), 1);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn new_current_thread() -> Self {
        Self::new().shards(1)
    }

    /// tokio's `worker_threads(n)`: [`shards(n)`](Self::shards). The thread that calls
    /// `block_on` is one of the `n` (shard 0), where tokio's starts `n` workers beside it:
    /// the same number of threads running tasks.
    pub fn worker_threads(self, n: usize) -> Self {
        self.shards(n)
    }

    /// tokio's `enable_all()`: nothing to do. Every runtime has its I/O and its timers (and
    /// needs no driver switched on for either): kept so that a tokio chain compiles.
    pub fn enable_all(self) -> Self {
        self
    }

    /// tokio's `enable_io()`: nothing to do (see [`enable_all`](Self::enable_all)).
    pub fn enable_io(self) -> Self {
        self
    }

    /// tokio's `enable_time()`: nothing to do (see [`enable_all`](Self::enable_all)).
    pub fn enable_time(self) -> Self {
        self
    }

    /// tokio's `thread_keep_alive(d)`: [`blocking_keep_alive(d)`](Self::blocking_keep_alive),
    /// how long an idle blocking thread waits for work before it exits.
    pub fn thread_keep_alive(self, d: Duration) -> Self {
        self.blocking_keep_alive(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokio_names_set_what_ringsteal_names_set() {
        let d = Duration::from_millis(1234);
        let tokio = Builder::new_multi_thread()
            .worker_threads(3)
            .enable_all()
            .enable_io()
            .enable_time()
            .thread_keep_alive(d);
        let ours = Builder::new().shards(3).blocking_keep_alive(d);
        assert_eq!(format!("{tokio:?}"), format!("{ours:?}"));
        let current = Builder::new_current_thread();
        assert_eq!(
            format!("{current:?}"),
            format!("{:?}", Builder::new().shards(1))
        );
        assert_ne!(format!("{current:?}"), format!("{:?}", Builder::new()));
    }
}
