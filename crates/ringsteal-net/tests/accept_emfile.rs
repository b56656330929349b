//! `EMFILE` on accept: the accept fails with the error, the listener keeps working once
//! descriptors are free again; `incoming()` yields the error and goes on (its multishot
//! accept ended; it re-arms after a pause) and yields the connections once descriptors are
//! free. `RLIMIT_NOFILE` is process-wide, so this binary holds this one test.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::io::{Read, Write};

use common::{hang_guard, Config, HANG_LIMIT};
use support::*;

/// Sets the soft `RLIMIT_NOFILE`; returns the old one.
fn set_nofile(soft: u64) -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write a local struct.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        let old = lim.rlim_cur;
        lim.rlim_cur = soft;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
        old
    }
}

/// Lowers the soft descriptor limit to a little above the highest open descriptor and
/// opens files until none is left: the old limit and the files.
fn exhaust_descriptors() -> (u64, Vec<std::fs::File>) {
    let highest = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u64>().ok())
        .max()
        .unwrap();
    let old = set_nofile(highest + 8);
    let mut fillers = Vec::new();
    while let Ok(f) = std::fs::File::open("/dev/null") {
        fillers.push(f);
    }
    (old, fillers)
}

#[test]
fn accept_and_incoming_out_of_descriptors_fail_and_the_listener_recovers() {
    for config in Config::ALL {
        hang_guard(
            &format!("EMFILE on accept [{config:?}]"),
            HANG_LIMIT,
            move || {
                let rt = config.runtime(1);
                rt.block_on(async {
                    let (listener, addr) = listener().await;
                    // Connections complete in the kernel's backlog before anyone accepts.
                    let mut clients: Vec<_> = (0..2)
                        .map(|_| std::net::TcpStream::connect(addr).unwrap())
                        .collect();
                    // Leave no descriptor number free under a lowered limit.
                    let (old, fillers) = exhaust_descriptors();
                    let err = listener.accept().await.unwrap_err();
                    assert_eq!(err.raw_os_error(), Some(libc::EMFILE), "{err}");
                    // And again: the error is per accept, the listener is fine.
                    let err = listener.accept().await.unwrap_err();
                    assert_eq!(err.raw_os_error(), Some(libc::EMFILE), "{err}");
                    drop(fillers);
                    set_nofile(old);
                    for client in &mut clients {
                        let (stream, peer) = listener.accept().await.expect("accept after EMFILE");
                        assert_eq!(peer, client.local_addr().unwrap());
                        stream.write_all(b"ok".to_vec()).await.0.unwrap();
                        let mut buf = [0u8; 2];
                        client.read_exact(&mut buf).unwrap();
                        assert_eq!(&buf, b"ok");
                        client.write_all(b"!").unwrap();
                        let (res, got) = stream.read(Vec::with_capacity(1)).await;
                        assert_eq!(&got[..res.unwrap()], b"!");
                    }

                    // The same through `incoming()`.
                    let mut incoming = listener.incoming();
                    let mut clients: Vec<_> = (0..2)
                        .map(|_| std::net::TcpStream::connect(addr).unwrap())
                        .collect();
                    let (old, fillers) = exhaust_descriptors();
                    for _ in 0..2 {
                        let err = incoming.next().await.expect("an error, not the end");
                        let err = err.map(drop).unwrap_err();
                        assert_eq!(err.raw_os_error(), Some(libc::EMFILE), "{err}");
                    }
                    drop(fillers);
                    set_nofile(old);
                    for client in &mut clients {
                        let stream = incoming
                            .next()
                            .await
                            .expect("the stream goes on")
                            .expect("a connection after EMFILE");
                        assert_eq!(stream.peer_addr().unwrap(), client.local_addr().unwrap());
                        stream.write_all(b"ok".to_vec()).await.0.unwrap();
                        let mut buf = [0u8; 2];
                        client.read_exact(&mut buf).unwrap();
                        assert_eq!(&buf, b"ok");
                    }
                });
            },
        );
    }
}
