//! `ringsteal::io::copy_spliced` (`IORING_OP_SPLICE` through a 1 MiB pipe) against
//! `copy_buffered` (a 64 KiB user-space buffer): 16 MiB from a TCP socket to a TCP socket,
//! and from a warm file to a TCP socket, over loopback on a 2-shard runtime. Only the copy is
//! timed; the feeder and the drain run on the other shard in both variants. The figures and
//! what `copy` does by default are in ADR-0015.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ringsteal::io;
use ringsteal::net::{TcpListener, TcpStream};
use ringsteal::{Placement, Runtime};

const LEN: usize = 16 << 20;
const CHUNK: usize = 256 * 1024;

async fn pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let c = ringsteal::spawn(async move { TcpStream::connect(addr).await.unwrap() });
    let (s, _) = l.accept().await.unwrap();
    (c.await.unwrap(), s)
}

/// Reads `s` to its end on shard 1; yields the byte count.
fn drain(s: TcpStream) -> ringsteal::JoinHandle<usize> {
    ringsteal::spawn_with(Placement::Pinned(1), async move {
        let mut buf = Vec::with_capacity(CHUNK);
        let mut total = 0;
        loop {
            buf.clear();
            let (res, b) = s.read(buf).await;
            match res.unwrap() {
                0 => return total,
                n => total += n,
            }
            buf = b;
        }
    })
}

/// One copy of LEN bytes from a socket into a socket; returns the time of the copy alone.
async fn socket_to_socket(spliced: bool) -> Duration {
    let (feeder, mut src) = pair().await;
    let (mut dst, sink) = pair().await;
    let drained = drain(sink);
    ringsteal::spawn_with(Placement::Pinned(1), async move {
        let mut buf = vec![7u8; CHUNK];
        for _ in 0..LEN / CHUNK {
            buf = feeder.write_all(buf).await.1;
        }
    });
    let start = Instant::now();
    let n = if spliced {
        io::copy_spliced(&mut src, &mut dst).await.unwrap()
    } else {
        io::copy_buffered(&mut src, &mut dst).await.unwrap()
    };
    let took = start.elapsed();
    dst.shutdown(std::net::Shutdown::Write).await.unwrap();
    assert_eq!(n as usize, LEN);
    assert_eq!(drained.await.unwrap(), LEN);
    took
}

/// One copy of a LEN-byte file (in the page cache) into a socket.
async fn file_to_socket(path: &std::path::Path, spliced: bool) -> Duration {
    let (mut dst, sink) = pair().await;
    let drained = drain(sink);
    let mut file = ringsteal::fs::File::open(path).await.unwrap();
    let start = Instant::now();
    let n = if spliced {
        io::copy_spliced(&mut file, &mut dst).await.unwrap()
    } else {
        io::copy_buffered(&mut file, &mut dst).await.unwrap()
    };
    let took = start.elapsed();
    dst.shutdown(std::net::Shutdown::Write).await.unwrap();
    assert_eq!(n as usize, LEN);
    assert_eq!(drained.await.unwrap(), LEN);
    took
}

fn io_copy(c: &mut Criterion) {
    let rt = Runtime::builder().shards(2).build().unwrap();
    let path = std::env::temp_dir().join(format!("ringsteal-bench-copy-{}", std::process::id()));
    std::fs::write(&path, vec![3u8; LEN]).unwrap();
    for (group, from_file) in [
        ("io_copy_socket_to_socket_16m", false),
        ("io_copy_file_to_socket_16m", true),
    ] {
        let mut g = c.benchmark_group(group);
        g.throughput(Throughput::Bytes(LEN as u64));
        g.sample_size(20);
        for (name, spliced) in [("splice", true), ("buffered", false)] {
            g.bench_function(name, |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        if from_file {
                            // Warm (and keep warm) the page cache outside the timing.
                            std::hint::black_box(std::fs::read(&path).unwrap());
                            total += rt.block_on(file_to_socket(&path, spliced));
                        } else {
                            total += rt.block_on(socket_to_socket(spliced));
                        }
                    }
                    total
                })
            });
        }
        g.finish();
    }
    let _ = std::fs::remove_file(&path);
}

criterion_group!(benches, io_copy);
criterion_main!(benches);
