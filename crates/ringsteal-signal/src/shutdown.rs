//! [`shutdown_signal`]: the future a service awaits to know when to stop.

use std::future::{poll_fn, Future};
use std::io;
use std::task::Poll;

use crate::signal::CANNOT_WAIT;
use crate::{signal, SignalKind};

/// Completes with the kind of the first `SIGINT` (Ctrl-C) or `SIGTERM` (`kill`, systemd,
/// Kubernetes) delivered after this call (or one before it that a dropped listener left
/// unreported: see [`signal`](crate::signal)): the cue for a graceful shutdown. `Err` if the
/// listeners could not be set up or cannot wait.
///
/// Once it has completed, nobody listens any more (whether or not the finished future is
/// dropped yet), so a second Ctrl-C or `SIGTERM` during a slow shutdown terminates the
/// process as usual. To ignore them instead, as a tokio program does (tokio's handler stays
/// for good), keep a listener of each alive through the shutdown:
/// `let _keep = (signal(SignalKind::interrupt())?, signal(SignalKind::terminate())?);`.
///
/// ```no_run
/// use std::time::Duration;
///
/// let rt = ringsteal_rt::Runtime::builder().build().unwrap();
/// rt.block_on(async {
///     let stop = ringsteal_signal::shutdown_signal();
///     // ... start serving, then:
///     let why = stop.await.unwrap();
///     eprintln!("{why}: finishing in-flight work");
///     let drained = ringsteal_rt::time::timeout(Duration::from_secs(10), async { /* drain */ }).await;
///     std::process::exit(if drained.is_ok() { 0 } else { 1 });
/// });
/// ```
pub fn shutdown_signal() -> impl Future<Output = io::Result<SignalKind>> + Send + 'static {
    let int = signal(SignalKind::interrupt());
    let term = signal(SignalKind::terminate());
    async move {
        let (mut int, mut term) = (int?, term?);
        poll_fn(|cx| {
            for (sig, kind) in [
                (&mut int, SignalKind::interrupt()),
                (&mut term, SignalKind::terminate()),
            ] {
                if let Poll::Ready(got) = sig.poll_recv(cx) {
                    return Poll::Ready(
                        got.map(|()| kind)
                            .ok_or_else(|| io::Error::other(CANNOT_WAIT)),
                    );
                }
            }
            Poll::Pending
        })
        .await
    }
}
