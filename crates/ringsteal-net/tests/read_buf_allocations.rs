//! `read_buf` reads into the thread's spare buffer, not a new one per call: a loop of them
//! over a socket allocates no read-sized buffer after the first (a test binary of its own,
//! since it counts allocations with a global allocator).

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use common::counting::{large_allocations, Counting};
use common::with_every_runtime;
use ringsteal_rt::io::AppendBuf;
use ringsteal_rt::Placement;
use support::*;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn a_loop_of_read_bufs_allocates_its_read_buffer_once() {
    const LEN: usize = 1 << 20;
    with_every_runtime("read_buf allocations", 2, |config, rt| {
        rt.block_on(async move {
            let (client, server) = tcp_pair().await;
            let writer = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                // Several writes, so that the reader sees the stream in many reads.
                for pos in (0..LEN).step_by(16 * 1024) {
                    let chunk = stream_bytes(5, pos as u64, 16 * 1024);
                    client.write_all(chunk).await.0.unwrap();
                }
                client.shutdown(std::net::Shutdown::Write).await.unwrap();
            });
            // Room for everything up front, so that the destination never grows: the only
            // large allocations left on this thread are `read_buf`'s own.
            let mut got = Vec::with_capacity(2 * LEN);
            let before = large_allocations();
            let mut reads = 0;
            loop {
                let n = server.read_buf(&mut got).await.unwrap();
                if n == 0 {
                    break;
                }
                reads += 1;
            }
            let allocated = large_allocations() - before;
            writer.await.unwrap();
            assert_eq!(got.len(), LEN, "{config:?}");
            check_stream(5, 0, &got);
            assert!(got.spare_capacity() >= LEN, "the destination did not grow");
            assert!(reads > 1, "{config:?}: one read took the whole stream");
            assert!(
                allocated <= 1,
                "{config:?}: {allocated} read buffers allocated for {reads} reads"
            );
        })
    });
}
