//! Helpers shared by the `op_*` tests: the runtime configurations each behaviour runs under, a
//! watchdog (a hang guard, never synchronisation), scratch directories, pipes and FIFOs, a
//! buffer that records when and where it is dropped, and a single hand-rolled poll.

#![allow(dead_code)]

use std::ffi::CString;
use std::future::Future;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::task::Poll;
use std::thread::ThreadId;
use std::time::Duration;

use ringsteal_rt::buf::{IoBuf, IoBufMut};
use ringsteal_rt::op::SharedFd;
use ringsteal_rt::{Runtime, RuntimeHandle, WakeMechanism};

/// How long a whole test body may run before it is declared hung. Generous: a passing test
/// finishes in well under a second; this only turns a hang into a failure.
pub(crate) const HANG_GUARD: Duration = Duration::from_secs(60);

/// The deadline put on waits inside a test (`Op::with_timeout`), as a hang guard only.
pub(crate) const OP_GUARD: Duration = Duration::from_secs(20);

/// One way to build a runtime.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Config {
    pub(crate) shards: usize,
    pub(crate) wake: WakeMechanism,
    pub(crate) defer_taskrun: bool,
    pub(crate) coop_taskrun: bool,
    pub(crate) sqpoll: bool,
}

impl Config {
    pub(crate) const fn new(shards: usize) -> Self {
        Self {
            shards,
            wake: WakeMechanism::Auto,
            defer_taskrun: true,
            coop_taskrun: true,
            sqpoll: false,
        }
    }

    /// This configuration with SQPOLL rings (a kernel poller per shard, idle after 1 ms).
    pub(crate) const fn sqpoll(mut self) -> Self {
        self.sqpoll = true;
        self
    }

    /// This configuration with every doorbell forced through the eventfd.
    pub(crate) const fn eventfd(mut self) -> Self {
        self.wake = WakeMechanism::EventFd;
        self
    }

    /// This configuration without `SINGLE_ISSUER | DEFER_TASKRUN` rings.
    pub(crate) const fn no_defer_taskrun(mut self) -> Self {
        self.defer_taskrun = false;
        self
    }

    /// This configuration with plain rings: neither `DEFER_TASKRUN` nor `COOP_TASKRUN` (the
    /// kernel interrupts a running shard to post completions).
    pub(crate) const fn plain(mut self) -> Self {
        self.defer_taskrun = false;
        self.coop_taskrun = false;
        self
    }

    pub(crate) fn build(&self) -> Runtime {
        self.builder()
            .build()
            .unwrap_or_else(|e| panic!("building a runtime with {self:?}: {e}"))
    }

    /// The builder [`build`](Self::build) uses, to adjust further.
    pub(crate) fn builder(&self) -> ringsteal_rt::Builder {
        let b = Runtime::builder()
            .shards(self.shards)
            .wake(self.wake)
            .defer_taskrun(self.defer_taskrun)
            .coop_taskrun(self.coop_taskrun)
            .shutdown_timeout(Duration::from_secs(20));
        if self.sqpoll {
            b.sqpoll(Duration::from_millis(1))
        } else {
            b
        }
    }
}

/// One and two shards, default settings.
pub(crate) const ONE_AND_TWO_SHARDS: [Config; 2] = [Config::new(1), Config::new(2)];

/// Two shards, with every wake and completion mode the runtime has.
pub(crate) const TWO_SHARD_MODES: [Config; 5] = [
    Config::new(2),
    Config::new(2).eventfd(),
    Config::new(2).no_defer_taskrun(),
    Config::new(2).plain(),
    Config::new(2).sqpoll(),
];

/// One and two shards, the eventfd and no-DEFER_TASKRUN fallbacks (alone and together), plain
/// rings, and SQPOLL rings.
pub(crate) const ALL_MODES: [Config; 8] = [
    Config::new(1),
    Config::new(2),
    Config::new(1).eventfd(),
    Config::new(2).eventfd(),
    Config::new(2).no_defer_taskrun(),
    Config::new(2).eventfd().no_defer_taskrun(),
    Config::new(2).plain(),
    Config::new(2).sqpoll(),
];

/// Runs `f` on a fresh thread and fails the test if it has not returned within
/// [`HANG_GUARD`]. A panic in `f` is re-raised here.
pub(crate) fn watchdog<R: Send + 'static>(what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let thread = std::thread::Builder::new()
        .name(format!("test-{what}"))
        .spawn(move || {
            // Signals on return and on unwind alike.
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

struct DropSignal(mpsc::Sender<()>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// Runs `body(shard)` as a task on each shard of a runtime built from `config` (all at once),
/// under the watchdog, and re-raises the first panic. The task is made on its shard and stays
/// there, so its future need not be `Send`.
pub(crate) fn on_every_shard<F, Fut>(config: Config, body: F)
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + 'static,
{
    let what = format!("{config:?}");
    watchdog(&what.clone(), move || {
        let rt = config.build();
        let handle = rt.handle();
        let body = Arc::new(body);
        rt.block_on(async move {
            let handles: Vec<_> = (0..config.shards)
                .map(|shard| {
                    let body = body.clone();
                    handle.spawn_local_on(shard, move || async move {
                        assert_eq!(ringsteal_rt::current_shard(), Some(shard));
                        body(shard).await
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

/// Polls `fut` exactly once from inside a task and reports what the poll gave.
pub(crate) async fn poll_once<F: Future + Unpin>(fut: &mut F) -> Poll<F::Output> {
    std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut *fut).poll(cx))).await
}

/// Polls `op` once (submitting it to this shard's ring) and lets the shard finish its tick,
/// which hands the queued SQE to the kernel. Fails if the op completed at once.
pub(crate) async fn submit<F: Future + Unpin>(op: &mut F) {
    assert!(
        poll_once(op).await.is_pending(),
        "the op completed on its first poll: the test needs it to stay in flight"
    );
    ringsteal_rt::yield_now().await;
}

/// A scratch directory, removed (with its contents) on drop.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("ringsteal-rt-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create a scratch directory");
        Self(path)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }

    pub(crate) fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A pipe: `(read end, write end)`, both blocking.
pub(crate) fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", io::Error::last_os_error());
    // SAFETY: pipe2 succeeded, so both are new descriptors owned by nobody else.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

/// A FIFO in `dir`, opened at both ends: `(read end, write end)`, both blocking. Nobody
/// writes to it unless the test does.
pub(crate) fn fifo(dir: &TempDir, name: &str) -> (OwnedFd, OwnedFd) {
    let path = dir.join(name);
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a valid C string.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(rc, 0, "mkfifo: {}", io::Error::last_os_error());
    // Open the read end non-blocking (opening a FIFO to read blocks until a writer comes),
    // then the write end (which now finds a reader), then make the read end blocking.
    let rx = open_raw(&c, libc::O_RDONLY | libc::O_NONBLOCK);
    let tx = open_raw(&c, libc::O_WRONLY);
    // SAFETY: F_SETFL on a descriptor we own.
    let rc = unsafe { libc::fcntl(rx.as_raw_fd(), libc::F_SETFL, 0) };
    assert_eq!(rc, 0, "fcntl: {}", io::Error::last_os_error());
    (rx, tx)
}

fn open_raw(path: &CString, flags: i32) -> OwnedFd {
    // SAFETY: `path` is a valid C string.
    let fd = unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC) };
    assert!(fd >= 0, "open: {}", io::Error::last_os_error());
    // SAFETY: a new descriptor owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// Writes all of `data` to `fd` (blocking).
pub(crate) fn write_fd(fd: &impl AsRawFd, data: &[u8]) {
    let mut done = 0;
    while done < data.len() {
        // SAFETY: the pointer and length describe the rest of `data`.
        let n = unsafe {
            libc::write(
                fd.as_raw_fd(),
                data[done..].as_ptr().cast(),
                data.len() - done,
            )
        };
        assert!(n > 0, "write: {}", io::Error::last_os_error());
        done += n as usize;
    }
}

/// A shared descriptor for an owned one.
pub(crate) fn shared(fd: OwnedFd) -> SharedFd {
    SharedFd::new(fd)
}

/// What a [`TrackedBuf`] saw when it was dropped.
#[derive(Clone, Debug)]
pub(crate) struct DropRecord {
    /// The buffer's label.
    pub(crate) label: usize,
    /// The shard whose thread dropped it (`None`: not a shard thread).
    pub(crate) shard: Option<usize>,
    /// The dropping thread.
    pub(crate) thread: ThreadId,
    /// `ops_completed` of every shard at that moment.
    pub(crate) ops_completed: Vec<u64>,
    /// `ops_cancelled` of every shard at that moment.
    pub(crate) ops_cancelled: Vec<u64>,
}

/// Watches the [`TrackedBuf`]s made from it: counts and records their drops and, if given a
/// pipe, writes one byte into it per drop so a task can await the drop with an op.
pub(crate) struct Probe {
    handle: RuntimeHandle,
    drops: AtomicUsize,
    records: Mutex<Vec<DropRecord>>,
    notify: Option<OwnedFd>,
}

impl Probe {
    pub(crate) fn new(handle: RuntimeHandle) -> Arc<Self> {
        Arc::new(Self {
            handle,
            drops: AtomicUsize::new(0),
            records: Mutex::new(Vec::new()),
            notify: None,
        })
    }

    /// A probe that writes a byte into the returned pipe at each drop.
    pub(crate) fn with_notify(handle: RuntimeHandle) -> (Arc<Self>, SharedFd) {
        let (rx, tx) = pipe();
        let probe = Arc::new(Self {
            handle,
            drops: AtomicUsize::new(0),
            records: Mutex::new(Vec::new()),
            notify: Some(tx),
        });
        (probe, SharedFd::new(rx))
    }

    /// A buffer of `capacity` bytes (none initialised) watched by this probe.
    pub(crate) fn buf(self: &Arc<Self>, label: usize, capacity: usize) -> TrackedBuf {
        TrackedBuf {
            data: Vec::with_capacity(capacity),
            label,
            probe: self.clone(),
        }
    }

    pub(crate) fn drops(&self) -> usize {
        self.drops.load(Ordering::SeqCst)
    }

    pub(crate) fn records(&self) -> Vec<DropRecord> {
        self.records.lock().unwrap().clone()
    }
}

/// A `Vec<u8>`-backed buffer that records its drop in its [`Probe`].
pub(crate) struct TrackedBuf {
    pub(crate) data: Vec<u8>,
    label: usize,
    probe: Arc<Probe>,
}

impl std::fmt::Debug for TrackedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrackedBuf")
            .field("label", &self.label)
            .field("len", &self.data.len())
            .finish()
    }
}

impl Drop for TrackedBuf {
    fn drop(&mut self) {
        let stats = self.probe.handle.stats();
        let record = DropRecord {
            label: self.label,
            shard: ringsteal_rt::current_shard(),
            thread: std::thread::current().id(),
            ops_completed: stats.shards.iter().map(|s| s.ops_completed).collect(),
            ops_cancelled: stats.shards.iter().map(|s| s.ops_cancelled).collect(),
        };
        self.probe.records.lock().unwrap().push(record);
        self.probe.drops.fetch_add(1, Ordering::SeqCst);
        if let Some(tx) = &self.probe.notify {
            write_fd(tx, b"d");
        }
    }
}

// SAFETY: forwards to the Vec, whose heap storage does not move when the TrackedBuf moves and
// whose first `len` bytes are initialised.
unsafe impl IoBuf for TrackedBuf {
    fn stable_ptr(&self) -> *const u8 {
        self.data.stable_ptr()
    }
    fn bytes_init(&self) -> usize {
        self.data.bytes_init()
    }
    fn bytes_total(&self) -> usize {
        self.data.bytes_total()
    }
}

// SAFETY: forwards to the Vec, writable over its whole capacity.
unsafe impl IoBufMut for TrackedBuf {
    fn stable_mut_ptr(&mut self) -> *mut u8 {
        self.data.stable_mut_ptr()
    }
    unsafe fn set_init(&mut self, pos: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { self.data.set_init(pos) }
    }
}

/// Wakes a parked plain thread (std `Wake`, no runtime involved).
struct ThreadWaker(std::thread::Thread);

impl std::task::Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// A waker that unparks the calling thread.
pub(crate) fn thread_waker() -> std::task::Waker {
    std::task::Waker::from(Arc::new(ThreadWaker(std::thread::current())))
}

/// Drives `fut` to completion on this plain thread (no runtime), parking between polls.
pub(crate) fn block_on_plain<F: Future>(fut: F) -> F::Output {
    let waker = thread_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}
