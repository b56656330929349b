//! Helpers shared by the fs tests: the runtimes each behaviour runs under, a watchdog (a hang
//! guard, never synchronisation), scratch directories, side-by-side comparison of results
//! and errors with std's, and snapshots of directory trees.

#![allow(dead_code)]

use std::fmt::Debug;
use std::future::Future;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use ringsteal_rt::{Feature, Runtime, WakeMechanism};

/// How long one test may run before it is declared hung. Generous: only turns a hang into a
/// failure.
pub(crate) const HANG_GUARD: Duration = Duration::from_secs(60);

/// One way to build a runtime.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Config {
    pub(crate) shards: usize,
    pub(crate) wake: WakeMechanism,
    pub(crate) defer_taskrun: bool,
    pub(crate) coop_taskrun: bool,
    pub(crate) sqpoll: bool,
    /// A capability the runtime behaves as if the kernel lacked (its fallback is tested).
    pub(crate) without: Option<Feature>,
}

impl Config {
    pub(crate) const fn new(shards: usize) -> Self {
        Self {
            shards,
            wake: WakeMechanism::Auto,
            defer_taskrun: true,
            coop_taskrun: true,
            sqpoll: false,
            without: None,
        }
    }

    /// This configuration with every doorbell forced through the eventfd.
    pub(crate) const fn eventfd(mut self) -> Self {
        self.wake = WakeMechanism::EventFd;
        self
    }

    /// This configuration with plain rings: neither `DEFER_TASKRUN` nor `COOP_TASKRUN`.
    pub(crate) const fn plain(mut self) -> Self {
        self.defer_taskrun = false;
        self.coop_taskrun = false;
        self
    }

    /// This configuration with SQPOLL rings (a kernel poller per shard, idle after 1 ms).
    pub(crate) const fn sqpoll(mut self) -> Self {
        self.sqpoll = true;
        self
    }

    /// This configuration, behaving as if the kernel lacked `feature`.
    pub(crate) const fn without(mut self, feature: Feature) -> Self {
        self.without = Some(feature);
        self
    }

    pub(crate) fn build(&self) -> Runtime {
        let mut builder = Runtime::builder()
            .shards(self.shards)
            .wake(self.wake)
            .defer_taskrun(self.defer_taskrun)
            .coop_taskrun(self.coop_taskrun)
            .shutdown_timeout(Duration::from_secs(20));
        if self.sqpoll {
            builder = builder.sqpoll(Duration::from_millis(1));
        }
        if let Some(feature) = self.without {
            builder = builder.without_feature(feature);
        }
        builder
            .build()
            .unwrap_or_else(|e| panic!("building a runtime with {self:?}: {e}"))
    }
}

/// One and two shards, and two shards with each fallback the runtime has: eventfd wakes,
/// plain rings, SQPOLL rings.
pub(crate) const EVERY_MODE: [Config; 5] = [
    Config::new(1),
    Config::new(2),
    Config::new(2).eventfd(),
    Config::new(2).plain(),
    Config::new(2).sqpoll(),
];

/// Runs `f` on a fresh thread and fails the test if it has not returned within
/// [`HANG_GUARD`]. A panic in `f` is re-raised here.
pub(crate) fn watchdog<R: Send + 'static>(what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    struct DropSignal(mpsc::Sender<()>);
    impl Drop for DropSignal {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let thread = std::thread::Builder::new()
        .name(format!("test-{what}"))
        .spawn(move || {
            let _done = DropSignal(done_tx);
            f()
        })
        .expect("spawn the test thread");
    match done_rx.recv_timeout(HANG_GUARD) {
        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => {}
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: still running after {HANG_GUARD:?}: hung")
        }
    }
    match thread.join() {
        Ok(r) => r,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// What a test body gets: the shard it runs on and a fresh scratch directory of its own.
pub(crate) struct Ctx {
    pub(crate) shard: usize,
    pub(crate) shards: usize,
    pub(crate) dir: TempDir,
    /// The runtime's rings are SQPOLL rings.
    pub(crate) sqpoll: bool,
}

/// Runs `body` as a task on each shard of a runtime in each of [`EVERY_MODE`] (on all shards
/// of a runtime at once), each with its own scratch directory, under the watchdog.
pub(crate) fn on_every_shard<F, Fut>(tag: &'static str, body: F)
where
    F: Fn(Ctx) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + 'static,
{
    let body = Arc::new(body);
    for config in EVERY_MODE {
        let body = body.clone();
        on_every_shard_of(config, tag, move |ctx| body(ctx));
    }
}

/// As [`on_every_shard`], for one configuration.
pub(crate) fn on_every_shard_of<F, Fut>(config: Config, tag: &'static str, body: F)
where
    F: Fn(Ctx) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + 'static,
{
    let what = format!("{tag} {config:?}");
    watchdog(&what.clone(), move || {
        let rt = config.build();
        let handle = rt.handle();
        let body = Arc::new(body);
        rt.block_on(async move {
            let handles: Vec<_> = (0..config.shards)
                .map(|shard| {
                    let body = body.clone();
                    // Made on its shard and kept there: the body's future need not be Send.
                    handle.spawn_local_on(shard, move || async move {
                        assert_eq!(ringsteal_rt::current_shard(), Some(shard));
                        let ctx = Ctx {
                            shard,
                            shards: config.shards,
                            dir: TempDir::new(tag),
                            sqpoll: config.sqpoll,
                        };
                        body(ctx).await
                    })
                })
                .collect();
            for (shard, h) in handles.into_iter().enumerate() {
                if let Err(e) = h.await {
                    if e.is_panic() {
                        std::panic::resume_unwind(e.into_panic());
                    }
                    panic!("{what}: the task on shard {shard} did not finish: {e}");
                }
            }
        });
    });
}

/// A scratch directory, removed (with its contents) on drop.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("ringsteal-fs-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create a scratch directory");
        Self(path)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }

    pub(crate) fn join(&self, name: impl AsRef<Path>) -> PathBuf {
        self.0.join(name)
    }

    /// A fresh subdirectory.
    pub(crate) fn sub(&self, name: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::create_dir(&p).expect("create a subdirectory");
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Tests may leave directories without write or search permission.
        make_removable(&self.0);
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn make_removable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                make_removable(&e.path());
            }
        }
    }
}

/// Asserts that `ours` failed exactly as `std` did: the same `ErrorKind` and, where std's
/// error carries an errno, the same errno.
pub(crate) fn assert_same_error<T: Debug, U: Debug>(
    ours: io::Result<T>,
    std: io::Result<U>,
    what: &str,
) {
    let std_err = match std {
        Err(e) => e,
        Ok(v) => panic!("{what}: the std call succeeded ({v:?}); the test expects an error"),
    };
    let ours = match ours {
        Err(e) => e,
        Ok(v) => panic!("{what}: ringsteal succeeded ({v:?}) where std failed with {std_err}"),
    };
    assert_eq!(
        ours.kind(),
        std_err.kind(),
        "{what}: ringsteal's error `{ours}` is not std's `{std_err}`"
    );
    if let Some(errno) = std_err.raw_os_error() {
        assert_eq!(
            ours.raw_os_error(),
            Some(errno),
            "{what}: ringsteal's error `{ours}` is not std's `{std_err}`"
        );
    }
}

/// Asserts that both calls succeeded with equal values, or failed alike.
pub(crate) fn assert_same_result<T: Debug + PartialEq>(
    ours: io::Result<T>,
    std: io::Result<T>,
    what: &str,
) {
    match (ours, std) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{what}"),
        (ours, Err(e)) => assert_same_error(ours, Err::<(), _>(e), what),
        (Err(e), Ok(v)) => panic!("{what}: ringsteal failed with `{e}` where std gave {v:?}"),
    }
}

/// Asserts that both calls succeeded or failed alike, ignoring the values.
pub(crate) fn assert_same_outcome<T: Debug, U: Debug>(
    ours: &io::Result<T>,
    std: &io::Result<U>,
    what: &str,
) {
    match (ours, std) {
        (Ok(_), Ok(_)) => {}
        (Err(a), Err(b)) => {
            assert_eq!(a.kind(), b.kind(), "{what}: `{a}` vs std's `{b}`");
            if let Some(errno) = b.raw_os_error() {
                assert_eq!(
                    a.raw_os_error(),
                    Some(errno),
                    "{what}: `{a}` vs std's `{b}`"
                );
            }
        }
        (a, b) => panic!("{what}: ringsteal gave {a:?}, std gave {b:?}"),
    }
}

/// One entry of a directory tree, as std sees it.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Entry {
    pub(crate) path: PathBuf,
    pub(crate) kind: &'static str,
    pub(crate) mode: u32,
    pub(crate) nlink: u64,
    /// File contents, or a symlink's target.
    pub(crate) content: Vec<u8>,
}

/// Every entry under `root` (not following symlinks), relative to it, sorted.
pub(crate) fn snapshot(root: &Path) -> Vec<Entry> {
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<Entry>) {
    for e in std::fs::read_dir(dir).expect("read_dir in snapshot") {
        let e = e.unwrap();
        let path = e.path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let ft = meta.file_type();
        let (kind, content) = if ft.is_symlink() {
            let target = std::fs::read_link(&path).unwrap();
            ("symlink", target.into_os_string().into_encoded_bytes())
        } else if ft.is_dir() {
            ("dir", Vec::new())
        } else if ft.is_fifo() {
            ("fifo", Vec::new())
        } else {
            ("file", std::fs::read(&path).unwrap())
        };
        out.push(Entry {
            path: path.strip_prefix(root).unwrap().to_path_buf(),
            kind,
            mode: meta.mode() & 0o7777,
            nlink: if ft.is_dir() { 0 } else { meta.nlink() },
            content,
        });
        if ft.is_dir() {
            walk(root, &path, out);
        }
    }
}

/// `len` bytes of a pattern that does not repeat with any small period.
pub(crate) fn pattern(len: usize) -> Vec<u8> {
    let mut x: u32 = 0x9e37_79b9;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// A pipe as two std files: `(read end, write end)`, both blocking.
pub(crate) fn pipe() -> (std::fs::File, std::fs::File) {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", io::Error::last_os_error());
    // SAFETY: pipe2 succeeded: two new descriptors nobody else owns.
    let (rx, tx) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    (rx.into(), tx.into())
}
