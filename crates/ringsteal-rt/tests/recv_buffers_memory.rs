//! Provided buffers cost memory as data arrives, as `Builder::recv_buffers` says, not when a
//! shard registers them: a shard given 256 MiB of receive buffers that receives one byte
//! must not have faulted in the rest. Alone in its test binary, so that no other test's
//! allocations move the process's resident size meanwhile.

use std::io::Write;

use ringsteal_rt::op::{self, SharedFd};
use ringsteal_rt::{Feature, Runtime};

/// The process's resident memory, in bytes (`/proc/self/statm`).
fn resident() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    // SAFETY: sysconf has no preconditions.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize
}

#[test]
fn registering_large_provided_buffers_does_not_fault_them_in() {
    const COUNT: u16 = 256;
    const LEN: u32 = 1 << 20;
    let rt = Runtime::builder()
        .shards(1)
        .recv_buffers(COUNT, LEN)
        .build()
        .unwrap();
    let features = rt.handle().features().clone();
    if !features.supports(Feature::ProvidedBufferRing) || !features.supports(Feature::MultishotRecv)
    {
        return; // no provided buffers on this kernel: nothing to register
    }
    rt.block_on(async {
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        let fd = SharedFd::new(a.into());
        let before = resident();
        // The first receive stream registers the shard's group: 256 MiB of buffers.
        let mut data = op::recv_multishot(&fd);
        b.write_all(b"x").unwrap();
        let got = data.next().await.unwrap().unwrap();
        assert_eq!(&got[..], b"x");
        let grown = resident().saturating_sub(before);
        assert!(
            grown < 32 << 20,
            "{} MiB became resident for one byte received",
            grown >> 20
        );
    });
}
