//! The poll-based adapters on real sockets, under every wake mechanism and ring mode: what
//! the `futures-io` and `tokio::io` traits promise (a pending read takes nothing, a write
//! counts only what the kernel took, flush and shutdown mean what they say), and how the
//! adapter and the owned-buffer API of one stream take turns (ADR-0014).

#![cfg(all(feature = "tokio-io", feature = "futures-io"))]

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
#[path = "../../ringsteal-net/tests/support/mod.rs"]
mod support;

use std::future::poll_fn;
use std::sync::Arc;
use std::task::Poll;

use common::{with_every_runtime, Rng};
use ringsteal_compat::PollIo;
use ringsteal_net::TcpStream;
use ringsteal_rt::time::timeout;
use ringsteal_rt::Placement;
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Echoes through the tokio traits until end of stream, then shuts down.
async fn echo_tokio(stream: TcpStream) {
    let mut io = PollIo::new(stream);
    let mut buf = vec![0u8; 7919];
    loop {
        let n = io.read(&mut buf).await.expect("echo read");
        if n == 0 {
            break;
        }
        io.write_all(&buf[..n]).await.expect("echo write");
    }
    io.shutdown().await.expect("echo shutdown");
}

#[test]
fn tokio_traits_echo_a_self_checking_stream_across_shards() {
    with_every_runtime("tokio traits echo", 2, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let echo = ringsteal_rt::spawn_with(Placement::Pinned(1), echo_tokio(server));
            let (r, w) = client.into_split();
            const LEN: u64 = 512 * 1024;
            let writer = ringsteal_rt::spawn_with(Placement::Pinned(0), async move {
                let mut w = PollIo::new(w);
                let mut rng = Rng::new(7);
                let mut pos = 0;
                while pos < LEN {
                    let len = (1 + rng.below(20_000)).min(LEN - pos);
                    w.write_all(&stream_bytes(1, pos, len as usize))
                        .await
                        .unwrap();
                    pos += len;
                }
                w.shutdown().await.unwrap();
                w.into_inner().forget();
            });
            let mut r = PollIo::new(r);
            let mut got = Vec::new();
            timeout(OP_GUARD * 2, r.read_to_end(&mut got))
                .await
                .expect("echo stalled")
                .unwrap();
            assert_eq!(got.len() as u64, LEN);
            check_stream(1, 0, &got);
            writer.await.unwrap();
            echo.await.unwrap();
        })
    });
}

/// In a module of its own: futures' extension traits have the same method names as tokio's.
mod futures_io_traits {
    use futures::io::{AsyncReadExt, AsyncWriteExt};
    use ringsteal_compat::PollIo;
    use ringsteal_net::UnixStream;
    use ringsteal_rt::Placement;

    use super::common::with_every_runtime;
    use super::support::stream_bytes;

    #[test]
    fn futures_io_traits_echo_over_unix_streams() {
        with_every_runtime("futures-io echo", 2, |_, rt| {
            rt.block_on(async {
                let (a, b) = UnixStream::pair().unwrap();
                let echo = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                    let mut io = PollIo::new(b);
                    let mut buf = [0u8; 4096];
                    loop {
                        match io.read(&mut buf).await.unwrap() {
                            0 => break,
                            n => io.write_all(&buf[..n]).await.unwrap(),
                        }
                    }
                    io.close().await.unwrap();
                });
                let mut io = PollIo::new(a);
                let msg = stream_bytes(3, 0, 100_000);
                // Write and read back in turns small enough for the socket buffers.
                let mut back = Vec::new();
                for chunk in msg.chunks(10_000) {
                    io.write_all(chunk).await.unwrap();
                    let mut part = vec![0u8; chunk.len()];
                    io.read_exact(&mut part).await.unwrap();
                    back.extend_from_slice(&part);
                }
                io.close().await.unwrap();
                let mut rest = Vec::new();
                io.read_to_end(&mut rest).await.unwrap();
                assert!(rest.is_empty());
                assert_eq!(back, msg);
                echo.await.unwrap();
            })
        });
    }
}

#[test]
fn a_read_left_pending_forever_takes_no_bytes_and_holds_nothing() {
    with_every_runtime("pending read holds nothing", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let server = Arc::new(server);
            let mut io = PollIo::new(&*server);
            let mut buf = [0u8; 64];
            let first = poll_fn(|cx| Poll::Ready(io.poll_read(cx, &mut buf))).await;
            assert!(first.is_pending(), "nothing was sent yet");
            client.write_all(b"abc".to_vec()).await.0.unwrap();
            // The adapter is never polled again. The owned-buffer API gets every byte.
            let (res, got) = timeout(OP_GUARD, server.read(Vec::with_capacity(64)))
                .await
                .expect("the pending adapter read held the stream");
            assert_eq!(&got[..res.unwrap()], b"abc");
            drop(io);
        })
    });
}

#[test]
fn poll_write_counts_only_what_the_kernel_took_even_if_the_buffer_changes_after_pending() {
    // h2 rebuilds its write buffer after a `Pending`. The bytes of the abandoned call must
    // not go out: the peer sees stream 1 up to the counts returned, then stream 2.
    with_every_runtime("write after pending", 2, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let mut io = PollIo::new(client);
            let mut taken = 0u64;
            loop {
                let chunk = stream_bytes(1, taken, 65536);
                match poll_fn(|cx| Poll::Ready(io.poll_write(cx, &chunk))).await {
                    Poll::Ready(n) => taken += n.unwrap() as u64,
                    Poll::Pending => break, // the socket is full; this call sent nothing
                }
            }
            assert!(taken > 0);
            let reader = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                read_to_eof(&server).await
            });
            let other = stream_bytes(2, 0, 4096);
            io.write_all(&other).await.unwrap();
            io.shutdown().await.unwrap();
            let got = reader.await.unwrap();
            assert_eq!(got.len() as u64, taken + 4096, "extra or missing bytes");
            check_stream(1, 0, &got[..taken as usize]);
            check_stream(2, 0, &got[taken as usize..]);
        })
    });
}

#[test]
fn a_vectored_write_past_the_iovec_limit_skips_empty_slices_and_sends() {
    with_every_runtime("vectored past IOV_MAX", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let mut io = PollIo::new(client);
            let data = b"after 1,100 empty slices";
            let mut slices = vec![std::io::IoSlice::new(&[]); 1100];
            slices.push(std::io::IoSlice::new(data));
            let n = poll_fn(|cx| {
                tokio::io::AsyncWrite::poll_write_vectored(std::pin::Pin::new(&mut io), cx, &slices)
            })
            .await
            .unwrap();
            assert_eq!(n, data.len(), "a write of zero bytes");
            io.shutdown().await.unwrap();
            assert_eq!(read_to_eof(&server).await, data);
        })
    });
}

#[test]
fn shutdown_sends_the_fin_after_every_earlier_byte() {
    with_every_runtime("shutdown sends fin", 2, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let reader = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let got = read_to_eof(&server).await;
                // Our side of the connection is still open for reading after the FIN.
                server.write_all(b"bye".to_vec()).await.0.unwrap();
                got
            });
            let mut io = PollIo::new(client);
            let data = stream_bytes(5, 0, 300_000);
            io.write_all(&data).await.unwrap();
            io.shutdown().await.unwrap();
            let got = timeout(OP_GUARD, reader)
                .await
                .expect("no end of stream")
                .unwrap();
            assert_eq!(got, data);
            let mut bye = Vec::new();
            io.read_to_end(&mut bye).await.unwrap();
            assert_eq!(bye, b"bye");
        })
    });
}

#[test]
fn flush_and_writes_wait_for_an_owned_write_in_flight() {
    with_every_runtime("flush waits for owned write", 2, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let client = Arc::new(client);
            const BIG: usize = 8 << 20;
            // An owned write far larger than the socket buffers: it holds the write lane
            // until the peer has read most of it.
            let owned = {
                let c = client.clone();
                ringsteal_rt::spawn_with(Placement::Pinned(0), async move {
                    c.write_all(stream_bytes(1, 0, BIG)).await.0.unwrap();
                })
            };
            while !client_write_in_flight(&client) {
                ringsteal_rt::yield_now().await;
            }
            let mut io = PollIo::new(&*client);
            let flushed = poll_fn(|cx| Poll::Ready(io.poll_flush(cx))).await;
            assert!(
                flushed.is_pending(),
                "flush returned with an owned write in flight"
            );
            let tail = stream_bytes(9, 0, 1000);
            let reader = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let mut all = Vec::new();
                while all.len() < BIG + 1000 {
                    let (res, buf) = server.read(Vec::with_capacity(1 << 16)).await;
                    all.extend_from_slice(&buf[..res.unwrap()]);
                }
                all
            });
            // Written through the adapter while the owned write is in flight: after it.
            io.write_all(&tail).await.unwrap();
            poll_fn(|cx| io.poll_flush(cx)).await.unwrap();
            owned.await.unwrap();
            let got = reader.await.unwrap();
            check_stream(1, 0, &got[..BIG]);
            check_stream(9, 0, &got[BIG..]);
        })
    });
}

/// True while a write of `s` holds its write lane (the owned write is in the kernel).
fn client_write_in_flight(s: &TcpStream) -> bool {
    let mut io = PollIo::new(s);
    let waker = noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    io.poll_flush(&mut cx).is_pending()
}

#[test]
fn bytes_an_abandoned_owned_read_kept_come_first_through_the_adapter() {
    with_every_runtime("kept bytes through adapter", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let mut read = Box::pin(server.read(Vec::with_capacity(64)));
            assert!(poll_once(&mut read).await.is_none(), "nothing to read yet");
            let before = ops_completed();
            send_outside_the_ring(&client, b"late bytes");
            until_ops_completed(before, 1).await;
            drop(read); // completed in the kernel: its bytes are kept in the read lane
            client.write_all(b" then more".to_vec()).await.0.unwrap();
            let mut io = PollIo::new(server);
            let mut got = vec![0u8; 20];
            timeout(OP_GUARD, io.read_exact(&mut got))
                .await
                .expect("stalled")
                .unwrap();
            assert_eq!(&got, b"late bytes then more");
        })
    });
}

#[test]
fn serving_kept_bytes_does_not_forget_that_the_socket_is_readable() {
    // The adapter's poll is armed and has reported data waiting in the socket when it
    // serves a shorter run of kept bytes first: the socket must still count as readable
    // (no new report will come for data that is already there).
    with_every_runtime("kept bytes, then the socket", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let mut io = PollIo::new(&server);
            let mut got = vec![0u8; 20];
            {
                // Arms the adapter's poll: nothing to read yet.
                let mut first = Box::pin(io.read(&mut got));
                assert!(poll_once(&mut first).await.is_none());
            }
            let mut owned = Box::pin(server.read(Vec::with_capacity(64)));
            assert!(poll_once(&mut owned).await.is_none(), "nothing to read yet");
            let before = ops_completed();
            send_outside_the_ring(&client, b"late bytes");
            until_ops_completed(before, 1).await;
            drop(owned); // completed in the kernel: its bytes are kept in the read lane
            client.write_all(b" then more".to_vec()).await.0.unwrap();
            // One more request through the ring, so that the poll's report of that data has
            // been reaped before the adapter reads.
            ringsteal_rt::op::nop().await.unwrap();
            timeout(OP_GUARD, io.read_exact(&mut got))
                .await
                .expect("the data in the socket was never read")
                .unwrap();
            assert_eq!(&got, b"late bytes then more");
        })
    });
}

#[test]
fn owned_and_adapter_reads_with_random_drops_keep_a_stream_intact() {
    with_every_runtime("mixed reads stress", 2, |config, rt| {
        rt.block_on(async move {
            let (client, server) = tcp_pair().await;
            const LEN: u64 = 256 * 1024;
            let writer = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let mut rng = Rng::new(11);
                let mut pos = 0;
                while pos < LEN {
                    let len = (1 + rng.below(3000)).min(LEN - pos);
                    client
                        .write_all(stream_bytes(4, pos, len as usize))
                        .await
                        .0
                        .unwrap();
                    pos += len;
                    if rng.below(4) == 0 {
                        ringsteal_rt::yield_now().await;
                    }
                }
            });
            let mut rng = Rng::new(config as u64 + 100);
            let mut pos = 0u64;
            while pos < LEN {
                match rng.below(3) {
                    0 => {
                        let mut io = PollIo::new(&server);
                        let mut buf = vec![0u8; 1 + rng.below(4000) as usize];
                        let n = timeout(OP_GUARD, io.read(&mut buf))
                            .await
                            .expect("adapter read stalled")
                            .unwrap();
                        check_stream(4, pos, &buf[..n]);
                        pos += n as u64;
                    }
                    1 => {
                        let cap = 1 + rng.below(4000) as usize;
                        let (res, buf) = timeout(OP_GUARD, server.read(Vec::with_capacity(cap)))
                            .await
                            .expect("owned read stalled");
                        let n = res.unwrap();
                        check_stream(4, pos, &buf[..n]);
                        pos += n as u64;
                    }
                    _ => {
                        // An owned read dropped at once: its bytes, if any, stay in the lane.
                        let mut read = Box::pin(server.read(Vec::with_capacity(512)));
                        if let Some((res, buf)) = poll_once(&mut read).await {
                            let n = res.unwrap();
                            check_stream(4, pos, &buf[..n]);
                            pos += n as u64;
                        }
                    }
                }
            }
            assert_eq!(pos, LEN);
            writer.await.unwrap();
        })
    });
}

#[test]
fn a_read_half_adapter_refuses_to_write_and_a_write_half_to_read() {
    with_every_runtime("halves", 1, |_, rt| {
        rt.block_on(async {
            let (client, _server) = tcp_pair().await;
            let (r, w) = client.into_split();
            let mut r = PollIo::new(r);
            let err = r.write_all(b"x").await.unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::Unsupported);
            let mut w = PollIo::new(w);
            let err = w.read(&mut [0u8; 4]).await.unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::Unsupported);
        })
    });
}

#[test]
fn dropping_an_adapter_with_an_armed_poll_closes_the_socket() {
    with_every_runtime("armed poll dropped", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let socket = fd_target(std::os::fd::AsRawFd::as_raw_fd(&server));
            let mut io = PollIo::new(server);
            let mut buf = [0u8; 16];
            assert!(poll_fn(|cx| Poll::Ready(io.poll_read(cx, &mut buf)))
                .await
                .is_pending());
            drop(io); // cancels the armed POLL_ADD; the socket closes at its completion
            let (res, _) = timeout(OP_GUARD, client.read(Vec::with_capacity(8)))
                .await
                .expect("the peer never saw the socket close");
            assert_eq!(res.unwrap(), 0, "end of stream");
            drop(client);
            let deadline = std::time::Instant::now() + OP_GUARD;
            while still_open(&socket) {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the socket's descriptor leaked"
                );
                ringsteal_rt::yield_now().await;
            }
        })
    });
}

#[test]
fn shutting_down_a_connection_the_peer_reset_succeeds() {
    // A client that drops its socket with unread bytes resets the connection; an HTTP/2
    // server then shuts its side down, and must not fail because it is already closed.
    with_every_runtime("shutdown after reset", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            server.write_all(b"unread".to_vec()).await.0.unwrap();
            // A blocking send: "x" is in the server's receive queue when it returns.
            send_outside_the_ring(&client, b"x");
            drop(client); // unread bytes: the kernel sends a reset
            let mut io = PollIo::new(server);
            let mut buf = [0u8; 8];
            // Drain what arrived, until the reset (or the end) shows.
            loop {
                match timeout(OP_GUARD, io.read(&mut buf)).await.expect("stalled") {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
            io.shutdown().await.expect("shutdown of a reset connection");
        })
    });
}

#[test]
fn an_end_of_stream_reported_before_the_last_data_was_read_still_ends_the_read() {
    // The read side waits with a multishot poll, which reports the peer's FIN once. Here
    // that report is queued before the read that drains the data: the next read must see
    // end of stream, not wait for a report that will never come.
    with_every_runtime("eof after drained data", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let mut io = PollIo::new(server);
            let mut buf = [0u8; 64];
            assert!(poll_fn(|cx| Poll::Ready(io.poll_read(cx, &mut buf)))
                .await
                .is_pending());
            client.write_all(b"last words".to_vec()).await.0.unwrap();
            client.shutdown(std::net::Shutdown::Write).await.unwrap();
            for _ in 0..4 {
                ringsteal_rt::yield_now().await; // the reports are reaped and queued
            }
            let n = timeout(OP_GUARD, io.read(&mut buf)).await.unwrap().unwrap();
            assert_eq!(&buf[..n], b"last words", "one short read drains the data");
            let n = timeout(OP_GUARD, io.read(&mut buf))
                .await
                .expect("the end of stream was lost with the stale reports")
                .unwrap();
            assert_eq!(n, 0);
        })
    });
}

/// A waker that does nothing (`Waker::noop` needs Rust 1.85; the MSRV is 1.80).
fn noop_waker() -> std::task::Waker {
    struct Noop;
    impl std::task::Wake for Noop {
        fn wake(self: std::sync::Arc<Self>) {}
    }
    std::task::Waker::from(std::sync::Arc::new(Noop))
}

/// Software transmit timestamps (`SO_TIMESTAMPING`): every send queues an entry on the
/// socket's error queue, which the kernel reports as `POLLERR` until it is read with
/// `MSG_ERRQUEUE`, while data still flows and `recv` still says `EAGAIN` without any.
fn enable_tx_timestamps(fd: i32) {
    const SO_TIMESTAMPING_OLD: i32 = 37;
    const TX_SOFTWARE: u32 = 1 << 1;
    const SOFTWARE: u32 = 1 << 4;
    const OPT_TSONLY: u32 = 1 << 11;
    let flags: u32 = TX_SOFTWARE | SOFTWARE | OPT_TSONLY;
    // SAFETY: the kernel reads one u32 that outlives the call.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            SO_TIMESTAMPING_OLD,
            (&flags as *const u32).cast(),
            std::mem::size_of::<u32>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
}

/// An error report that passes (an error-queue entry) makes a read try once, not for good:
/// with no data the read is pending (as tokio's), instead of retrying `recv` for ever inside
/// one poll, and the peer's next bytes arrive.
#[test]
fn a_passing_error_report_does_not_make_a_read_spin() {
    with_every_runtime("pollerr once", 1, |_, rt| {
        rt.block_on(async {
            let (a, b) = tcp_pair().await;
            let fd = std::os::fd::AsRawFd::as_raw_fd(&a);
            enable_tx_timestamps(fd);
            let mut io = PollIo::new(a);
            let mut buf = [0u8; 64];
            let pending = poll_fn(|cx| Poll::Ready(io.poll_read(cx, &mut buf).is_pending())).await;
            assert!(pending, "nothing was sent yet");
            // A write; its timestamp goes to the error queue, which wakes the read's poll.
            let n = poll_fn(|cx| std::pin::Pin::new(&mut io).poll_write(cx, b"x")).await;
            assert_eq!(n.unwrap(), 1);
            let (res, got) = b.read(Vec::with_capacity(8)).await;
            assert_eq!(&got[..res.unwrap()], b"x");
            // Until the kernel reports the error-queue entry (hang guard: it always does)...
            timeout(OP_GUARD, async {
                loop {
                    let mut pfd = libc::pollfd {
                        fd,
                        events: 0,
                        revents: 0,
                    };
                    // SAFETY: one pollfd that outlives the call; no wait.
                    let n = unsafe { libc::poll(&mut pfd, 1, 0) };
                    if n == 1 && pfd.revents & libc::POLLERR != 0 {
                        break;
                    }
                    ringsteal_rt::yield_now().await;
                }
            })
            .await
            .expect("no POLLERR report");
            // ...and, usually, the shard has reaped the readiness it woke: the enter that
            // completes a NOP submitted now runs the poll's completion work if it was queued
            // by then (if not, the read below is pending all the same, and the case is only
            // less strict).
            ringsteal_rt::op::nop().await.unwrap();
            let pending = poll_fn(|cx| Poll::Ready(io.poll_read(cx, &mut buf).is_pending())).await;
            assert!(pending, "a read with no data was not pending");
            b.write_all(b"late".to_vec()).await.0.unwrap();
            let n = timeout(OP_GUARD, poll_fn(|cx| io.poll_read(cx, &mut buf)))
                .await
                .expect("hang guard")
                .unwrap();
            assert_eq!(&buf[..n], b"late");
        })
    });
}

/// Counts the wakes of the task polling through it.
#[derive(Default)]
struct WakeCount(std::sync::atomic::AtomicUsize);

impl std::task::Wake for WakeCount {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Fills the send buffer through `io` (the peer reads nothing), then lets the shard run 50
/// ticks: returns how many times the waiting write was woken meanwhile. A write that waits
/// for room is woken only when room appears (never, here); one whose wait completes at once
/// each time it is armed is woken every tick.
async fn wakes_of_a_write_waiting_for_room(io: &mut PollIo<TcpStream>) -> usize {
    let chunk = vec![7u8; 65536];
    let wakes = Arc::new(WakeCount::default());
    let waker = std::task::Waker::from(wakes.clone());
    fill_until_full(io, &waker, &wakes, &chunk).await;
    let mut woken = 0;
    for _ in 0..50 {
        ringsteal_rt::yield_now().await;
        if wakes.0.swap(0, std::sync::atomic::Ordering::SeqCst) > 0 {
            woken += 1;
            fill_until_full(io, &waker, &wakes, &chunk).await;
        }
    }
    woken
}

/// Writes through `io` until a write waits for room. A `Pending` whose waker is woken by the
/// shard's next reap is the yield after a streak of ready writes (`io/poll/streak.rs`), not
/// a full buffer: write on.
async fn fill_until_full(
    io: &mut PollIo<TcpStream>,
    waker: &std::task::Waker,
    wakes: &WakeCount,
    chunk: &[u8],
) {
    loop {
        let mut cx = std::task::Context::from_waker(waker);
        while io.poll_write(&mut cx, chunk).is_ready() {}
        ringsteal_rt::yield_now().await;
        if wakes.0.swap(0, std::sync::atomic::Ordering::SeqCst) == 0 {
            break;
        }
    }
}

/// A write waiting for room does not spin on a condition that stays true and says nothing
/// of room: the peer's half-close (reported to every poll) or an error-queue entry nobody
/// reads (a transmit timestamp). (A one-shot poll saw either at once every time it was
/// armed: the write was woken, found the buffer full, and waited again, every tick.)
#[test]
fn a_write_waiting_for_room_is_not_woken_by_a_half_close_or_an_error_queue_entry() {
    with_every_runtime("write wait edges", 1, |_, rt| {
        rt.block_on(async {
            let (a, b) = tcp_pair().await;
            timeout(OP_GUARD, b.shutdown(std::net::Shutdown::Write))
                .await
                .expect("hang guard")
                .unwrap();
            let mut io = PollIo::new(a);
            let woken = wakes_of_a_write_waiting_for_room(&mut io).await;
            assert!(
                woken <= 2,
                "woken {woken} times in 50 ticks after a half-close"
            );

            let (a, b) = tcp_pair().await;
            enable_tx_timestamps(std::os::fd::AsRawFd::as_raw_fd(&a));
            let mut io = PollIo::new(a);
            let woken = wakes_of_a_write_waiting_for_room(&mut io).await;
            assert!(
                woken <= 2,
                "woken {woken} times in 50 ticks with an error queue"
            );
            drop(b);
        })
    });
}

/// tokio's `stream.split()` gives borrowed halves that tokio's traits work on; ringsteal's
/// borrowed halves go into `PollIo` as the owned ones do (tokio-util's `FramedRead` and
/// `FramedWrite` over `stream.split()` port as they are).
#[test]
fn borrowed_halves_go_into_the_adapter_as_owned_ones_do() {
    with_every_runtime("borrowed halves", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let (r, w) = client.split();
            let (mut r, mut w) = (PollIo::new(r), PollIo::new(w));
            w.write_all(b"through a borrowed half").await.unwrap();
            let (res, got) = server.read_exact(vec![0u8; 23]).await;
            res.unwrap();
            assert_eq!(got, b"through a borrowed half");
            server.write_all(b"back".to_vec()).await.0.unwrap();
            let mut back = [0u8; 4];
            r.read_exact(&mut back).await.unwrap();
            assert_eq!(&back, b"back");
        })
    });
}

/// A reader whose socket always has bytes never waits, so each of its `.await`s is `Ready`:
/// it must still yield now and then (as tokio's coop budget makes it), and let the shard take
/// in its completions before it runs again, or the other tasks of its shard, and their I/O,
/// wait for its whole loop. Before the yield, the other tasks here ran 0 times; with a yield
/// that only requeued the reader, the shard took in completions once a tick of 61 polls
/// (27 NOPs completed during the 781 yields, against 782 now; the block_on future, polled
/// between ticks, would not show it: the reader is a task).
#[test]
fn a_reader_whose_socket_stays_ready_still_lets_its_shard_run_other_tasks_and_their_io() {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    with_every_runtime("streak yield", 1, |config, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            // Queued in full before the reader starts: every read of it is ready at once.
            client.write_all(vec![7u8; 50_000]).await.0.unwrap();
            client.shutdown(std::net::Shutdown::Write).await.unwrap();
            let (spins, nops) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
            let spinner = ringsteal_rt::spawn({
                let spins = spins.clone();
                async move {
                    loop {
                        spins.fetch_add(1, Relaxed);
                        ringsteal_rt::yield_now().await;
                    }
                }
            });
            // Each NOP completes as it is submitted, but only a reap takes its completion in.
            let nopper = ringsteal_rt::spawn({
                let nops = nops.clone();
                async move {
                    loop {
                        ringsteal_rt::op::nop().await.unwrap();
                        nops.fetch_add(1, Relaxed);
                    }
                }
            });
            // Let the others start, then read in a task of the same (only) shard.
            ringsteal_rt::yield_now().await;
            let (spins_before, nops_before) = (spins.load(Relaxed), nops.load(Relaxed));
            let reader = ringsteal_rt::spawn(async move {
                let mut io = PollIo::new(server);
                let (mut buf, mut total) = ([0u8; 1], 0);
                loop {
                    let n = io.read(&mut buf).await.unwrap();
                    if n == 0 {
                        break total;
                    }
                    total += n;
                }
            });
            assert_eq!(reader.await.unwrap(), 50_000);
            spinner.abort();
            nopper.abort();
            // 50,000 reads of a byte: a yield after every 64 at most, 781 in all.
            let spins = spins.load(Relaxed) - spins_before;
            assert!(spins >= 781 / 2, "the other task ran {spins} times");
            // (With SQPOLL a NOP completes when the kernel's thread gets to it, not by the
            // next reap: no count to expect.)
            let nops = nops.load(Relaxed) - nops_before;
            assert!(
                nops >= 781 / 4 || config == common::Config::SqPoll,
                "{nops} NOPs completed"
            );
        })
    });
}
