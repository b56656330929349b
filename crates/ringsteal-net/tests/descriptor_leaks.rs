//! An accept, socket or connect that completes after its future was dropped must close the
//! descriptor the kernel made (the bug class of tokio #7979), and a dropped connect must
//! close its socket once the kernel is done with it. Counted in `/proc/self/fd`, so this
//! binary holds one test that runs its cases in sequence: nothing else opens descriptors
//! meanwhile.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::io::Read;

use common::{hang_guard, Config, Rng, HANG_LIMIT};
use ringsteal_net::TcpStream;
use support::*;

const ROUNDS: usize = 150;

/// Descriptors may exceed the count before a case by this many while requests are still in
/// flight; a leak grows with the rounds instead.
const IN_FLIGHT_SLACK: usize = 24;

fn accept_completing_after_its_future_was_dropped(config: Config) {
    let rt = config.runtime(1);
    rt.block_on(async {
        let (listener, addr) = listener().await;
        let start = open_fds();
        for _ in 0..ROUNDS {
            let mut accept = Box::pin(listener.accept());
            assert!(
                poll_once(&mut accept).await.is_none(),
                "nobody connected yet"
            );
            let before = ops_completed();
            let mut client = std::net::TcpStream::connect(addr).unwrap();
            // The kernel accepted and the shard reaped it: the connection is the op's now.
            until_ops_completed(before, 1).await;
            drop(accept);
            // The accepted socket was closed: the client reads end of stream.
            let mut byte = [0u8; 1];
            assert_eq!(
                client.read(&mut byte).unwrap(),
                0,
                "the accepted socket is still open"
            );
        }
        assert!(
            open_fds() <= start + IN_FLIGHT_SLACK,
            "{} descriptors, {start} at start",
            open_fds()
        );
    });
}

fn accept_dropped_while_a_connection_arrives(config: Config) {
    let rt = config.runtime(2);
    rt.block_on(async {
        let (listener, addr) = listener().await;
        let start = open_fds();
        for _ in 0..ROUNDS {
            let mut accept = Box::pin(listener.accept());
            assert!(poll_once(&mut accept).await.is_none());
            let client = std::thread::spawn(move || std::net::TcpStream::connect(addr).unwrap());
            drop(accept); // races the connection: the cancel or the accept wins
            let client = client.join().unwrap();
            // If the cancel won, the connection waits in the backlog: take it.
            let _ =
                ringsteal_rt::time::timeout(std::time::Duration::from_millis(1), listener.accept())
                    .await;
            drop(client);
        }
        assert!(
            open_fds() <= start + IN_FLIGHT_SLACK,
            "{} descriptors, {start} at start",
            open_fds()
        );
    });
}

fn connect_dropped_at_any_point(config: Config) {
    let rt = config.runtime(2);
    rt.block_on(async {
        let (listener, addr) = listener().await;
        let listener = std::sync::Arc::new(listener);
        let drain = {
            let l = listener.clone();
            ringsteal_rt::spawn_with(ringsteal_rt::Placement::Pinned(1), async move {
                loop {
                    let Ok((s, _)) = l.accept().await else { break };
                    drop(s);
                }
            })
        };
        let start = open_fds();
        let mut rng = Rng::new(config as u64);
        for _ in 0..ROUNDS {
            let mut connect = Box::pin(TcpStream::connect(addr));
            // Drop it before the socket exists, between socket and connect, or during the
            // connect.
            for _ in 0..rng.below(4) {
                if poll_once(&mut connect).await.is_some() {
                    break;
                }
                ringsteal_rt::yield_now().await;
            }
            drop(connect);
        }
        assert!(
            open_fds() <= start + IN_FLIGHT_SLACK,
            "{} descriptors, {start} at start",
            open_fds()
        );
        drain.abort();
    });
}

#[test]
fn descriptors_made_for_dropped_futures_are_closed() {
    let base = open_fds();
    type Case = fn(Config);
    let cases: [(&str, Case); 3] = [
        (
            "accept completing after drop",
            accept_completing_after_its_future_was_dropped,
        ),
        (
            "accept dropped during a connection",
            accept_dropped_while_a_connection_arrives,
        ),
        ("connect dropped at any point", connect_dropped_at_any_point),
    ];
    for (name, case) in cases {
        for config in Config::ALL {
            hang_guard(&format!("{name} [{config:?}]"), HANG_LIMIT, move || {
                case(config)
            });
            // Every runtime is gone and every request it had has completed: the count is
            // back where it started.
            assert_eq!(open_fds(), base, "{name} [{config:?}] leaked descriptors");
        }
    }
}
