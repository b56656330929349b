//! A shard whose provided buffers the kernel refuses says so in its stats, and its receive
//! streams still deliver every byte, into heap buffers. The refusal is forced with an
//! address-space limit below the buffers' size, so this test is alone in its binary: no
//! other test may run while the limit is low.

use std::io::Write;

use ringsteal_rt::op::{self, SharedFd};
use ringsteal_rt::{Feature, Runtime};

/// The process's address-space size, in bytes (`/proc/self/statm`).
fn address_space() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().next().unwrap().parse().unwrap();
    // SAFETY: sysconf has no preconditions.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64
}

fn set_address_space_limit(limit: libc::rlimit) {
    // SAFETY: a plain system call on a valid struct.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) }, 0);
}

/// Receives "hello" through a receive stream on a one-shard runtime with `count` buffers of
/// `len` bytes; whether the kernel refused the shard's buffers.
fn receive_and_report(count: u16, len: u32) -> bool {
    let rt = Runtime::builder()
        .shards(1)
        .recv_buffers(count, len)
        .build()
        .unwrap();
    rt.block_on(async {
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        let fd = SharedFd::new(a.into());
        let mut data = op::recv_multishot(&fd);
        b.write_all(b"hello").unwrap();
        drop(b);
        let mut got = Vec::new();
        while let Some(buf) = data.next().await {
            got.extend_from_slice(&buf.unwrap());
        }
        assert_eq!(got, b"hello", "every byte, refused or not");
    });
    let stats = rt.handle().stats();
    assert_eq!(
        stats.shards[0].recv_buffers_refused,
        stats.total().recv_buffers_refused
    );
    stats.shards[0].recv_buffers_refused
}

#[test]
fn refused_provided_buffers_are_reported_and_streams_receive_into_the_heap() {
    let probe = Runtime::builder().shards(1).build().unwrap();
    let features = probe.handle().features().clone();
    drop(probe);
    if !features.supports(Feature::ProvidedBufferRing) || !features.supports(Feature::MultishotRecv)
    {
        return; // no provided buffers on this kernel: nothing to refuse
    }
    assert!(
        !receive_and_report(64, 4096),
        "64 small buffers are registered"
    );

    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a plain system call filling a valid struct.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut old) }, 0);
    // Room for the runtime and its ring, not for 1 GiB of buffers.
    set_address_space_limit(libc::rlimit {
        rlim_cur: address_space() + (512 << 20),
        rlim_max: old.rlim_max,
    });
    let refused = std::panic::catch_unwind(|| receive_and_report(256, 4 << 20));
    set_address_space_limit(old);
    assert!(refused.unwrap(), "1 GiB of buffers under a 512 MiB margin");
}
