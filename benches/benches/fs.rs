//! fs family of issue 6: fs_read_4k_qd1, fs_read_4k_qd32, cat_100mb. Peer
//! side (tokio, compio, spargio) and floors (pread, raw io_uring, std::fs::read).
//! See NOTES.md for what each measures.
//!
//! Before every timed run the data file is re-read if it was not warmed in
//! the last second (`DataFile::warm_if_stale`, outside the timing), because
//! this host evicts idle page-cache pages; `warm` also checks with mincore
//! that the file is resident.
//!
//! ringsteal (`peers/ringsteal_rt.rs`), the peers and the floors of a group
//! run in a rotated order (`peers::run_rotated`).

use std::os::unix::fs::FileExt;
use std::rc::Rc;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use compio::io::AsyncReadAt;
use compio::BufResult;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ringsteal::buf::IoBuf;
use ringsteal::Placement;
use ringsteal_benches::files::{self, BLOCK};
use ringsteal_benches::threads;
use ringsteal_benches::workloads::cat_100mb;
use ringsteal_benches::workloads::fs_read_4k::{self, share, Offsets, QD1, QD32};

mod floors;
mod peers;
use peers::{compio_rt, entry, makespan, ringsteal_rt, run_rotated, spargio_rt, tokio_rt, Span};

// ------------------------------------------------- fs_read_4k_qd1 / _qd32

fn fs_read_4k(c: &mut Criterion, group: &str, depth: usize) {
    let n = threads();
    let file = files::random_read_file();
    let blocks = file.blocks();
    let path = file.path().to_path_buf();
    file.warm();
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(1));

    // Readers: `depth` of them (fewer if criterion asks for fewer reads), each
    // reading its share one after another; together they keep `depth` reads
    // in flight.
    let readers = move |iters: u64| (depth as u64).min(iters).max(1) as usize;

    let std_file = file.open_std();
    let std_file = &std_file;
    let mut entries = vec![
        entry("ringsteal", |g| {
            // ringsteal: shards(n); the readers spawned the default way
            // (`ringsteal::spawn`, Placement::Stealable) by a driver in `block_on`;
            // see `ringsteal_reads`. At depth 1 the single reader runs on shard 0
            // (ADR-0005).
            let rt = ringsteal_rt::runtime(n);
            g.bench_function("ringsteal", |b| {
                b.iter_custom(|iters| {
                    file.warm_if_stale();
                    ringsteal_reads(
                        &rt,
                        &path,
                        blocks,
                        readers(iters),
                        iters,
                        Placement::Stealable,
                    )
                })
            });
            if depth > 1 {
                // ringsteal_round_robin: the readers spawned with
                // Placement::RoundRobin, the placement the book gives for
                // spreading long-lived work, against the default (Stealable)
                // above, which depends on how queued work is shared before it
                // starts (see "targets missed" in book/src/benchmarks.md).
                g.bench_function("ringsteal_round_robin", |b| {
                    b.iter_custom(|iters| {
                        file.warm_if_stale();
                        ringsteal_reads(
                            &rt,
                            &path,
                            blocks,
                            readers(iters),
                            iters,
                            Placement::RoundRobin,
                        )
                    })
                });
            }
        }),
        entry("tokio", |g| {
            // tokio: tokio::fs::File has no positioned read; tokio's fs docs
            // recommend running std::fs inside `spawn_blocking` ("Tuning your
            // file IO"), so each read is one spawn_blocking(pread). Readers are
            // tasks on the multi-thread runtime; the preads run on tokio's
            // blocking pool (its own threads, by design).
            let rt = tokio_rt::multi_thread(n);
            let std_file = Arc::new(file.open_std());
            g.bench_function("tokio", |b| {
                b.iter_custom(|iters| {
                    file.warm_if_stale();
                    let std_file = std_file.clone();
                    let readers = readers(iters);
                    tokio_rt::run_on_worker(&rt, async move {
                        let start = Instant::now();
                        let tasks: Vec<_> = (0..readers)
                            .map(|r| {
                                let f = std_file.clone();
                                tokio::spawn(async move {
                                    let mut offs = Offsets::new(r, blocks);
                                    let mut buf = vec![0u8; BLOCK];
                                    for _ in 0..share(iters, readers, r) {
                                        let off = offs.next_offset();
                                        let f = f.clone();
                                        let (b, res) = tokio::task::spawn_blocking(move || {
                                            let res = f.read_at(&mut buf, off);
                                            (buf, res)
                                        })
                                        .await
                                        .expect("spawn_blocking");
                                        buf = b;
                                        assert_eq!(res.expect("pread"), BLOCK, "short read");
                                        fs_read_4k::check(&buf, off);
                                    }
                                })
                            })
                            .collect();
                        for t in tasks {
                            t.await.expect("reader");
                        }
                        start.elapsed()
                    })
                })
            });
        }),
        entry("compio", |g| {
            // compio: `compio::fs::File::open` + `AsyncReadAt::read_at(buf, pos)`
            // with an owned buffer, one runtime per thread; reader r runs on
            // thread r % threads (depth 1: one reader on one thread).
            let th = compio_rt::Threads::new(n);
            g.bench_function("compio", |b| {
                b.iter_custom(|iters| {
                    file.warm_if_stale();
                    let readers = readers(iters);
                    let active = readers.min(n);
                    let barrier = Arc::new(Barrier::new(active));
                    let rxs: Vec<_> = (0..active)
                        .map(|t| {
                            let barrier = barrier.clone();
                            let path = path.clone();
                            th.spawn_task_on(t, move || async move {
                                let f = Rc::new(compio::fs::File::open(&path).await.expect("open"));
                                barrier.wait();
                                let start = Instant::now();
                                let tasks: Vec<_> = (t..readers)
                                    .step_by(active)
                                    .map(|r| {
                                        let f = f.clone();
                                        compio::runtime::spawn(async move {
                                            let mut offs = Offsets::new(r, blocks);
                                            let mut buf = Vec::with_capacity(BLOCK);
                                            for _ in 0..share(iters, readers, r) {
                                                let off = offs.next_offset();
                                                buf.clear();
                                                let BufResult(res, b) = f.read_at(buf, off).await;
                                                buf = b;
                                                assert_eq!(
                                                    res.expect("read_at"),
                                                    BLOCK,
                                                    "short read"
                                                );
                                                fs_read_4k::check(&buf, off);
                                            }
                                        })
                                    })
                                    .collect();
                                for t in tasks {
                                    compio_rt::join(t).await;
                                }
                                (start, Instant::now())
                            })
                        })
                        .collect();
                    let spans: Vec<Span> = rxs
                        .into_iter()
                        .map(|rx| rx.recv().expect("compio reader"))
                        .collect();
                    makespan(&spans)
                })
            });
        }),
        entry("spargio", |g| {
            // spargio: `spargio::fs::File::open(handle, path)` and
            // `read_at_into(offset, buf)` (native io_uring read, owned buffer,
            // routed per op by spargio's selector). A driver pinned to shard 0
            // spawns the readers with `spawn_stealable_on(current shard)`.
            let rt = spargio_rt::build(spargio_rt::builder(n));
            let h = rt.handle();
            g.bench_function("spargio", |b| {
                b.iter_custom(|iters| {
                    file.warm_if_stale();
                    let readers = readers(iters);
                    let h = h.clone();
                    let path = path.clone();
                    spargio_rt::run_pinned(&rt, 0, async move {
                        let f = Arc::new(
                            spargio::fs::File::open(h.clone(), &path)
                                .await
                                .expect("open"),
                        );
                        let me = spargio_rt::current_shard();
                        let start = Instant::now();
                        let tasks: Vec<_> = (0..readers)
                            .map(|r| {
                                let f = f.clone();
                                h.spawn_stealable_on(me, async move {
                                    let mut offs = Offsets::new(r, blocks);
                                    let mut buf = vec![0u8; BLOCK];
                                    for _ in 0..share(iters, readers, r) {
                                        let off = offs.next_offset();
                                        let (got, b) =
                                            f.read_at_into(off, buf).await.expect("read_at_into");
                                        buf = b;
                                        assert_eq!(got, BLOCK, "short read");
                                        fs_read_4k::check(&buf, off);
                                    }
                                })
                                .expect("spawn reader")
                            })
                            .collect();
                        for t in tasks {
                            t.await.expect("reader");
                        }
                        start.elapsed()
                    })
                })
            });
            drop(rt);
        }),
    ];

    // Floors: no runtime, the same reads (see floors.rs).
    entries.push(entry("floor_pread_1t", move |g| {
        g.bench_function("floor_pread_1t", |b| {
            b.iter_custom(|iters| {
                file.warm_if_stale();
                let start = Instant::now();
                floors::pread_loop(std_file, blocks, 0, iters);
                start.elapsed()
            })
        });
    }));
    if depth > 1 {
        entries.push(entry(format!("floor_pread_{n}t"), move |g| {
            g.bench_function(format!("floor_pread_{n}t"), |b| {
                b.iter_custom(|iters| {
                    file.warm_if_stale();
                    floors::pread_threads(std_file, blocks, n, iters)
                })
            });
        }));
    }
    entries.push(entry("floor_io_uring_1t", move |g| {
        g.bench_function("floor_io_uring_1t", |b| {
            b.iter_custom(|iters| {
                file.warm_if_stale();
                let start = Instant::now();
                floors::uring_reads(std_file, blocks, 0, depth, iters);
                start.elapsed()
            })
        });
    }));
    if depth > 1 {
        entries.push(entry(format!("floor_io_uring_{n}t"), move |g| {
            g.bench_function(format!("floor_io_uring_{n}t"), |b| {
                b.iter_custom(|iters| {
                    file.warm_if_stale();
                    floors::uring_threads(std_file, blocks, n, depth.div_ceil(n), iters)
                })
            });
        }));
    }
    run_rotated(&mut g, group, entries);
    g.finish();
}

/// ringsteal side of fs_read_4k: a driver in `block_on` (shard 0) opens a
/// `ringsteal::fs::File` (Send + Sync, shared through an Arc) and spawns
/// `readers` reader tasks with `placement`; each reads its share with
/// `read_at(owned Vec, offset)` (an io_uring READ on the ring of the shard
/// that runs it), reusing its buffer. Timed inside `block_on`.
fn ringsteal_reads(
    rt: &ringsteal::Runtime,
    path: &std::path::Path,
    blocks: u64,
    readers: usize,
    iters: u64,
    placement: Placement,
) -> Duration {
    let path = path.to_path_buf();
    rt.block_on(async move {
        let f = Arc::new(ringsteal::fs::File::open(&path).await.expect("open"));
        let start = Instant::now();
        let tasks: Vec<_> = (0..readers)
            .map(|r| {
                let f = f.clone();
                ringsteal::spawn_with(placement, async move {
                    let mut offs = Offsets::new(r, blocks);
                    let mut buf = Vec::with_capacity(BLOCK);
                    for _ in 0..share(iters, readers, r) {
                        let off = offs.next_offset();
                        buf.clear();
                        let (res, b) = f.read_at(buf, off).await;
                        buf = b;
                        assert_eq!(res.expect("read_at"), BLOCK, "short read");
                        fs_read_4k::check(&buf, off);
                    }
                })
            })
            .collect();
        for t in tasks {
            ringsteal_rt::join(t).await;
        }
        start.elapsed()
    })
}

fn fs_read_4k_qd1(c: &mut Criterion) {
    fs_read_4k(c, "fs_read_4k_qd1", QD1);
}

fn fs_read_4k_qd32(c: &mut Criterion) {
    fs_read_4k(c, "fs_read_4k_qd32", QD32);
}

// ---------------------------------------------------------------- cat_100mb

fn cat_100mb(c: &mut Criterion) {
    let n = threads();
    let file = files::cat_file();
    let path = file.path().to_path_buf();
    let path = &path;
    file.warm();
    let mut g = c.benchmark_group("cat_100mb");
    g.throughput(Throughput::Bytes(file.len()));
    g.sample_size(10);

    // Each implementation times its whole-file reads inside its runtime and
    // hands the data back for the check, which runs outside the timing.
    //
    // Parallelism differs, on purpose, and each row says how much it uses:
    // `ringsteal::fs::read` reads a file of 16 MiB or more as up to 8
    // concurrent chunks forced onto the kernel's io-wq workers (its documented
    // default: the shard stays free while the copies run); every peer's
    // whole-file helper reads with one stream. `ringsteal_single_stream` is
    // ringsteal with one stream too (the like-for-like row), and
    // `floor_pread_chunked` gives plain threads the same chunking as ringsteal
    // (the floor for the default row). See book/src/benchmarks.md.

    let entries = vec![
        entry("ringsteal", |g| {
            // ringsteal: `ringsteal::fs::read(path)` in `block_on` (shard 0):
            // for this 100 MB file, 8 chunk reads of 12.5 MB in flight at
            // once, each with IOSQE_ASYNC (crates/ringsteal-fs/src/chunked_read.rs).
            // ringsteal_single_stream: the same file read as one stream on the
            // same runtime (`read_single_stream`).
            let rt = ringsteal_rt::runtime(n);
            g.bench_function("ringsteal", |b| {
                b.iter_custom(|iters| {
                    file.warm_if_stale();
                    let path = path.clone();
                    rt.block_on(async move {
                        timed_reads(iters, || ringsteal::fs::read(path.clone())).await
                    })
                })
            });
            g.bench_function("ringsteal_single_stream", |b| {
                b.iter_custom(|iters| {
                    file.warm_if_stale();
                    let path = path.clone();
                    rt.block_on(async move {
                        timed_reads(iters, || read_single_stream(path.clone())).await
                    })
                })
            });
        }),
        entry("tokio", |g| {
            // tokio: `tokio::fs::read`, which the tokio fs docs recommend for
            // whole files (one spawn_blocking running std::fs::read).
            let rt = tokio_rt::multi_thread(n);
            g.bench_function("tokio", |b| {
                b.iter_custom(|iters| {
                    file.warm_if_stale();
                    let path = path.clone();
                    tokio_rt::run_on_worker(&rt, async move {
                        timed_reads(iters, || tokio::fs::read(path.clone())).await
                    })
                })
            });
        }),
        entry("compio", |g| {
            // compio: `compio::fs::read` (read_to_end_at through io_uring).
            let th = compio_rt::Threads::new(n);
            g.bench_function("compio", |b| {
                b.iter_custom(|iters| {
                    file.warm_if_stale();
                    let path = path.clone();
                    let rx = th.spawn_task_on(0, move || async move {
                        timed_reads(iters, || compio::fs::read(path.clone())).await
                    });
                    rx.recv().expect("compio cat")
                })
            });
        }),
        entry("spargio", |g| {
            // spargio: `spargio::fs::read(&handle, path)` (native reads in 64 KiB
            // chunks, one after another) in a task pinned to shard 0.
            let rt = spargio_rt::build(spargio_rt::builder(n));
            let h = rt.handle();
            g.bench_function("spargio", |b| {
                b.iter_custom(|iters| {
                    file.warm_if_stale();
                    let path = path.clone();
                    let h = h.clone();
                    spargio_rt::run_pinned(&rt, 0, async move {
                        timed_reads(iters, || {
                            let (h, path) = (h.clone(), path.clone());
                            async move { spargio::fs::read(&h, path).await }
                        })
                        .await
                    })
                })
            });
            drop(rt);
        }),
        entry("floor_std_read", |g| {
            // Floor: std::fs::read on the criterion thread (one stream).
            g.bench_function("floor_std_read", |b| {
                b.iter_custom(|iters| {
                    file.warm_if_stale();
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let start = Instant::now();
                        let data = std::fs::read(path).expect("std::fs::read");
                        total += start.elapsed();
                        cat_100mb::check(&data);
                    }
                    total
                })
            });
        }),
        entry("floor_pread_chunked", |g| {
            // Floor with ringsteal's parallelism: the file split into the same
            // chunks as `ringsteal::fs::read` splits it, each `pread` on a
            // thread of its own, into one allocation.
            let std_file = file.open_std();
            g.bench_function("floor_pread_chunked", |b| {
                b.iter_custom(|iters| {
                    file.warm_if_stale();
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let start = Instant::now();
                        let data = floors::pread_chunked(&std_file, file.len() as usize);
                        total += start.elapsed();
                        cat_100mb::check(&data);
                    }
                    total
                })
            });
        }),
    ];
    run_rotated(&mut g, "cat_100mb", entries);
    g.finish();
}

/// `iters` whole-file reads made by `read` (awaited in whatever runtime awaits this),
/// each timed on its own and checked outside its timing; returns the sum of the times.
async fn timed_reads<F, Fut>(iters: u64, mut read: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = std::io::Result<Vec<u8>>>,
{
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let start = Instant::now();
        let data = read().await.expect("whole-file read");
        total += start.elapsed();
        cat_100mb::check(&data);
    }
    total
}

/// A whole file read as one stream on ringsteal: what `ringsteal::fs::read` does for a
/// file below its chunking threshold (16 MiB), applied to any size. Open, take the size
/// from `statx`, read into a `Vec` with room for one byte more than that, and read on
/// until a 0-byte read: one read in flight at a time, run inline in the shard's
/// `io_uring_enter`, like every peer's whole-file helper.
async fn read_single_stream(path: std::path::PathBuf) -> std::io::Result<Vec<u8>> {
    let f = ringsteal::fs::File::open(&path).await?;
    let size = usize::try_from(f.metadata().await?.len()).expect("file size fits in usize");
    let mut buf = Vec::with_capacity(size + 1);
    loop {
        if buf.len() == buf.capacity() {
            buf.reserve(64 * 1024);
        }
        let pos = buf.len();
        let (res, slice) = f.read_at(buf.slice(pos..), pos as u64).await;
        buf = slice.into_inner();
        if res? == 0 {
            break;
        }
    }
    f.close().await?;
    Ok(buf)
}

criterion_group!(benches, fs_read_4k_qd1, fs_read_4k_qd32, cat_100mb);
criterion_main!(benches);
