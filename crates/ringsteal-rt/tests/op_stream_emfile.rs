//! An accept stream when the process runs out of descriptors (`EMFILE`): the error is
//! yielded, the stream backs off and re-arms, and once descriptors free up the connections
//! that waited in the backlog are accepted. Alone in its binary: it lowers the process's
//! descriptor limit and fills the descriptor table.

mod common;
mod stream_support;

use std::fs::File;
use std::net::TcpStream;

use common::under_every_config;
use ringsteal_rt::op::{self, SharedFd};
use stream_support::{listener, Path};

/// Lowers `RLIMIT_NOFILE`'s soft limit until dropped.
struct LoweredLimit(libc::rlimit);

impl LoweredLimit {
    fn to(soft: u64) -> Self {
        let mut old = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit read or write the local rlimit only.
        unsafe {
            assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut old), 0);
            let new = libc::rlimit {
                rlim_cur: soft.min(old.rlim_cur),
                rlim_max: old.rlim_max,
            };
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &new), 0);
        }
        Self(old)
    }
}

impl Drop for LoweredLimit {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &self.0) };
    }
}

/// Opens `/dev/null` until the descriptor table is full.
fn fill_descriptor_table() -> Vec<File> {
    let mut fillers = Vec::new();
    loop {
        match File::open("/dev/null") {
            Ok(f) => fillers.push(f),
            Err(e) if e.raw_os_error() == Some(libc::EMFILE) => return fillers,
            Err(e) => panic!("filling the descriptor table: {e}"),
        }
    }
}

fn highest_open_fd() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u64>().ok())
        .max()
        .unwrap()
}

#[test]
fn an_accept_stream_yields_emfile_and_accepts_once_descriptors_free_up() {
    under_every_config("accept stream, EMFILE", 1, |config, b| {
        for path in Path::ACCEPT {
            let rt = path.apply(b.clone()).build().unwrap();
            rt.block_on(async {
                let (l, addr) = listener();
                let mut incoming = op::accept_multishot(&SharedFd::new(l.into()));
                // Two clients wait in the backlog (the kernel completes their handshakes).
                let clients: Vec<TcpStream> =
                    (0..2).map(|_| TcpStream::connect(addr).unwrap()).collect();
                let limit = LoweredLimit::to(highest_open_fd() + 16);
                let fillers = fill_descriptor_table();
                let err = incoming.next().await.expect("an item").unwrap_err();
                assert_eq!(
                    err.raw_os_error(),
                    Some(libc::EMFILE),
                    "{config:?} {path:?}: {err}"
                );
                // Still out of descriptors: the stream keeps trying, after a pause each time.
                let err = incoming.next().await.expect("an item").unwrap_err();
                assert_eq!(
                    err.raw_os_error(),
                    Some(libc::EMFILE),
                    "{config:?} {path:?}: {err}"
                );
                drop(fillers);
                let mut accepted = Vec::new();
                while accepted.len() < 2 {
                    match incoming.next().await.expect("the stream goes on") {
                        Ok(conn) => accepted.push(TcpStream::from(conn)),
                        // A retry that was under way when the descriptors came free.
                        Err(e) if e.raw_os_error() == Some(libc::EMFILE) => {}
                        Err(e) => panic!("{config:?} {path:?}: {e}"),
                    }
                }
                drop(limit);
                let mut peers: Vec<_> = accepted.iter().map(|s| s.peer_addr().unwrap()).collect();
                let mut locals: Vec<_> = clients.iter().map(|c| c.local_addr().unwrap()).collect();
                peers.sort();
                locals.sort();
                assert_eq!(
                    peers, locals,
                    "{config:?} {path:?}: the waiting clients were accepted"
                );
            });
        }
    });
}
