//! `shutdown_signal` completes on the first SIGTERM or SIGINT, with which one, on any shard.

mod common;

use common::{raise_here, send_to_self, with_each_wake};
use ringsteal_rt::Placement;
use ringsteal_signal::{shutdown_signal, SignalKind};

#[test]
fn shutdown_signal_reports_sigterm_or_sigint() {
    with_each_wake("shutdown_signal", 2, |wake, rt| {
        rt.block_on(async move {
            let stop = shutdown_signal();
            let waiter = ringsteal_rt::spawn_with(Placement::Pinned(1), stop);
            send_to_self(libc::SIGTERM);
            assert_eq!(
                waiter.await.unwrap().unwrap(),
                SignalKind::terminate(),
                "{wake:?}"
            );

            let stop = shutdown_signal();
            raise_here(libc::SIGINT);
            assert_eq!(stop.await.unwrap(), SignalKind::interrupt(), "{wake:?}");
        });
    });
}
