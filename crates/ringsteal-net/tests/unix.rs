//! Unix-domain sockets under every wake mechanism and ring mode: path and abstract names,
//! pairs, datagrams, halves, and the errors of bad paths; incoming connections, receive
//! streams and datagram streams on every fallback path.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::io::ErrorKind;
use std::os::fd::AsRawFd;
use std::os::linux::net::SocketAddrExt;
use std::path::PathBuf;

use common::{under_every_config, unique, with_every_runtime, Config};
use ringsteal_net::{UnixDatagram, UnixListener, UnixStream};
use ringsteal_rt::time::timeout;
use ringsteal_rt::{Feature, Runtime};
use support::{DATAGRAM_PATHS, OP_GUARD};

fn temp_socket_path() -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "ringsteal-net-unix-{}-{}",
        std::process::id(),
        unique()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    (dir.join("sock"), dir)
}

#[test]
fn a_stream_connects_to_a_path_and_carries_bytes_both_ways() {
    with_every_runtime("unix path stream", 1, |_, rt| {
        rt.block_on(async {
            let (path, dir) = temp_socket_path();
            let listener = UnixListener::bind(&path).unwrap();
            assert_eq!(
                listener.local_addr().unwrap().as_pathname(),
                Some(path.as_path())
            );
            let client = UnixStream::connect(&path).await.unwrap();
            let (server, peer) = listener.accept().await.unwrap();
            assert!(peer.is_unnamed());
            assert_eq!(
                client.peer_addr().unwrap().as_pathname(),
                Some(path.as_path())
            );
            // More than the socket buffer holds: the write completes as the server reads.
            let ((w, _), (r, got)) = support::join(
                client.write_all(vec![9u8; 500_000]),
                server.read_exact(vec![0u8; 500_000]),
            )
            .await;
            w.unwrap();
            r.unwrap();
            assert!(got.iter().all(|&b| b == 9));
            server.write_all(b"back".to_vec()).await.0.unwrap();
            let (res, buf) = client.read_exact(vec![0; 4]).await;
            res.unwrap();
            assert_eq!(buf, b"back");
            std::fs::remove_dir_all(dir).unwrap();
        })
    });
}

#[test]
fn abstract_names_need_no_file_and_are_exclusive() {
    with_every_runtime("unix abstract", 1, |_, rt| {
        rt.block_on(async {
            let name = format!(
                "\0ringsteal-test-abstract-{}-{}",
                std::process::id(),
                unique()
            );
            let listener = UnixListener::bind(&name).unwrap();
            let addr = listener.local_addr().unwrap();
            assert_eq!(addr.as_abstract_name(), Some(name.as_bytes()[1..].as_ref()));
            assert_eq!(addr.as_pathname(), None);
            let err = UnixListener::bind(&name).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::AddrInUse);
            let client = UnixStream::connect(&name).await.unwrap();
            let (server, _) = listener.accept().await.unwrap();
            client.write_all(b"abstract".to_vec()).await.0.unwrap();
            let (res, buf) = server.read_exact(vec![0; 8]).await;
            res.unwrap();
            assert_eq!(buf, b"abstract");
        })
    });
}

#[test]
fn addresses_built_from_std_bind_and_connect() {
    with_every_runtime("unix bind_addr", 1, |_, rt| {
        rt.block_on(async {
            // A pathname and an abstract name, each made as tokio code makes them.
            let (path, dir) = temp_socket_path();
            let name = format!("ringsteal-test-addr-{}-{}", std::process::id(), unique());
            let addrs = [
                std::os::unix::net::SocketAddr::from_pathname(&path).unwrap(),
                std::os::unix::net::SocketAddr::from_abstract_name(&name).unwrap(),
            ];
            for std_addr in addrs {
                let addr = ringsteal_net::unix::SocketAddr::from(std_addr);
                let listener = UnixListener::bind_addr(&addr).unwrap();
                assert_eq!(listener.local_addr().unwrap(), addr);
                let err = UnixListener::bind_addr(&addr).unwrap_err();
                assert_eq!(err.kind(), ErrorKind::AddrInUse, "{addr:?}");
                let client = UnixStream::connect_addr(&addr).await.unwrap();
                let (server, _) = listener.accept().await.unwrap();
                client.write_all(b"by address".to_vec()).await.0.unwrap();
                let (res, buf) = server.read_exact(vec![0; 10]).await;
                res.unwrap();
                assert_eq!(buf, b"by address");
            }
            assert!(path.exists(), "the pathname listener made its file");
            // An unnamed address names nothing to bind or connect to.
            let (a, _b) = UnixStream::pair().unwrap();
            let unnamed = a.local_addr().unwrap();
            assert!(unnamed.is_unnamed());
            let err = UnixListener::bind_addr(&unnamed).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput);
            let err = UnixStream::connect_addr(&unnamed).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput);
            // Nothing listens there any more once the listeners are gone.
            let gone = ringsteal_net::unix::SocketAddr::from(
                std::os::unix::net::SocketAddr::from_abstract_name(&name).unwrap(),
            );
            let err = UnixStream::connect_addr(&gone).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::ConnectionRefused);
            std::fs::remove_dir_all(dir).unwrap();
        })
    });
}

#[test]
fn addresses_convert_back_to_std_and_std_binds_them() {
    with_every_runtime("unix addr to std", 1, |_, rt| {
        rt.block_on(async {
            let (path, dir) = temp_socket_path();
            let name = format!("ringsteal-test-back-{}-{}", std::process::id(), unique());
            let path_listener = UnixListener::bind(&path).unwrap();
            let name_listener = UnixListener::bind(format!("\0{name}")).unwrap();
            // The kernel's reports of our listeners, as std's addresses.
            let from_path =
                std::os::unix::net::SocketAddr::from(path_listener.local_addr().unwrap());
            assert_eq!(from_path.as_pathname(), Some(path.as_path()));
            let from_name =
                std::os::unix::net::SocketAddr::from(name_listener.local_addr().unwrap());
            assert_eq!(from_name.as_abstract_name(), Some(name.as_bytes()));
            // std connects to them: the same sockets.
            for (std_addr, listener) in [(&from_path, &path_listener), (&from_name, &name_listener)]
            {
                let mut client = std::os::unix::net::UnixStream::connect_addr(std_addr).unwrap();
                std::io::Write::write_all(&mut client, b"std").unwrap();
                let (server, _) = listener.accept().await.unwrap();
                let (res, buf) = server.read_exact(vec![0; 3]).await;
                res.unwrap();
                assert_eq!(buf, b"std");
            }
            // Unnamed stays unnamed.
            let (a, _b) = UnixStream::pair().unwrap();
            let unnamed = std::os::unix::net::SocketAddr::from(a.local_addr().unwrap());
            assert!(unnamed.is_unnamed());
            // Each prints as std's (and so tokio's) prints it.
            let ours = [
                path_listener.local_addr().unwrap(),
                name_listener.local_addr().unwrap(),
                a.local_addr().unwrap(),
            ];
            for (ours, std_addr) in ours.iter().zip([&from_path, &from_name, &unnamed]) {
                assert_eq!(format!("{ours:?}"), format!("{std_addr:?}"));
            }
            std::fs::remove_dir_all(dir).unwrap();
        })
    });
}

#[test]
fn a_path_of_all_108_bytes_converts_to_unnamed_without_a_panic() {
    // std can neither make nor bind such an address; another program can, with the bytes
    // of `sun_path` all used and no NUL after them, and the kernel then reports it.
    let dir = std::env::temp_dir().join(format!("rs108-{}-{}", std::process::id(), unique()));
    std::fs::create_dir_all(&dir).unwrap();
    let prefix = dir.to_str().unwrap().len() + 1;
    assert!(
        prefix < 100,
        "the temporary directory leaves room for a name"
    );
    let path = dir.join("p".repeat(108 - prefix));
    let bytes = path.as_os_str().as_encoded_bytes();
    assert_eq!(bytes.len(), 108);
    // SAFETY: plain system calls on a descriptor this test owns; the address is a
    // `sockaddr_un` of the length given, which outlives the call.
    let fd = unsafe {
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "{}", std::io::Error::last_os_error());
        let mut addr: libc::sockaddr_un = std::mem::zeroed();
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (dst, src) in addr.sun_path.iter_mut().zip(bytes) {
            *dst = *src as libc::c_char;
        }
        let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
        let bound = libc::bind(fd, (&addr as *const libc::sockaddr_un).cast(), len);
        assert_eq!(bound, 0, "{}", std::io::Error::last_os_error());
        assert_eq!(libc::listen(fd, 1), 0);
        <std::os::unix::net::UnixListener as std::os::fd::FromRawFd>::from_raw_fd(fd)
    };
    let rt = Runtime::builder().shards(1).build().unwrap();
    rt.block_on(async {
        let listener = UnixListener::from_std(fd).unwrap();
        let ours = listener.local_addr().unwrap();
        assert_eq!(
            ours.as_pathname(),
            Some(path.as_path()),
            "the kernel reports it whole"
        );
        let std_addr = std::os::unix::net::SocketAddr::from(ours);
        assert!(std_addr.is_unnamed(), "{std_addr:?}");
    });
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_datagram_socket_shut_down_ends_a_waiting_receive_and_refuses_sends() {
    with_every_runtime("unix datagram shutdown", 1, |_, rt| {
        rt.block_on(async {
            let (a, b) = UnixDatagram::pair().unwrap();
            // A receive polled once waits: nothing is queued.
            let mut waiting = std::pin::pin!(a.recv(Vec::with_capacity(16)));
            let first = std::future::poll_fn(|cx| {
                std::task::Poll::Ready(std::future::Future::poll(waiting.as_mut(), cx).is_pending())
            })
            .await;
            assert!(first, "nothing was queued");
            a.shutdown(std::net::Shutdown::Read).unwrap();
            let (res, _) = timeout(OP_GUARD, waiting).await.expect("the receive ended");
            assert_eq!(res.unwrap(), 0, "an ended receive reads nothing");
            let (res, _) = a.recv(Vec::with_capacity(16)).await;
            assert_eq!(res.unwrap(), 0, "and so does a later one");
            // The sending side: a send fails, as tokio's does.
            a.shutdown(std::net::Shutdown::Write).unwrap();
            let (res, _) = a.send(b"late".to_vec()).await;
            assert_eq!(res.unwrap_err().kind(), ErrorKind::BrokenPipe);
            drop(b);
        })
    });
}

#[test]
fn bad_paths_fail_with_clear_errors() {
    with_every_runtime("unix bad paths", 1, |_, rt| {
        rt.block_on(async {
            let long = "/tmp/".to_string() + &"x".repeat(200);
            assert_eq!(
                UnixListener::bind(&long).unwrap_err().kind(),
                ErrorKind::InvalidInput
            );
            assert_eq!(
                UnixStream::connect(&long).await.unwrap_err().kind(),
                ErrorKind::InvalidInput
            );
            let (path, dir) = temp_socket_path();
            assert_eq!(
                UnixStream::connect(&path).await.unwrap_err().kind(),
                ErrorKind::NotFound
            );
            let _l = UnixListener::bind(&path).unwrap();
            assert_eq!(
                UnixListener::bind(&path).unwrap_err().kind(),
                ErrorKind::AddrInUse
            );
            let (res, buf) = UnixDatagram::unbound()
                .unwrap()
                .send_to(b"x".to_vec(), "a\0b")
                .await;
            assert_eq!(res.unwrap_err().kind(), ErrorKind::InvalidInput);
            assert_eq!(buf, b"x");
            std::fs::remove_dir_all(dir).unwrap();
        })
    });
}

/// As in std (and so tokio): binding the empty path autobinds a unique abstract name, and
/// connecting or sending to it is invalid, not a connection to the abstract name "".
#[test]
fn an_empty_path_autobinds_on_bind_and_is_invalid_to_connect_to() {
    with_every_runtime("unix empty path", 1, |_, rt| {
        rt.block_on(async {
            let a = UnixDatagram::bind("").unwrap();
            let b = UnixDatagram::bind("").unwrap();
            let (na, nb) = (a.local_addr().unwrap(), b.local_addr().unwrap());
            assert!(
                na.as_abstract_name().is_some_and(|n| !n.is_empty()),
                "{na:?}"
            );
            assert_ne!(na.as_abstract_name(), nb.as_abstract_name());
            let _l1 = UnixListener::bind("").unwrap();
            let _l2 = UnixListener::bind("").unwrap();
            assert_eq!(
                UnixStream::connect("").await.unwrap_err().kind(),
                ErrorKind::InvalidInput
            );
            let (res, _) = a.send_to(b"x".to_vec(), "").await;
            assert_eq!(res.unwrap_err().kind(), ErrorKind::InvalidInput);
        })
    });
}

#[test]
fn a_stream_pair_is_connected_and_unnamed() {
    with_every_runtime("unix pair", 2, |_, rt| {
        rt.block_on(async {
            let (a, b) = UnixStream::pair().unwrap();
            assert!(a.local_addr().unwrap().is_unnamed());
            assert!(b.peer_addr().unwrap().is_unnamed());
            {
                let (r, w) = a.split();
                assert!(r.local_addr().unwrap().is_unnamed());
                assert!(w.peer_addr().unwrap().is_unnamed());
            }
            let (b_rd, b_wr) = b.into_split();
            // Echo from shard 1.
            let echo = ringsteal_rt::spawn_with(ringsteal_rt::Placement::Pinned(1), async move {
                let (res, buf) = b_rd.read(Vec::with_capacity(64)).await;
                let n = res.unwrap();
                b_wr.write_all(buf).await.0.unwrap();
                n
            });
            a.write_all(b"pair".to_vec()).await.0.unwrap();
            let (res, buf) = a.read_exact(vec![0; 4]).await;
            res.unwrap();
            assert_eq!(buf, b"pair");
            assert_eq!(echo.await.unwrap(), 4);
            let std_a = a.into_std().unwrap();
            assert!(std_a.peer_addr().is_ok());
        })
    });
}

#[test]
fn datagrams_go_to_paths_abstract_names_and_connected_peers() {
    with_every_runtime("unix datagrams", 1, |_, rt| {
        rt.block_on(async {
            let (path, dir) = temp_socket_path();
            let server = UnixDatagram::bind(&path).unwrap();
            let client_name = format!("\0ringsteal-test-dgram-{}-{}", std::process::id(), unique());
            let client = UnixDatagram::bind(&client_name).unwrap();
            client
                .send_to(b"to a path".to_vec(), &path)
                .await
                .0
                .unwrap();
            let (res, buf) = server.recv_from(Vec::with_capacity(64)).await;
            let (n, from) = res.unwrap();
            assert_eq!(&buf[..n], b"to a path");
            assert_eq!(
                from.as_abstract_name(),
                Some(client_name.as_bytes()[1..].as_ref())
            );
            server
                .send_to(b"to a name".to_vec(), &client_name)
                .await
                .0
                .unwrap();
            let (res, buf) = client.recv(Vec::with_capacity(64)).await;
            assert_eq!(&buf[..res.unwrap()], b"to a name");

            client.connect(&path).unwrap();
            assert_eq!(
                client.peer_addr().unwrap().as_pathname(),
                Some(path.as_path())
            );
            client.send(b"connected".to_vec()).await.0.unwrap();
            let (res, buf) = server.recv(Vec::with_capacity(64)).await;
            assert_eq!(&buf[..res.unwrap()], b"connected");

            let (a, b) = UnixDatagram::pair().unwrap();
            a.send(Vec::new()).await.0.unwrap();
            let (res, _) = b.recv(Vec::with_capacity(8)).await;
            assert_eq!(res.unwrap(), 0, "an empty datagram is a datagram");
            let std_b = b.into_std().unwrap();
            assert!(std_b.local_addr().is_ok());
            std::fs::remove_dir_all(dir).unwrap();
        })
    });
}

#[test]
fn unix_sockets_convert_from_and_into_std_and_keep_their_descriptors() {
    with_every_runtime("unix std conversions", 1, |_, rt| {
        rt.block_on(async {
            let name = format!("\0ringsteal-test-std-{}-{}", std::process::id(), unique());
            let listener = UnixListener::bind(&name).unwrap();
            let fd = listener.as_raw_fd();
            let std_client = std::os::unix::net::UnixStream::connect_addr(
                &std::os::unix::net::SocketAddr::from_abstract_name(&name.as_bytes()[1..]).unwrap(),
            )
            .unwrap();
            let client = UnixStream::from_std(std_client).unwrap();
            let (server, _) = listener.accept().await.unwrap();
            client.write_all(b"adopted".to_vec()).await.0.unwrap();
            let (res, got) = server.read_exact(vec![0; 7]).await;
            res.unwrap();
            assert_eq!(got, b"adopted");
            let back = listener.into_std().unwrap();
            assert_eq!(
                back.as_raw_fd(),
                fd,
                "no duplicate when nothing else holds it"
            );
            let _second =
                std::os::unix::net::UnixStream::connect_addr(&back.local_addr().unwrap()).unwrap();
            back.accept()
                .expect("the handed-over listener still listens");

            let (std_a, std_b) = std::os::unix::net::UnixDatagram::pair().unwrap();
            let (a, b) = (
                UnixDatagram::from_std(std_a).unwrap(),
                UnixDatagram::from_std(std_b).unwrap(),
            );
            a.send(b"adopted datagram".to_vec()).await.0.unwrap();
            let (res, buf) = b.recv(Vec::with_capacity(64)).await;
            assert_eq!(&buf[..res.unwrap()], b"adopted datagram");
        })
    });
}

/// A server taking four connections from `incoming()`, dealt to the two shards in turn,
/// each echoing through a receive stream; returns how many accept requests `incoming()`
/// submitted.
fn echo_four_over_incoming(config: Config, rt: Runtime, what: &str) -> u64 {
    rt.block_on(async {
        let name = format!(
            "\0ringsteal-test-incoming-{}-{}",
            std::process::id(),
            unique()
        );
        let listener = UnixListener::bind(&name).unwrap();
        let server = ringsteal_rt::spawn(async move {
            let mut incoming = listener.incoming();
            let mut echoes = Vec::new();
            for _ in 0..4 {
                let stream = incoming.next().await.unwrap().unwrap();
                // Dealt to the shards in turn; each echoes what it receives.
                echoes.push(ringsteal_rt::spawn(async move {
                    let mut data = stream.recv_stream();
                    while let Some(buf) = data.next().await {
                        stream.write_all(buf.unwrap()).await.0.unwrap();
                    }
                    ringsteal_rt::current_shard().unwrap()
                }));
            }
            let mut shards = Vec::new();
            for e in echoes {
                shards.push(e.await.unwrap());
            }
            (shards, incoming.requests_submitted())
        });
        for i in 0..4u8 {
            let c = UnixStream::connect(&name).await.unwrap();
            c.write_all(vec![i; 1000]).await.0.unwrap();
            let (res, back) = c.read_exact(vec![0; 1000]).await;
            res.unwrap();
            assert_eq!(back, vec![i; 1000], "{config:?} {what}");
        }
        let (mut shards, submitted) = server.await.unwrap();
        shards.sort();
        assert_eq!(shards, [0, 0, 1, 1], "{config:?} {what}");
        submitted
    })
}

#[test]
fn incoming_connections_and_recv_streams_on_unix_sockets() {
    with_every_runtime("unix incoming and recv streams", 2, |config, rt| {
        echo_four_over_incoming(config, rt, "native");
    });
}

/// The same server on each fallback a kernel without the feature takes: single-shot
/// accepts (one request per connection) without multishot accept, single-shot receives
/// into heap buffers without multishot receive or without provided-buffer rings.
#[test]
fn incoming_connections_and_recv_streams_on_unix_sockets_on_every_fallback() {
    under_every_config(
        "unix incoming and recv streams, fallbacks",
        2,
        |config, b| {
            for without in [
                Feature::MultishotAccept,
                Feature::MultishotRecv,
                Feature::ProvidedBufferRing,
            ] {
                let rt = b.clone().without_feature(without).build().unwrap();
                let what = format!("without {without:?}");
                let submitted = echo_four_over_incoming(config, rt, &what);
                if without == Feature::MultishotAccept {
                    assert_eq!(submitted, 4, "{config:?}: one accept per connection");
                }
            }
        },
    );
}

#[test]
fn a_unix_datagram_stream_delivers_datagrams_with_the_senders_name() {
    with_every_runtime("unix datagram recv stream", 1, |config, rt| {
        rt.block_on(async {
            let (path, dir) = temp_socket_path();
            let rx = UnixDatagram::bind(&path).unwrap();
            let tx = UnixDatagram::unbound().unwrap();
            let mut datagrams = rx.recv_stream();
            for word in ["alpha", "beta"] {
                tx.send_to(word.as_bytes().to_vec(), &path).await.0.unwrap();
            }
            for word in ["alpha", "beta"] {
                let d = datagrams.next().await.unwrap().unwrap();
                assert_eq!(d.payload(), word.as_bytes(), "{config:?}");
                assert_eq!(d.source(), None, "{config:?}: not an IP address");
            }
            drop(datagrams);
            std::fs::remove_dir_all(dir).unwrap();
        });
    });
}

/// A Unix datagram stream delivers the same datagrams on every receive path (see
/// `DATAGRAM_PATHS`): each names its bound sender, an empty one is empty, and one larger
/// than the path's payload room is cut to it and marked truncated.
#[test]
fn a_unix_datagram_stream_names_its_sender_on_every_receive_path() {
    const LENS: [usize; 4] = [5, 0, 99, 2000];
    under_every_config("unix datagram stream paths", 1, |config, b| {
        for path in DATAGRAM_PATHS {
            let rt = path.apply(b.clone()).build().unwrap();
            rt.block_on(async {
                let (rx_path, dir) = temp_socket_path();
                let tx_path = dir.join("tx");
                let rx = UnixDatagram::bind(&rx_path).unwrap();
                let tx = UnixDatagram::bind(&tx_path).unwrap();
                let mut datagrams = rx.recv_stream();
                for len in LENS {
                    tx.send_to(vec![len as u8; len], &rx_path).await.0.unwrap();
                    let d = timeout(OP_GUARD, datagrams.next())
                        .await
                        .expect("the datagram never arrived")
                        .unwrap()
                        .unwrap();
                    let what = format!("{config:?} {}: {len} bytes", path.name);
                    assert_eq!(d.payload(), vec![len as u8; len.min(path.room)], "{what}");
                    assert_eq!(d.is_truncated(), len > path.room, "{what}");
                    // A sockaddr_un: the family, then the sender's path (NUL-terminated or
                    // not).
                    let name = &d.source_bytes()[2..];
                    let name = name.strip_suffix(b"\0").unwrap_or(name);
                    assert_eq!(name, tx_path.as_os_str().as_encoded_bytes(), "{what}");
                }
                drop(datagrams);
                std::fs::remove_dir_all(dir).unwrap();
            });
        }
    });
}

#[test]
fn a_writer_waiting_for_the_stream_is_not_overtaken_by_a_task_writing_in_a_loop() {
    const ROUNDS: usize = 200;
    const CHUNK: usize = 64 * 1024;
    with_every_runtime("two writers of one stream", 1, |config, rt| {
        rt.block_on(async move {
            let (a, b) = UnixStream::pair().unwrap();
            let a = std::sync::Arc::new(a);
            let mut std_b = b.into_std().unwrap();
            let reader = std::thread::spawn(move || {
                let mut all = Vec::new();
                std::io::Read::read_to_end(&mut std_b, &mut all).unwrap();
                all
            });
            let written = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let (a1, w1) = (a.clone(), written.clone());
            let looping = ringsteal_rt::spawn(async move {
                for _ in 0..ROUNDS {
                    a1.write_all(vec![1u8; CHUNK]).await.0.unwrap();
                    w1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            });
            // The loop is under way (its writes wait for the reader now and then, holding
            // the stream's write lane); a second writer asks for the stream.
            while written.load(std::sync::atomic::Ordering::SeqCst) == 0 {
                ringsteal_rt::yield_now().await;
            }
            let a2 = a.clone();
            let single = ringsteal_rt::spawn(async move {
                a2.write_all(vec![2u8; 1]).await.0.unwrap();
            });
            looping.await.unwrap();
            single.await.unwrap();
            drop(std::sync::Arc::into_inner(a).unwrap());
            let all = reader.join().unwrap();
            assert_eq!(all.len(), ROUNDS * CHUNK + 1, "{config:?}");
            let pos = all.iter().position(|&x| x == 2).unwrap();
            assert_eq!(pos % CHUNK, 0, "{config:?}: a write was split");
            assert!(
                pos / CHUNK < ROUNDS,
                "{config:?}: the second writer waited until the loop of {ROUNDS} writes ended"
            );
        })
    });
}

#[test]
fn peer_credentials_name_the_connecting_process() {
    with_every_runtime("unix peer_cred", 1, |_, rt| {
        rt.block_on(async {
            let name = format!("\0ringsteal-test-cred-{}", std::process::id());
            let listener = ringsteal_net::UnixListener::bind(&name).unwrap();
            let client = UnixStream::connect(&name).await.unwrap();
            let (server, _) = listener.accept().await.unwrap();
            // SAFETY: these calls cannot fail and take no arguments.
            let me = unsafe { (libc::getpid(), libc::getuid(), libc::getgid()) };
            for cred in [server.peer_cred().unwrap(), client.peer_cred().unwrap()] {
                assert_eq!(
                    (cred.pid(), cred.uid(), cred.gid()),
                    (Some(me.0), me.1, me.2)
                );
            }
            assert!(server.take_error().unwrap().is_none());
        })
    });
}

/// Kernel worker threads started for requests of the calling thread (the kernel names
/// them `iou-wrk-<tid>`: other tests' workers are not counted).
fn io_workers_of_this_thread() -> usize {
    // SAFETY: gettid takes no arguments.
    let me = format!("iou-wrk-{}", unsafe { libc::gettid() });
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| name.trim_end() == me)
        .count()
}

/// Connects to a listener whose backlog is full wait in kernel workers (the kernel's poll
/// says the socket is writable, the connect says `EAGAIN`): `max_io_workers` caps how many
/// it starts, the rest wait their turn, and every connect completes once the server accepts.
/// (Without the cap, 3,000 such connects made 2,000 threads.)
#[test]
fn connects_waiting_on_a_full_backlog_use_at_most_max_io_workers_threads() {
    const LIMIT: usize = 4;
    const CLIENTS: usize = 32;
    let rt = Runtime::builder()
        .shards(1)
        .max_io_workers(LIMIT as u32)
        .build()
        .unwrap();
    // `block_on` drives shard 0 on this thread, so the connects' workers carry its id.
    rt.block_on(async {
        let name = format!("ringsteal-full-backlog-{}-{}", std::process::id(), unique());
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let std_listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
        // SAFETY: listen on a listening socket we own, with an integer backlog: the queue
        // then holds two connections, so the rest of the connects wait.
        assert_eq!(unsafe { libc::listen(std_listener.as_raw_fd(), 1) }, 0);
        std_listener.set_nonblocking(true).unwrap();
        let listener = UnixListener::from_std(std_listener).unwrap();
        let clients: Vec<_> = (0..CLIENTS)
            .map(|_| {
                let addr = ringsteal_net::unix::SocketAddr::from(addr.clone());
                ringsteal_rt::spawn(async move { UnixStream::connect_addr(&addr).await })
            })
            .collect();
        let mut most = 0;
        let deadline = std::time::Instant::now() + OP_GUARD;
        // Until the workers the limit allows are there (they start as connects block).
        while most < LIMIT {
            assert!(
                std::time::Instant::now() < deadline,
                "no connect ever waited"
            );
            most = most.max(io_workers_of_this_thread());
            ringsteal_rt::yield_now().await;
        }
        let mut accepted = Vec::new();
        while accepted.len() < CLIENTS {
            let (conn, _) = timeout(OP_GUARD, listener.accept()).await.unwrap().unwrap();
            accepted.push(conn);
            most = most.max(io_workers_of_this_thread());
        }
        for client in clients {
            timeout(OP_GUARD, client).await.unwrap().unwrap().unwrap();
        }
        assert!(
            most <= LIMIT,
            "{most} kernel workers for connects waiting on a backlog, with a limit of {LIMIT}"
        );
    });
}

/// A datagram sent while the receiver's queue is full waits for room and then arrives whole:
/// as `send_to`, and as `send` on a connected socket. (io_uring's send of it came back
/// `Ok(0)` and queued an empty datagram: the kernel had copied the payload out of the
/// request before it found the queue full, and the retry sent what was left. A review.)
#[test]
fn a_datagram_sent_to_a_full_receiver_waits_and_arrives_whole() {
    with_every_runtime("unix datagram to a full queue", 1, |config, rt| {
        rt.block_on(async move {
            for connected in [false, true] {
                let (path, dir) = temp_socket_path();
                let rx = UnixDatagram::bind(&path).unwrap();
                let tx = UnixDatagram::unbound().unwrap();
                if connected {
                    tx.connect(&path).unwrap();
                }
                let mut queued = 0u8;
                while tx.try_send_to(&[queued; 64], &path).is_ok() {
                    queued += 1;
                }
                assert!(queued > 0, "the queue took nothing");
                let mut send: std::pin::Pin<Box<dyn std::future::Future<Output = _>>> = if connected
                {
                    Box::pin(tx.send(vec![200u8; 64]))
                } else {
                    Box::pin(tx.send_to(vec![200u8; 64], &path))
                };
                assert!(
                    support::poll_once(&mut send).await.is_none(),
                    "{config:?}: a send to a full queue completed at once"
                );
                // Room for one: the waiting send goes out, whole.
                let (n, first) = rx.recv(Vec::with_capacity(128)).await;
                assert_eq!(&first[..n.unwrap()], &[0u8; 64]);
                let (sent, _) = timeout(OP_GUARD, send).await.expect("the send waited on");
                assert_eq!(sent.unwrap(), 64, "{config:?}, connected {connected}");
                for expect in (1..queued).chain([200]) {
                    let (n, got) = rx.recv(Vec::with_capacity(128)).await;
                    assert_eq!(&got[..n.unwrap()], &[expect; 64], "{config:?}");
                }
                drop((rx, tx));
                std::fs::remove_dir_all(dir).unwrap();
            }
        })
    });
}

/// A connected socket's poll speaks for its peer's queue only: a `send_to` another, full
/// receiver goes out once that receiver has room, even while the peer's queue stays full
/// (it waited on the peer, possibly for ever: the change's review).
#[test]
fn a_send_to_another_address_than_the_peer_goes_out_when_that_receiver_has_room() {
    with_every_runtime("unix datagram send_to beside the peer", 1, |config, rt| {
        rt.block_on(async move {
            let (peer_path, peer_dir) = temp_socket_path();
            let (other_path, other_dir) = temp_socket_path();
            let peer = UnixDatagram::bind(&peer_path).unwrap();
            let other = UnixDatagram::bind(&other_path).unwrap();
            let tx = UnixDatagram::unbound().unwrap();
            tx.connect(&peer_path).unwrap();
            while tx.try_send(&[1; 64]).is_ok() {}
            let filler = UnixDatagram::unbound().unwrap();
            while filler.try_send_to(&[2; 64], &other_path).is_ok() {}
            let mut send = Box::pin(tx.send_to(vec![3u8; 64], &other_path));
            assert!(support::poll_once(&mut send).await.is_none(), "{config:?}");
            // Room at the other receiver only; the peer stays full.
            let (n, _) = other.recv(Vec::with_capacity(128)).await;
            n.unwrap();
            let (sent, _) = timeout(OP_GUARD, send)
                .await
                .unwrap_or_else(|_| panic!("{config:?}: the send waited on the peer's queue"));
            assert_eq!(sent.unwrap(), 64);
            drop((peer, other, tx, filler));
            std::fs::remove_dir_all(peer_dir).unwrap();
            std::fs::remove_dir_all(other_dir).unwrap();
        })
    });
}
