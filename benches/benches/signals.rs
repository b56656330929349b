//! The cross-task signals of `ping_pong_rtt` and `idle_wake_latency`, written once for
//! every runtime.
//!
//! Each runtime's row runs these same futures; only where and how they are spawned
//! differs. Tokens travel through `futures::channel::mpsc` and a wake is the completion
//! of a `futures::channel::oneshot`, for tokio as for ringsteal and compio: a row
//! measures its runtime's wake path, not a faster or slower channel of its own.
//! (ringsteal ships no channel; `futures::channel` is what compio's own tests use to
//! wake a runtime from another thread.) The raw-message rows (`*/ringsteal_msg`,
//! `pinned_spinning/spargio`) are the exception, labelled as such.

use std::time::{Duration, Instant};

use futures::channel::{mpsc, oneshot};
use futures::StreamExt;
use ringsteal_benches::workloads::idle_wake_latency::{self, PARK_GAP};

/// The side of a ping-pong that sends the token and times the round trips.
pub(crate) struct Pinger {
    ping: mpsc::UnboundedSender<u64>,
    pong: mpsc::UnboundedReceiver<u64>,
}

/// The side of a ping-pong that returns the token, plus one.
pub(crate) struct Responder {
    ping: mpsc::UnboundedReceiver<u64>,
    pong: mpsc::UnboundedSender<u64>,
}

/// The two ends of one ping-pong.
pub(crate) fn ping_pong_pair() -> (Pinger, Responder) {
    let (ping_tx, ping_rx) = mpsc::unbounded();
    let (pong_tx, pong_rx) = mpsc::unbounded();
    (
        Pinger {
            ping: ping_tx,
            pong: pong_rx,
        },
        Responder {
            ping: ping_rx,
            pong: pong_tx,
        },
    )
}

impl Pinger {
    /// Makes `rounds` round trips; returns their time and the final token. Dropping the
    /// pinger afterwards ends the responder.
    pub(crate) async fn run(mut self, rounds: u64) -> (Duration, u64) {
        let mut token = 0u64;
        let start = Instant::now();
        for _ in 0..rounds {
            self.ping.unbounded_send(token + 1).expect("ping");
            token = self.pong.next().await.expect("pong");
        }
        (start.elapsed(), token)
    }
}

impl Responder {
    /// Answers every ping until the pinger is gone.
    pub(crate) async fn run(mut self) {
        while let Some(t) = self.ping.next().await {
            if self.pong.unbounded_send(t + 1).is_err() {
                break;
            }
        }
    }
}

/// The task of `idle_wake_latency` that sleeps until notified.
pub(crate) struct Waiter {
    armed: mpsc::UnboundedSender<oneshot::Sender<()>>,
    woke: mpsc::UnboundedSender<Instant>,
}

/// The task of `idle_wake_latency` that notifies and times the wake.
pub(crate) struct Notifier {
    armed: mpsc::UnboundedReceiver<oneshot::Sender<()>>,
    woke: mpsc::UnboundedReceiver<Instant>,
}

/// The two ends of one `idle_wake_latency` run.
pub(crate) fn idle_wake_pair() -> (Waiter, Notifier) {
    let (armed_tx, armed_rx) = mpsc::unbounded();
    let (woke_tx, woke_rx) = mpsc::unbounded();
    (
        Waiter {
            armed: armed_tx,
            woke: woke_tx,
        },
        Notifier {
            armed: armed_rx,
            woke: woke_rx,
        },
    )
}

impl Waiter {
    /// `samples` times: hands the notifier a fresh oneshot sender, waits on its receiver
    /// (its thread has nothing else to run, so it parks) and reports when it ran again.
    pub(crate) async fn run(self, samples: u64) {
        for _ in 0..samples {
            let (tx, rx) = oneshot::channel();
            self.armed.unbounded_send(tx).expect("armed");
            rx.await.expect("notified");
            self.woke.unbounded_send(Instant::now()).expect("woke");
        }
    }
}

impl Notifier {
    /// `samples` times: waits until the waiter is armed, lets [`PARK_GAP`] pass (blocking
    /// its own thread, so the gap does not depend on a runtime's timer), notifies, and
    /// adds the time from the notification to the waiter running. Returns the sum.
    pub(crate) async fn run(mut self, samples: u64) -> Duration {
        let mut total = Duration::ZERO;
        for _ in 0..samples {
            let tx = self.armed.next().await.expect("armed");
            std::thread::sleep(PARK_GAP);
            let t0 = Instant::now();
            tx.send(()).expect("notify");
            let t1 = self.woke.next().await.expect("woke");
            let s = t1.saturating_duration_since(t0);
            idle_wake_latency::check(s);
            total += s;
        }
        total
    }
}
