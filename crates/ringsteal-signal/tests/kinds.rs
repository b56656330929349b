//! Every named kind and raw numbers can be listened for and received; numbers that cannot be
//! listened for are refused with an error, not a panic.

mod common;

use std::io;

use common::{raise_here, with_each_wake};
use ringsteal_signal::{signal, SignalKind};

#[test]
fn every_named_kind_and_a_realtime_number_is_received() {
    let kinds = [
        SignalKind::interrupt(),
        SignalKind::terminate(),
        SignalKind::hangup(),
        SignalKind::quit(),
        SignalKind::user_defined1(),
        SignalKind::user_defined2(),
        SignalKind::child(),
        SignalKind::pipe(),
        SignalKind::window_change(),
        SignalKind::alarm(),
        SignalKind::io(),
        SignalKind::from_raw(libc::SIGRTMIN() + 3),
    ];
    with_each_wake("every kind", 2, move |wake, rt| {
        rt.block_on(async move {
            let mut listeners: Vec<_> = kinds.iter().map(|&k| signal(k).unwrap()).collect();
            for (kind, listener) in kinds.iter().zip(&mut listeners) {
                assert_eq!(listener.kind(), *kind);
                raise_here(kind.as_raw_value());
                assert_eq!(listener.recv().await, Some(()), "{wake:?}: {kind}");
            }
            // Every signal went to its own listener only: nothing else is pending.
            for (kind, listener) in kinds.iter().zip(&mut listeners) {
                let extra = ringsteal_rt::time::timeout(
                    std::time::Duration::from_millis(1),
                    listener.recv(),
                )
                .await;
                assert!(extra.is_err(), "{wake:?}: {kind} was delivered twice");
            }
        });
    });
}

#[test]
fn numbers_that_cannot_be_listened_for_are_refused() {
    for bad in [
        0,
        -1,
        65,
        1000,
        libc::SIGKILL,
        libc::SIGSTOP,
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGILL,
        libc::SIGFPE,
    ] {
        let err = signal(SignalKind::from_raw(bad)).expect_err(&format!("signal {bad}"));
        assert_eq!(
            err.kind(),
            io::ErrorKind::InvalidInput,
            "signal {bad}: {err}"
        );
    }
    // glibc keeps 32 and 33 for itself and refuses to let them be caught.
    let err = signal(SignalKind::from_raw(32)).expect_err("signal 32");
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL), "{err}");
}

#[test]
fn kinds_name_themselves() {
    assert_eq!(SignalKind::hangup().to_string(), "SIGHUP");
    assert_eq!(SignalKind::from_raw(40).to_string(), "signal 40");
    assert_eq!(SignalKind::from(libc::SIGTERM), SignalKind::terminate());
}
