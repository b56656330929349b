//! MSG_RINGs the kernel refuses, for a raw message or a doorbell, after submission or at it:
//! the target still wakes, every message is delivered once and in send order, and nothing
//! refused at submission reaches the kernel later, outside the guard that kept the target's
//! descriptor open (ADR-0006).
//!
//! Refusals after submission: `-EBADFD` for real (the target's ring descriptor, as senders
//! see it, names a file that is not a ring); `-EOVERFLOW`, `-ENOMEM` and `-EOWNERDEAD`
//! through the driver's test switch `refuse_msg_rings`, which submits a NOP that the kernel
//! completes with that error in the MSG_RING's place (`IORING_NOP_INJECT_RESULT`). Refusals
//! at submission: the switch `refuse_submits` (`EBUSY`/`EAGAIN` cannot be provoked on demand).

use std::os::fd::AsRawFd;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::driver::tests::kernel_injects_nop_results;
use crate::shard::context;
use crate::shared::Shared;
use crate::{recv_msg, spawn_with, Placement, Runtime, RuntimeHandle, WakeMechanism};

/// How long a test may run before it counts as hung.
const HANG_GUARD: Duration = Duration::from_secs(60);

fn msg_ring_runtime() -> Option<Runtime> {
    if !ringsteal_uring::Features::get().is_ok_and(|f| f.msg_ring()) {
        eprintln!("SKIPPED: no MSG_RING here, so no MSG_RING to refuse");
        return None;
    }
    Some(
        Runtime::builder()
            .shards(2)
            .wake(WakeMechanism::Auto)
            .build()
            .unwrap(),
    )
}

/// Runs `body` on its own thread; fails if it does not finish within [`HANG_GUARD`].
fn hang_guarded(what: &'static str, body: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        body();
        let _ = tx.send(());
    });
    match rx.recv_timeout(HANG_GUARD) {
        Ok(()) => thread.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(panic) = thread.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("HUNG: {what}"),
    }
}

/// Waits until shard `i` has published that it sleeps, so that the next wake or message for
/// it claims its doorbell (and, from a shard, takes the MSG_RING path). Yields meanwhile, so
/// the calling shard reaps (and falls back from) refusals of its own earlier sends. Panics if
/// it does not within a hang guard: a shard whose doorbell was claimed and never rung is
/// awake in nobody's eyes and asleep in fact, so it never publishes `sleeping` again.
async fn until_asleep(shared: &Shared, i: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !shared.shards[i].sleeping.is_set() {
        assert!(
            Instant::now() < deadline,
            "shard {i} never went back to sleep: the last doorbell claimed for it never woke it"
        );
        crate::yield_now().await;
    }
}

/// Receives `n` messages on shard 1.
fn receiver(n: usize) -> crate::JoinHandle<Vec<u64>> {
    spawn_with(Placement::Pinned(1), async move {
        let mut got = Vec::with_capacity(n);
        for _ in 0..n {
            got.push(recv_msg().await);
        }
        got
    })
}

/// Each round: shard 1 sleeps, the first message of a burst of three goes by MSG_RING and is
/// refused with `errno`, and the other two go through the queue, with no doorbell (the first
/// claimed it). Shard 1 must still wake, and receive all of them in order.
///
/// A round whose shard 1 left its sleep between the check and the first send (its sleep was
/// the re-check before a park, or a late completion woke it; more likely on a loaded
/// machine) sends all three through the queue: they count, in order like the rest, but the
/// round is run again, until `ROUNDS` rounds have taken the refused path (bounded).
fn refused_messages_are_delivered_in_order(errno: i32) {
    let Some(rt) = msg_ring_runtime() else { return };
    let shared = rt.shared();
    const ROUNDS: u64 = 8;
    const ATTEMPTS: u64 = 200;
    let (got, sent) = rt.block_on(async {
        let handle = RuntimeHandle::current();
        let (mut sent, mut refused_rounds, mut attempts) = (0u64, 0, 0);
        let mut got = Vec::new();
        while refused_rounds < ROUNDS {
            attempts += 1;
            assert!(
                attempts <= ATTEMPTS,
                "shard 1 never stayed asleep for a send"
            );
            let receiver = receiver(3);
            until_asleep(&shared, 1).await;
            context::with_shard(|s| s.unwrap().driver.borrow_mut().refuse_msg_rings.push(errno));
            for _ in 0..3 {
                handle.send_msg(1, sent).unwrap();
                sent += 1;
            }
            let unused = context::with_shard(|s| {
                std::mem::take(&mut s.unwrap().driver.borrow_mut().refuse_msg_rings).len()
            });
            if unused == 0 {
                refused_rounds += 1;
            }
            got.extend(receiver.await.unwrap());
        }
        (got, sent)
    });
    assert_eq!(got, (0..sent).collect::<Vec<_>>());
}

#[test]
fn messages_refused_after_submission_wake_the_target_and_arrive_in_order() {
    if !kernel_injects_nop_results() {
        eprintln!("SKIPPED: this kernel cannot inject a NOP's result");
        return;
    }
    for (errno, what) in [
        (libc::EOVERFLOW, "a message refused with EOVERFLOW"),
        (libc::ENOMEM, "a message refused with ENOMEM"),
        (libc::EOWNERDEAD, "a message refused with EOWNERDEAD"),
    ] {
        hang_guarded(what, move || refused_messages_are_delivered_in_order(errno));
    }
}

/// Shard 1's ring descriptor, as shard 0 sees it, names `/dev/null`: every MSG_RING to it
/// fails with `-EBADFD`, messages and doorbells alike (the eventfd is still shard 1's).
#[test]
fn messages_refused_with_ebadfd_wake_the_target_and_arrive_in_order() {
    hang_guarded("a message refused with EBADFD", || {
        let Some(rt) = msg_ring_runtime() else { return };
        let shared = rt.shared();
        let remote = &shared.shards[1];
        let (ring_fd, eventfd) = (remote.ring_fd(), remote.eventfd());
        let not_a_ring = std::fs::File::open("/dev/null").unwrap();
        remote.publish_fds(not_a_ring.as_raw_fd(), Some(eventfd));
        let got = rt.block_on(async {
            const N: u64 = 12;
            let receiver = receiver(N as usize);
            for i in 0..N {
                until_asleep(&shared, 1).await;
                RuntimeHandle::current().send_msg(1, i).unwrap();
                crate::yield_now().await;
            }
            receiver.await.unwrap()
        });
        remote.publish_fds(ring_fd, Some(eventfd));
        assert_eq!(got, (0..12).collect::<Vec<_>>());
    });
}

/// What a MSG_RING refused at submission (`EBUSY`) would do if it stayed in the SQ: with
/// shard 1's descriptor standing in for a ring `stand_in`, `send` makes shard 0 send one
/// MSG_RING to it while shard 0's submissions are refused; then, still inside the same poll,
/// the stand-in's descriptor number is made to name another ring, `later` (as a closed and
/// reused number would). Shard 0 submits again as `block_on` returns: nothing may reach
/// `later`. Shard 1, which waits for `expected` messages, must still get them all, in order:
/// `send` may send the first; the last is sent afterwards.
fn refused_at_submission(send: fn(), expected: &'static [u64]) {
    hang_guarded("a MSG_RING refused at submission", move || {
        let Some(rt) = msg_ring_runtime() else { return };
        let shared = rt.shared();
        let remote = &shared.shards[1];
        let (ring_fd, eventfd) = (remote.ring_fd(), remote.eventfd());
        let stand_in = ringsteal_uring::Ring::new(4).unwrap();
        let later = ringsteal_uring::Ring::new(4).unwrap();
        // Shard 1 waits for the messages (the JoinHandle is awaited in the last block_on).
        let receiver = rt.block_on(async {
            let r = receiver(expected.len());
            until_asleep(&shared, 1).await;
            Some(r)
        });
        remote.publish_fds(stand_in.fd(), Some(eventfd));
        rt.block_on(async {
            until_asleep(&shared, 1).await;
            // Enough refusals for a retry, say a message falling back to a doorbell.
            context::with_shard(|cur| cur.unwrap().driver.borrow_mut().refuse_submits = 2);
            send();
            // SAFETY: dup2 onto a descriptor this test owns (the stand-in's); the stand-in
            // ring object closes the number on drop, when it names a duplicate of `later`.
            assert!(unsafe { libc::dup2(later.fd(), stand_in.fd()) } >= 0);
            shared.shards[1].publish_fds(ring_fd, Some(eventfd));
            context::with_shard(|cur| cur.unwrap().driver.borrow_mut().refuse_submits = 0);
        });
        assert_eq!(
            later.cq_ready(),
            0,
            "a MSG_RING refused at submission was sent later, to whatever the number named then"
        );
        let got = rt.block_on(async {
            RuntimeHandle::current()
                .send_msg(1, *expected.last().unwrap())
                .unwrap();
            receiver.unwrap().await.unwrap()
        });
        assert_eq!(got, expected);
        drop(stand_in);
    });
}

#[test]
fn a_message_refused_at_submission_is_withdrawn_and_still_delivered_in_order() {
    refused_at_submission(|| RuntimeHandle::current().send_msg(1, 1).unwrap(), &[1, 2]);
}

#[test]
fn a_doorbell_refused_at_submission_is_withdrawn_and_rung_through_the_eventfd() {
    // A spawn onto sleeping shard 1 claims its doorbell.
    refused_at_submission(|| drop(spawn_with(Placement::Pinned(1), async {})), &[2]);
}
