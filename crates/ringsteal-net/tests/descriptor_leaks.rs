//! An accept, socket or connect that completes after its future was dropped must not leak
//! the descriptor the kernel made (the bug class of tokio #7979: the accept keeps its
//! connection for the next accept, the others close theirs), a dropped connect must close
//! its socket once the kernel is done with it, and a runtime dropped with socket I/O in
//! flight must close everything. Counted in `/proc/self/fd`, so this
//! binary holds one test that runs its cases in sequence: nothing else opens descriptors
//! meanwhile.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::io::Read;

use common::{hang_guard, Config, Rng, Signal, HANG_LIMIT};
use ringsteal_net::TcpStream;
use support::*;

const ROUNDS: usize = 150;

/// Descriptors a case may still hold once its dropped requests have completed, beyond the
/// count before it: the connection the draining task of `connect_dropped_at_any_point` has
/// just accepted and not yet dropped. A leak grows with the rounds instead.
const SETTLED_SLACK: usize = 1;

fn accept_completing_after_its_future_was_dropped(config: Config) {
    let rt = config.runtime(1);
    rt.block_on(async {
        let (listener, addr) = listener().await;
        let start = open_fds();
        for _ in 0..ROUNDS {
            let mut client = accept_dropped_after_the_kernel_accepted(&listener, addr).await;
            // Kept for the next accept, which takes it at once; closed when that is dropped:
            // the client reads end of stream.
            let (kept, peer) = listener.accept().await.unwrap();
            assert_eq!(peer, client.local_addr().unwrap());
            drop(kept);
            let mut byte = [0u8; 1];
            assert_eq!(
                client.read(&mut byte).unwrap(),
                0,
                "the accepted socket is still open"
            );
        }
        // Dropped requests and their cancels may still be in flight: wait for them.
        until_fds_at_most(start + SETTLED_SLACK, "after the rounds").await;
    });
}

fn accept_dropped_while_a_connection_arrives(config: Config) {
    let rt = config.runtime(2);
    rt.block_on(async {
        let (listener, addr) = listener().await;
        let start = open_fds();
        for _ in 0..ROUNDS {
            let mut accept = Box::pin(listener.accept());
            if poll_once(&mut accept).await.is_some() {
                continue; // the connection an earlier round's accept kept, now closed
            }
            let client = std::thread::spawn(move || std::net::TcpStream::connect(addr).unwrap());
            drop(accept); // races the connection: the cancel or the accept wins
            let client = client.join().unwrap();
            // If the cancel won, the connection waits in the backlog (else it is kept, maybe
            // only once the accept's completion is reaped): take it.
            let _ =
                ringsteal_rt::time::timeout(std::time::Duration::from_millis(1), listener.accept())
                    .await;
            drop(client);
        }
        // A connection kept after the last round's accept gave up: take and close it.
        while let Ok(Ok(_)) =
            ringsteal_rt::time::timeout(std::time::Duration::from_millis(50), listener.accept())
                .await
        {}
        // Dropped requests and their cancels may still be in flight: wait for them.
        until_fds_at_most(start + SETTLED_SLACK, "after the rounds").await;
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
        // Dropped requests and their cancels may still be in flight: wait for them.
        until_fds_at_most(start + SETTLED_SLACK, "after the rounds").await;
        drain.abort();
    });
}

/// The runtime is dropped while tasks wait in accepts, reads, a write to a peer that does not
/// read, and connects: shutdown cancels them all, waits for their completions and frees
/// their buffers (ASan checks the memory), and every socket is closed.
fn runtime_dropped_with_socket_io_in_flight(config: Config) {
    let rt = config.runtime(2);
    let (listener, addr) = rt.block_on(listener());
    let listener = std::sync::Arc::new(listener);
    rt.block_on(async {
        let in_flight = || {
            ringsteal_rt::RuntimeHandle::current()
                .stats()
                .total()
                .ops_in_flight
        };
        let accepted = Signal::new();
        for shard in 0..2 {
            let (l, accepted) = (listener.clone(), accepted.clone());
            ringsteal_rt::spawn_with(ringsteal_rt::Placement::Pinned(shard), async move {
                let _conn = l.accept().await;
                accepted.add();
                std::future::pending::<()>().await
            });
        }
        // Taken by the accepts above; then one more pair whose server end nobody reads.
        let _a = TcpStream::connect(addr).await.unwrap();
        let _b = TcpStream::connect(addr).await.unwrap();
        accepted.wait_for(2).await;
        let before = in_flight();
        let (writer, _reader) = tcp_pair().await;
        ringsteal_rt::spawn(async move {
            let _ = writer.write_all(vec![1u8; 64 << 20]).await;
        });
        let (idle, _other) = tcp_pair().await;
        ringsteal_rt::spawn(async move {
            let _ = idle.read(Vec::with_capacity(4096)).await;
        });
        // Until the write and the read are in the kernel (the hang guard bounds the wait).
        while in_flight() < before + 2 {
            ringsteal_rt::yield_now().await;
        }
    });
    drop(rt);
}

#[test]
fn descriptors_made_for_dropped_futures_are_closed() {
    let base = open_fds();
    type Case = fn(Config);
    let cases: [(&str, Case); 4] = [
        (
            "accept completing after drop",
            accept_completing_after_its_future_was_dropped,
        ),
        (
            "accept dropped during a connection",
            accept_dropped_while_a_connection_arrives,
        ),
        ("connect dropped at any point", connect_dropped_at_any_point),
        (
            "runtime dropped with I/O in flight",
            runtime_dropped_with_socket_io_in_flight,
        ),
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
