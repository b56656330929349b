//! Receive streams (`op::recv_multishot`, `op::recvmsg_multishot`): data in order through a
//! buffer group far smaller than the data (the kernel runs out of buffers, the stream waits
//! and re-arms), buffers given back from other threads restarting a stalled stream, end of
//! file and errors, datagrams with their sources; and the same streams on the single-shot
//! fallbacks the builder can force. Under every wake and ring configuration.

mod common;
mod stream_support;

use std::collections::VecDeque;
use std::io::Write;
use std::net::UdpSocket;
use std::os::unix::net::UnixStream;
use std::sync::mpsc;

use common::{spin_until, under_every_config};
use ringsteal_rt::op::{self, SharedFd};
use ringsteal_rt::RuntimeHandle;
use stream_support::{pattern_bytes, tcp_pair, write_pattern, Path, PatternCheck};

#[test]
fn ten_mib_arrive_in_order_through_a_group_of_four_small_buffers() {
    const TOTAL: u64 = 10 << 20;
    under_every_config("recv stream, tiny group", 1, |config, b| {
        for path in Path::RECV {
            let rt = path.apply(b.clone().recv_buffers(4, 4096)).build().unwrap();
            let stats = rt.block_on(async {
                let (server, mut client) = tcp_pair();
                let writer =
                    std::thread::spawn(move || write_pattern(&mut client, TOTAL, 64 * 1024));
                let mut stream = op::recv_multishot(&SharedFd::new(server.into()));
                let mut check = PatternCheck::default();
                // Hold up to two buffers at a time, as a parser that needs the next one
                // before it lets go of the last would: the group runs dry much sooner.
                let mut held = VecDeque::new();
                while let Some(buf) = stream.next().await {
                    let buf = buf.unwrap_or_else(|e| panic!("{config:?} {path:?}: {e}"));
                    assert_eq!(
                        buf.is_provided(),
                        path.provided_buffers(),
                        "{config:?} {path:?}"
                    );
                    assert!(!buf.is_empty() && buf.len() <= 4096, "{config:?} {path:?}");
                    held.push_back(buf);
                    if held.len() > 2 {
                        check.feed(&held.pop_front().unwrap());
                    }
                }
                for buf in held {
                    check.feed(&buf);
                }
                writer.join().unwrap().unwrap();
                assert_eq!(check.offset, TOTAL, "{config:?} {path:?}: bytes received");
                RuntimeHandle::current().stats().total()
            });
            assert_eq!(
                stats.bufs_in_use, 0,
                "{config:?} {path:?}: every buffer came back"
            );
            if path.provided_buffers() {
                assert!(
                    stats.enobufs_stalls > 0,
                    "{config:?}: the group never ran dry: {stats:?}"
                );
                assert!(
                    stats.stream_rearms >= stats.enobufs_stalls,
                    "{config:?}: {stats:?}"
                );
            } else {
                assert_eq!(stats.enobufs_stalls, 0, "{config:?} {path:?}");
            }
        }
    });
}

#[test]
fn buffers_dropped_on_another_thread_restart_a_stalled_stream() {
    under_every_config("recv stream, stalled", 1, |config, b| {
        let rt = b.recv_buffers(2, 4096).build().unwrap();
        let handle = rt.handle();
        rt.block_on(async move {
            let (server, mut client) = tcp_pair();
            // More than the two buffers hold: the multishot receive runs them dry.
            const TOTAL: u64 = 64 * 1024;
            write_pattern(&mut client, TOTAL, TOTAL as usize).unwrap();
            drop(client);
            let mut stream = op::recv_multishot(&SharedFd::new(server.into()));
            let first = stream.next().await.unwrap().unwrap();
            let second = stream.next().await.unwrap().unwrap();
            let mut check = PatternCheck::default();
            check.feed(&first);
            check.feed(&second);
            assert_eq!(handle.stats().total().bufs_in_use, 2, "{config:?}");
            // Another thread holds both buffers; it lets go only once the stream has stalled.
            let (tx, rx) = mpsc::channel();
            let h = handle.clone();
            let holder = std::thread::spawn(move || {
                let bufs: Vec<ringsteal_rt::buf::RecvBuf> = rx.recv().unwrap();
                spin_until(|| h.stats().total().enobufs_stalls >= 1);
                drop(bufs);
            });
            tx.send(vec![first, second]).unwrap();
            // This waits until the holder's drop brings the buffers back.
            while let Some(buf) = stream.next().await {
                check.feed(&buf.unwrap());
            }
            holder.join().unwrap();
            assert_eq!(check.offset, TOTAL, "{config:?}");
            let stats = handle.stats().total();
            assert!(
                stats.enobufs_stalls >= 1 && stats.stream_rearms >= 1,
                "{config:?}: {stats:?}"
            );
            assert_eq!(stats.bufs_in_use, 0, "{config:?}");
        });
    });
}

#[test]
fn a_recv_stream_ends_at_end_of_file_and_after_an_error() {
    under_every_config("recv stream, eof and errors", 1, |config, b| {
        for path in Path::RECV {
            let rt = path.apply(b.clone()).build().unwrap();
            rt.block_on(async {
                // End of file: the data, then None.
                let (rx, mut tx) = UnixStream::pair().unwrap();
                tx.write_all(b"last words").unwrap();
                drop(tx);
                let mut stream = op::recv_multishot(&SharedFd::new(rx.into()));
                let mut got = Vec::new();
                while let Some(buf) = stream.next().await {
                    got.extend_from_slice(&buf.unwrap());
                }
                assert_eq!(got, b"last words", "{config:?} {path:?}");
                assert!(
                    stream.next().await.is_none(),
                    "{config:?} {path:?}: stays ended"
                );

                // A reset connection: ECONNRESET, then None.
                let (server, client) = tcp_pair();
                let mut stream = op::recv_multishot(&SharedFd::new(server.into()));
                let linger = libc::linger {
                    l_onoff: 1,
                    l_linger: 0,
                };
                // SAFETY: setsockopt reads `linger` for the call only.
                let rc = unsafe {
                    libc::setsockopt(
                        std::os::fd::AsRawFd::as_raw_fd(&client),
                        libc::SOL_SOCKET,
                        libc::SO_LINGER,
                        (&linger as *const libc::linger).cast(),
                        std::mem::size_of::<libc::linger>() as libc::socklen_t,
                    )
                };
                assert_eq!(rc, 0);
                drop(client);
                let err = stream.next().await.expect("an error").unwrap_err();
                assert_eq!(
                    err.kind(),
                    std::io::ErrorKind::ConnectionReset,
                    "{config:?} {path:?}"
                );
                assert!(stream.next().await.is_none(), "{config:?} {path:?}");
            });
        }
    });
}

#[test]
fn datagrams_arrive_whole_with_their_source_addresses() {
    const N: usize = 64;
    under_every_config("recvmsg stream", 1, |config, b| {
        for path in Path::RECV {
            let rt = path.apply(b.clone()).build().unwrap();
            rt.block_on(async {
                let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
                let to = rx.local_addr().unwrap();
                let mut stream = op::recvmsg_multishot(&SharedFd::new(rx.into()));
                let senders: Vec<UdpSocket> = (0..2)
                    .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
                    .collect();
                let mut sent = Vec::new();
                for i in 0..N {
                    let s = &senders[i % 2];
                    // Sizes 0.. 1000 bytes, the empty datagram included.
                    let data = pattern_bytes(i as u64 * 1000, (i * 15) % 1000);
                    s.send_to(&data, to).unwrap();
                    sent.push((s.local_addr().unwrap(), data));
                }
                // UDP on loopback keeps order per sender; check per sender.
                let mut next = [0usize, 1];
                for _ in 0..N {
                    let d = stream.next().await.unwrap().unwrap();
                    let from = d.source().expect("an IPv4 source");
                    let k = senders
                        .iter()
                        .position(|s| s.local_addr().unwrap() == from)
                        .unwrap();
                    let (addr, data) = &sent[next[k]];
                    assert_eq!(from, *addr, "{config:?} {path:?}");
                    assert_eq!(
                        d.payload(),
                        &data[..],
                        "{config:?} {path:?}: datagram {}",
                        next[k]
                    );
                    assert!(!d.is_truncated(), "{config:?} {path:?}");
                    next[k] += 2;
                }
            });
        }
    });
}

#[test]
fn a_datagram_larger_than_its_buffer_is_truncated_and_says_so() {
    under_every_config("recvmsg stream, truncation", 1, |config, b| {
        for path in Path::RECV {
            // 512-byte buffers: 144 bytes of header and address room, 368 of payload on the
            // provided path; 512 bytes of payload on the heap fallback.
            let rt = path.apply(b.clone().recv_buffers(4, 512)).build().unwrap();
            rt.block_on(async {
                let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
                let to = rx.local_addr().unwrap();
                let mut stream = op::recvmsg_multishot(&SharedFd::new(rx.into()));
                let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
                let big = pattern_bytes(0, 2000);
                tx.send_to(&big, to).unwrap();
                tx.send_to(b"small", to).unwrap();
                let d = stream.next().await.unwrap().unwrap();
                assert!(d.is_truncated(), "{config:?} {path:?}");
                let room = if path.provided_buffers() {
                    512 - 144
                } else {
                    512
                };
                assert_eq!(d.payload(), &big[..room], "{config:?} {path:?}");
                let d = stream.next().await.unwrap().unwrap();
                assert_eq!(d.payload(), b"small", "{config:?} {path:?}");
                assert!(!d.is_truncated(), "{config:?} {path:?}");
            });
        }
    });
}

#[test]
fn a_stream_handed_between_shards_keeps_its_order_and_re_arms_where_it_is_polled() {
    const TOTAL: u64 = 4 << 20;
    under_every_config("recv stream across shards", 2, |config, b| {
        let rt = b.recv_buffers(4, 4096).build().unwrap();
        rt.block_on(async {
            let (server, mut client) = tcp_pair();
            let writer = std::thread::spawn(move || write_pattern(&mut client, TOTAL, 64 * 1024));
            let mut stream = op::recv_multishot(&SharedFd::new(server.into()));
            let mut check = PatternCheck::default();
            // Shard 0 and shard 1 take turns, a quarter of the data each time.
            for turn in 0..4u64 {
                let until = TOTAL * (turn + 1) / 4;
                let shard = (turn % 2) as usize;
                (stream, check) =
                    ringsteal_rt::spawn_with(ringsteal_rt::Placement::Pinned(shard), async move {
                        while check.offset < until {
                            let buf = stream.next().await.expect("more data").unwrap();
                            check.feed(&buf);
                        }
                        (stream, check)
                    })
                    .await
                    .unwrap();
            }
            assert!(stream.next().await.is_none(), "{config:?}: end of file");
            writer.join().unwrap().unwrap();
            assert_eq!(check.offset, TOTAL, "{config:?}");
            let stats = RuntimeHandle::current().stats();
            assert!(stats.total().enobufs_stalls > 0, "{config:?}: {stats:?}");
            assert_eq!(stats.total().bufs_in_use, 0, "{config:?}");
        });
    });
}

#[test]
fn buffers_returned_by_several_threads_at_once_restart_every_stall() {
    // Stress: every buffer is checked in order here, then dropped by one of three threads,
    // while the stream keeps running its group of four dry.
    const TOTAL: u64 = 8 << 20;
    under_every_config("recv stream, returns from many threads", 1, |config, b| {
        let rt = b.recv_buffers(4, 4096).build().unwrap();
        let stats = rt.block_on(async {
            let (server, mut client) = tcp_pair();
            let writer = std::thread::spawn(move || write_pattern(&mut client, TOTAL, 32 * 1024));
            let (senders, droppers): (Vec<_>, Vec<_>) = (0..3)
                .map(|_| {
                    let (tx, rx) = mpsc::channel::<ringsteal_rt::buf::RecvBuf>();
                    (
                        tx,
                        std::thread::spawn(move || rx.into_iter().for_each(drop)),
                    )
                })
                .unzip();
            let mut stream = op::recv_multishot(&SharedFd::new(server.into()));
            let mut check = PatternCheck::default();
            let mut n = 0usize;
            while let Some(buf) = stream.next().await {
                let buf = buf.unwrap();
                check.feed(&buf);
                senders[n % 3].send(buf).unwrap();
                n += 1;
            }
            drop(senders);
            droppers.into_iter().for_each(|d| d.join().unwrap());
            writer.join().unwrap().unwrap();
            assert_eq!(check.offset, TOTAL, "{config:?}");
            RuntimeHandle::current().stats().total()
        });
        assert_eq!(stats.bufs_in_use, 0, "{config:?}");
    });
}
