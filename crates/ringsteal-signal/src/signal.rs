//! [`Signal`]: one listener for one signal, and [`signal`], which registers it.

use std::future::{poll_fn, Future};
use std::io;
use std::pin::Pin;
use std::sync::atomic::Ordering::SeqCst;
use std::task::{Context, Poll};

use ringsteal_rt::op::{self, Op, PollReadable};

use crate::handler::{self, MAX_SIGNAL, NONE_UNREPORTED};
use crate::slots::{self, Taken};
use crate::SignalKind;

/// Signals that cannot be caught (`SIGKILL`, `SIGSTOP`) or that report a fault in the thread
/// that raised them, which must not return to the faulting instruction.
const FORBIDDEN: [i32; 6] = [
    libc::SIGKILL,
    libc::SIGSTOP,
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
];

/// Starts listening for `kind`: from now on, every delivery of the signal to this process
/// makes [`Signal::recv`] complete (deliveries between two `recv`s count as one). One
/// exception reaches back: deliveries that a dropped listener of the same signal never
/// reported, and that no other listener has reported either, are reported at once by the
/// listeners made next (until one of them reports them). So a `select!` loop that drops its
/// `ctrl_c()` when another branch wins, and makes a new one for the next round, loses no
/// Ctrl-C that came while the dropped one was alive; and one that another listener
/// (a pinned `shutdown_signal()`) reported is not reported again.
///
/// Registering installs ringsteal's handler for this signal only (once per process); no other
/// signal's action changes, no signal is blocked. While at least one listener exists, the
/// signal's default action (terminating, for most) no longer happens; with none left, the
/// action in place before the first registration is put back as it was (unless something
/// installed another action over ringsteal's meanwhile: then ringsteal's stays and imitates
/// the old one), so the default action happens again, a signal the program ignored is
/// ignored by the children it spawns, and a handler another library installs later (tokio's
/// `signal`) finds the action it would have found without ringsteal. A handler function
/// installed before ringsteal's keeps being called.
///
/// Fails with `InvalidInput` for a number outside `1..=64` or a signal that cannot or must
/// not be caught (`SIGKILL`, `SIGSTOP`, `SIGSEGV`, `SIGBUS`, `SIGILL`, `SIGFPE`), and with the
/// kernel's error for one it refuses (glibc reserves 32 and 33).
///
/// ```
/// use ringsteal_signal::{signal, SignalKind};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let mut usr2 = signal(SignalKind::user_defined2())?;
///     // Sent before anyone waits: not lost.
///     // SAFETY: raise only sends a signal to this thread.
///     unsafe { libc::raise(libc::SIGUSR2) };
///     usr2.recv().await.expect("a delivery");
///     assert!(signal(SignalKind::from_raw(libc::SIGKILL)).is_err());
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub fn signal(kind: SignalKind) -> io::Result<Signal> {
    let signum = kind.as_raw_value();
    if !(1..=MAX_SIGNAL).contains(&signum) || FORBIDDEN.contains(&signum) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{kind} cannot be listened for"),
        ));
    }
    let mut reg = slots::registry();
    handler::install(signum)?;
    let slot = reg.take(signum)?;
    let st = handler::state(signum);
    // The baseline first, then the count: a delivery in between is seen by `recv` (it bumped
    // the counter after this load), so none falls between the default action and us. If a
    // dropped listener left deliveries unreported (a `select!` that dropped its `ctrl_c()`
    // after a Ctrl-C came, before polling it) and no listener has reported them since, this
    // one starts before them and reports them.
    let now = st.deliveries.load(SeqCst);
    let seen = match st.unreported_after.load(SeqCst) {
        NONE_UNREPORTED => now,
        // From the last delivery any listener reported, if that is later, as long as that
        // leaves some of the handed-down deliveries: once a listener has reported up to where
        // they end, the ones after are the live listeners' (a new listener must not report a
        // delivery that came before it while another listener still has it pending).
        after => {
            let from = after.max(st.reported.load(SeqCst));
            if from >= st.unreported_until.load(SeqCst) {
                now
            } else {
                from.min(now)
            }
        }
    };
    if seen == now {
        // Nothing is left unreported: any hand-down is done with.
        st.unreported_after.store(NONE_UNREPORTED, SeqCst);
    }
    st.listeners.fetch_add(1, SeqCst);
    Ok(Signal {
        kind,
        slot: Some(slot),
        seen,
        wait: None,
    })
}

/// A listener for one signal, created by [`signal`]. `Send`; its `recv` may be awaited on any
/// shard of any ringsteal runtime (the wait is a poll of the listener's eventfd through that
/// shard's ring), also after it waited somewhere else: the wait moves to the shard that
/// awaits it, even if the first one no longer runs (shard 0 outside `block_on`, or a runtime
/// that was dropped). Deliveries that come before a `recv` are reported by it as one, as
/// tokio's listeners do.
///
/// ```
/// use std::time::Duration;
/// use ringsteal_signal::{signal, SignalKind};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
/// rt.block_on(async {
///     let mut hup = signal(SignalKind::hangup())?;
///     assert_eq!(hup.kind(), SignalKind::hangup());
///     // SAFETY: raise only sends a signal to this thread; the listener above handles it.
///     unsafe { libc::raise(libc::SIGHUP) };
///     // SAFETY: as above.
///     unsafe { libc::raise(libc::SIGHUP) };
///     // A reload loop would live in its own task: the listener is Send.
///     let reloads = ringsteal_rt::spawn(async move {
///         hup.recv().await.expect("a delivery"); // both raises, reported once
///         let again = ringsteal_rt::time::timeout(Duration::from_millis(5), hup.recv()).await;
///         assert!(again.is_err(), "no delivery since");
///     });
///     reloads.await.unwrap();
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct Signal {
    kind: SignalKind,
    slot: Option<Taken>,
    /// Deliveries counted when this listener last reported one (or was created).
    seen: u64,
    /// The eventfd poll in flight, kept across `recv` calls.
    wait: Option<Op<PollReadable>>,
}

impl Signal {
    /// The signal this listener waits for.
    pub fn kind(&self) -> SignalKind {
        self.kind
    }

    /// Waits for the next delivery of the signal (at once if one came since the last `recv`,
    /// or since [`signal`] for the first). `None` if the listener cannot wait: polled outside
    /// a ringsteal runtime, or its runtime is shutting down. (A wait an earlier poll left on
    /// a shard's ring is kept when polled off the runtime's threads: it completes when that
    /// shard runs, which for shard 0 means inside the next `block_on`, as for any request
    /// made there.)
    ///
    /// Cancel-safe: dropping the future loses no delivery.
    pub async fn recv(&mut self) -> Option<()> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Polls for the next delivery; see [`recv`](Self::recv).
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<()>> {
        let st = handler::state(self.kind.as_raw_value());
        loop {
            let now = st.deliveries.load(SeqCst);
            if now != self.seen {
                self.seen = now;
                st.reported.fetch_max(now, SeqCst);
                return Poll::Ready(Some(()));
            }
            let Some(slot) = &self.slot else {
                return Poll::Ready(None);
            };
            // No new delivery: wait for the handler's write to this listener's eventfd. A
            // delivery after the load above has written to it already, or will.
            if self.wait.as_ref().is_some_and(Op::submitted_elsewhere) {
                // Left on the ring of the shard (or runtime) an earlier `recv` was polled on,
                // whose completions only that shard reaps, if it ever runs again: wait here
                // instead. Dropping the poll loses nothing (the counter is what counts).
                self.wait = None;
            }
            let wait = self.wait.get_or_insert_with(|| op::poll_readable(&slot.fd));
            match Pin::new(wait).poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(res) => {
                    self.wait = None;
                    if res.is_err() {
                        return Poll::Ready(None);
                    }
                    // Reset, then look at the counter again: a delivery after the reset has
                    // bumped the counter first, so it is not missed.
                    slot.reset();
                }
            }
        }
    }
}

impl Drop for Signal {
    fn drop(&mut self) {
        // Cancels a poll in flight.
        drop(self.wait.take());
        if let Some(slot) = self.slot.take() {
            let mut reg = slots::registry();
            let signum = self.kind.as_raw_value();
            let st = handler::state(signum);
            let last = st.listeners.fetch_sub(1, SeqCst) == 1;
            // After the count, so that a handler that still saw this listener has mostly
            // bumped the deliveries by this load. The one case left: a handler that saw it
            // (before the `fetch_sub`) but bumps the count only after this load; its
            // delivery is reported by nobody (a window of a few instructions).
            let deliveries = st.deliveries.load(SeqCst);
            if deliveries != self.seen {
                // Deliveries this listener never reported go to the next listeners of the
                // signal, until one reports them (the earliest such baseline, if several
                // listeners left some; up to the latest count at which one left).
                st.unreported_until.fetch_max(deliveries, SeqCst);
                st.unreported_after.fetch_min(self.seen, SeqCst);
            }
            if last {
                handler::uninstall_if_ours(signum);
            }
            reg.give_back(slot);
        }
    }
}

/// Completes on the first delivery of `SIGINT` (Ctrl-C) after this call (or one before it
/// that a dropped listener left unreported: see [`signal`]); `Err` if the
/// listener could not be set up or cannot wait (polled outside a ringsteal runtime).
///
/// Registration happens when `ctrl_c()` is called, not when it is first polled, so a Ctrl-C
/// in between is not lost; it ends when the future completes (or is dropped), so the next
/// Ctrl-C after that terminates the process unless another listener lives (a
/// [`signal`]`(SignalKind::interrupt())` kept for as long as the program should survive
/// Ctrl-C: tokio's handler, once installed, stays for good). See [`signal`] for what
/// registering changes. In a `select!` loop,
/// make it once before the loop and pin it: a new `ctrl_c()` per round leaves a moment
/// between rounds with no listener, when a Ctrl-C terminates the process (one that came
/// while a dropped round's listener lived is not lost: the next one reports it).
///
/// ```no_run
/// let rt = ringsteal_rt::Runtime::builder().build().unwrap();
/// rt.block_on(async {
///     println!("press Ctrl-C");
///     ringsteal_signal::ctrl_c().await.unwrap();
///     println!("bye");
/// });
/// ```
pub fn ctrl_c() -> impl Future<Output = io::Result<()>> + Send + 'static {
    let listener = signal(SignalKind::interrupt());
    async move {
        listener?
            .recv()
            .await
            .ok_or_else(|| io::Error::other(CANNOT_WAIT))
    }
}

pub(crate) const CANNOT_WAIT: &str =
    "cannot wait for a signal here: poll it on a ringsteal runtime that is not shutting down";
