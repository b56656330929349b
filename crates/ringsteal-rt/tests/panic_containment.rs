//! User code that the shard loop runs outside any task (ADR-0019): a waker woken or dropped
//! by a timer request from another thread, wakers dropped by a shard's shutdown, a stalled
//! stream's waker woken when shutdown retires the buffer group. A panic in
//! it is contained where it runs, so it never reaches the loop's restart limit (a shard that
//! reached it would stop while the runtime ran on, leaving spawns to it hanging), and never
//! cuts a shutdown short (which would skip draining the ring and leak what the kernel holds).

mod common;
mod op_support;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Wake, Waker};
use std::time::Duration;

use common::*;
use op_support::{pipe, Probe};
use ringsteal_rt::op::{self, SharedFd};
use ringsteal_rt::time::{sleep, Instant, Sleep};
use ringsteal_rt::{current_shard, spawn_with, Placement, RuntimeHandle};

/// More panics than a shard loop is restarted after (16).
const PANICS: usize = 24;

/// A waker that panics when woken.
struct PanicsWhenWoken;

impl Wake for PanicsWhenWoken {
    fn wake(self: Arc<Self>) {
        panic!("{INTENTIONAL}: a timer's waker, woken by a reset");
    }
}

/// A waker that panics when its last reference is dropped.
struct PanicsWhenDropped;

impl Wake for PanicsWhenDropped {
    fn wake(self: Arc<Self>) {}
}

impl Drop for PanicsWhenDropped {
    fn drop(&mut self) {
        panic!("{INTENTIONAL}: a waker's destructor");
    }
}

/// On shard 1: a `Sleep` far in the future, registered in shard 1's wheel with `waker`
/// (the only reference left to it is the wheel's).
fn sleep_registered_on_shard_1(rt: &RuntimeHandle, waker: fn() -> Waker) -> Sleep {
    let h = rt.spawn_with(Placement::Pinned(1), async move {
        let mut s = sleep(Duration::from_secs(3600));
        let w = waker();
        assert!(s.poll_elapsed(&mut Context::from_waker(&w)).is_pending());
        // Wrapped: the Sleep is handed back, not awaited.
        Some(s)
    });
    block_on_plain(h).unwrap().unwrap()
}

/// Shard 1 still runs what is spawned on it.
fn shard_1_runs(rt: &RuntimeHandle) {
    let h = rt.spawn_with(Placement::Pinned(1), async { current_shard() });
    assert_eq!(block_on_plain(h).unwrap(), Some(1), "shard 1 stopped");
}

#[test]
fn timer_wakers_that_panic_when_a_reset_from_another_thread_wakes_them_do_not_stop_the_shard() {
    quiet_intentional_panics();
    // Before every runtime's clock starts: a deadline there has passed on any wheel.
    let long_ago = Instant::now();
    with_every_runtime("reset wakes a panicking waker", 2, move |_, rt| {
        let handle = rt.handle();
        for _ in 0..PANICS {
            let mut s =
                sleep_registered_on_shard_1(&handle, || Waker::from(Arc::new(PanicsWhenWoken)));
            // From this thread: shard 1 is asked to move the entry, finds the deadline
            // passed, and wakes the waker.
            s.reset(long_ago);
            // The request is carried out before shard 1 runs this.
            shard_1_runs(&handle);
        }
    });
}

#[test]
fn timer_wakers_that_panic_when_a_cancel_from_another_thread_drops_them_do_not_stop_the_shard() {
    quiet_intentional_panics();
    with_every_runtime("cancel drops a panicking waker", 2, |_, rt| {
        let handle = rt.handle();
        for _ in 0..PANICS {
            let s =
                sleep_registered_on_shard_1(&handle, || Waker::from(Arc::new(PanicsWhenDropped)));
            // From this thread: shard 1 is asked to remove the entry, and drops the waker.
            drop(s);
            shard_1_runs(&handle);
        }
    });
}

/// On each shard: a read of an idle pipe in flight, and a timer entry and a `recv_msg`
/// waiter whose wakers panic when dropped, left behind (their futures are kept on this
/// thread until the runtime is gone). Shutdown drops those wakers; it must still drain every
/// ring, so the reads end (cancelled) and their buffers are freed, not leaked with the ring
/// torn down under them, and dropping the runtime must not panic.
#[test]
fn wakers_that_panic_when_shutdown_drops_them_do_not_cut_the_drain_short() {
    quiet_intentional_panics();
    with_every_runtime("shutdown drops panicking wakers", 2, |_, rt| {
        let probe = Probe::new(rt.handle());
        let (rx, _tx) = pipe();
        let rx = SharedFd::new(rx);
        let left_behind = rt.block_on(async {
            let mut left_behind = Vec::new();
            for shard in 0..2 {
                let entries = spawn_with(Placement::Pinned(shard), async {
                    let w = Waker::from(Arc::new(PanicsWhenDropped));
                    let mut s = sleep(Duration::from_secs(3600));
                    assert!(s.poll_elapsed(&mut Context::from_waker(&w)).is_pending());
                    let w = Waker::from(Arc::new(PanicsWhenDropped));
                    let mut r = ringsteal_rt::recv_msg();
                    let polled = Pin::new(&mut r).poll(&mut Context::from_waker(&w));
                    assert!(polled.is_pending());
                    (s, r)
                });
                left_behind.push(entries.await.unwrap());
                let (buf, rx) = (probe.buf(shard, 8), rx.clone());
                // Shutdown drops this task, and with it the read, which cancels it.
                drop(spawn_with(Placement::Pinned(shard), async move {
                    let (res, _) = op::read_at(&rx, buf, u64::MAX).await;
                    panic!("a read of an idle pipe completed: {res:?}");
                }));
            }
            yield_until(|| {
                RuntimeHandle::current()
                    .stats()
                    .shards
                    .iter()
                    .all(|s| s.ops_in_flight >= 1)
            })
            .await;
            left_behind
        });
        drop(rt);
        assert_eq!(
            probe.drops(),
            2,
            "a read's buffer was not freed at shutdown"
        );
        drop(left_behind);
    });
}

#[test]
fn a_sink_that_panics_on_an_abandoned_streams_delivery_loses_no_other_completion() {
    quiet_intentional_panics();
    under_every_config("an abandoned stream's sink panics", 2, |config, b| {
        // A small ring, so that the completions behind the delivery share its reap batch.
        let rt = b.ring_entries(8).recv_buffers(4, 4096).build().unwrap();
        let sink_calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let calls = sink_calls.clone();
        let task = rt.handle().spawn_with(Placement::Pinned(1), async move {
            let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
            let mut stream = op::recv_multishot(&SharedFd::new(a.into()));
            std::io::Write::write_all(&mut b, b"first").unwrap();
            assert_eq!(&stream.next().await.unwrap().unwrap()[..], b"first");
            // Delivered after the abandon, to the sink, on the driver's reaping path.
            std::io::Write::write_all(&mut b, b"second").unwrap();
            stream.abandon_into(move |bytes| {
                calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                panic!("{INTENTIONAL}: a sink, given {} bytes", bytes.len());
            });
            // More completions, reaped with or after the delivery.
            let nops: Vec<_> = (0..12).map(|_| op::nop()).collect();
            for nop in nops {
                nop.await.unwrap();
            }
            current_shard()
        });
        assert_eq!(rt.block_on(task).unwrap(), Some(1));
        // On a plain ring the receive completes as the write returns (the task work runs
        // on the way back to user space), so the delivery comes after the abandon, to the
        // sink; with deferred task work the cancel may win, and the bytes stay unread.
        let calls = sink_calls.load(std::sync::atomic::Ordering::SeqCst);
        if config == Config::Plain {
            assert_eq!(calls, 1, "the sink was given the delivery");
        }
        assert!(calls <= 1, "{calls} deliveries of one receive");
        // The abandoned request's cancellation completes too: nothing is left in flight.
        let handle = rt.handle();
        spin_until(|| handle.stats().shards.iter().all(|s| s.ops_in_flight == 0));
        drop(rt);
    });
}

/// A receive stream stalled for want of provided buffers, its waker one that panics, left
/// registered while the runtime is dropped: retiring the buffer group at shutdown wakes the
/// stalled stream, and the panic is contained there (the drop completes, nothing unwinds out
/// of it).
#[test]
fn a_stalled_streams_waker_that_panics_when_shutdown_wakes_it_does_not_cut_the_drain_short() {
    quiet_intentional_panics();
    // The default ring (the fallback configurations have no provided buffers to run out of).
    hang_guard("shutdown wakes a stalled stream", HANG_LIMIT, || {
        let rt = ringsteal_rt::Runtime::builder()
            .shards(1)
            .recv_buffers(2, 4096)
            .build()
            .unwrap();
        let handle = rt.handle();
        let (server, mut client) = std::os::unix::net::UnixStream::pair().unwrap();
        // More than the two buffers hold: the multishot receive runs them dry.
        std::io::Write::write_all(&mut client, &[7u8; 32 * 1024]).unwrap();
        let left_behind = rt.block_on(async move {
            let mut stream = op::recv_multishot(&SharedFd::new(server.into()));
            let held = [
                stream.next().await.unwrap().unwrap(),
                stream.next().await.unwrap().unwrap(),
            ];
            // The group runs dry; polled, the stream waits for buffers to come back (a wake
            // of its waker by the completion path meanwhile is contained there).
            let w = Waker::from(Arc::new(PanicsWhenWoken));
            let mut next = Box::pin(stream.next());
            while handle.stats().total().enobufs_stalls == 0 {
                assert!(next
                    .as_mut()
                    .poll(&mut Context::from_waker(&w))
                    .is_pending());
                ringsteal_rt::yield_now().await;
            }
            assert!(next
                .as_mut()
                .poll(&mut Context::from_waker(&w))
                .is_pending());
            drop(next);
            (stream, held)
        });
        drop(rt);
        drop((left_behind, client));
    });
}
