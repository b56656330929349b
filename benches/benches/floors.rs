//! Floors of the fs benchmarks: what the machine does with no runtime at all.
//!
//! - `pread`: a plain `pread(2)` loop (std `FileExt::read_at`) on one thread,
//!   or on several threads at once.
//! - raw io_uring: one ring per thread, `depth` 4 KiB reads kept in flight,
//!   reaped with `submit_and_wait(1)`. This uses the `io-uring` crate, a
//!   dev-dependency of this package for this floor only (never a peer).
//!
//! - chunked `pread`: a whole file split the way `ringsteal::fs::read` splits a
//!   large file, each chunk read by a thread of its own, all at once: the floor
//!   for a reader with ringsteal's parallelism (`cat_100mb/floor_pread_chunked`).
//!
//! Every read is checked like the runtimes' reads are.

#![allow(dead_code)]

use std::fs::File;
use std::ops::Range;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

use io_uring::{opcode, types, IoUring};
use ringsteal_benches::files::BLOCK;
use ringsteal_benches::workloads::fs_read_4k::{self, share, Offsets};

use crate::peers::{makespan, Span};

/// `reads` checked 4 KiB preads at reader `reader`'s offsets.
pub(crate) fn pread_loop(file: &File, blocks: u64, reader: usize, reads: u64) {
    let mut offs = Offsets::new(reader, blocks);
    let mut buf = vec![0u8; BLOCK];
    for _ in 0..reads {
        let off = offs.next_offset();
        let n = file.read_at(&mut buf, off).expect("pread");
        assert_eq!(n, BLOCK, "short pread");
        fs_read_4k::check(&buf, off);
    }
}

/// `reads` preads split over `threads` threads (reader `t` on thread `t`);
/// returns the makespan from a common barrier.
pub(crate) fn pread_threads(file: &File, blocks: u64, threads: usize, reads: u64) -> Duration {
    let barrier = Barrier::new(threads);
    let spans: Vec<Span> = thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    let start = Instant::now();
                    pread_loop(file, blocks, t, share(reads, threads, t));
                    (start, Instant::now())
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("pread thread"))
            .collect()
    });
    makespan(&spans)
}

/// `reads` 4 KiB reads through one io_uring with `depth` of them in flight,
/// at reader `reader`'s offsets.
pub(crate) fn uring_reads(file: &File, blocks: u64, reader: usize, depth: usize, reads: u64) {
    let depth = depth.max(1);
    let mut ring = IoUring::new((depth as u32).next_power_of_two()).expect("io_uring setup");
    let fd = types::Fd(file.as_raw_fd());
    let mut offs = Offsets::new(reader, blocks);
    let mut bufs = vec![vec![0u8; BLOCK]; depth];
    let mut slot_off = vec![0u64; depth];
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut done_slots = Vec::with_capacity(depth);
    let mut submitted = 0u64;
    let mut completed = 0u64;
    while completed < reads {
        while submitted < reads {
            let Some(slot) = free.pop() else { break };
            let off = offs.next_offset();
            slot_off[slot] = off;
            let sqe = opcode::Read::new(fd, bufs[slot].as_mut_ptr(), BLOCK as u32)
                .offset(off)
                .build()
                .user_data(slot as u64);
            // SAFETY: the buffer of `slot` stays allocated, unmoved and untouched
            // until this read's CQE is reaped below, and `file` outlives the ring
            // (both live until this function returns, after the last CQE).
            unsafe { ring.submission().push(&sqe).expect("submission queue full") };
            submitted += 1;
        }
        ring.submit_and_wait(1).expect("io_uring_enter");
        done_slots.clear();
        for cqe in ring.completion() {
            let slot = cqe.user_data() as usize;
            assert_eq!(
                cqe.result(),
                BLOCK as i32,
                "io_uring read failed or was short"
            );
            done_slots.push(slot);
        }
        for &slot in &done_slots {
            fs_read_4k::check(&bufs[slot], slot_off[slot]);
            free.push(slot);
            completed += 1;
        }
    }
}

/// `reads` split over `threads` threads, each with its own ring and `depth`
/// reads in flight; returns the makespan from a common barrier.
pub(crate) fn uring_threads(
    file: &File,
    blocks: u64,
    threads: usize,
    depth: usize,
    reads: u64,
) -> Duration {
    let barrier = Barrier::new(threads);
    let spans: Vec<Span> = thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    let start = Instant::now();
                    uring_reads(file, blocks, t, depth, share(reads, threads, t));
                    (start, Instant::now())
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("io_uring thread"))
            .collect()
    });
    makespan(&spans)
}

/// The chunks `ringsteal::fs::read` splits a file of `size` bytes into when it is 16 MiB or
/// more (`crates/ringsteal-fs/src/chunked_read.rs`): `size / 4 MiB` chunks, at least 2 and
/// at most 8, of equal length but the last.
pub(crate) fn ringsteal_chunks(size: usize) -> Vec<Range<usize>> {
    let chunks = (size / (4 << 20)).clamp(2, 8);
    let len = size.div_ceil(chunks);
    (0..chunks)
        .map(|i| (i * len).min(size)..((i + 1) * len).min(size))
        .collect()
}

/// The start of a buffer the threads of [`pread_chunked`] write disjoint parts of.
#[derive(Clone, Copy)]
struct Dest(*mut u8);
// SAFETY: each thread writes only its own chunk's range of the buffer, and the buffer
// outlives the scope every thread runs in.
unsafe impl Send for Dest {}

/// The first `size` bytes of `file`, read as [`ringsteal_chunks`] with one thread per
/// chunk, each `pread`ing its chunk into its part of one allocation (as large as
/// `ringsteal::fs::read` makes it: `size + 1`). Panics on a read error or a short file.
pub(crate) fn pread_chunked(file: &File, size: usize) -> Vec<u8> {
    let mut buf: Vec<u8> = Vec::with_capacity(size + 1);
    let dest = Dest(buf.as_mut_ptr());
    let fd = file.as_raw_fd();
    thread::scope(|s| {
        let threads: Vec<_> = ringsteal_chunks(size)
            .into_iter()
            .map(|chunk| {
                s.spawn(move || {
                    let dest = dest;
                    let mut at = chunk.start;
                    while at < chunk.end {
                        // SAFETY: `at..chunk.end` lies inside the buffer's capacity (every
                        // chunk ends at or before `size`), no other thread writes this range,
                        // and the buffer lives until after the scope has joined this thread.
                        let n = unsafe {
                            libc::pread(
                                fd,
                                dest.0.add(at).cast(),
                                chunk.end - at,
                                at as libc::off_t,
                            )
                        };
                        assert!(n > 0, "pread at {at}: {}", std::io::Error::last_os_error());
                        at += n as usize;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("pread thread");
        }
    });
    // SAFETY: the threads wrote every byte of `0..size` (each chunk read to its end, and
    // the chunks cover `0..size`), and every one of them has been joined.
    unsafe { buf.set_len(size) };
    buf
}
