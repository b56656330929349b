//! Reading a large file as several concurrent chunk reads into one allocation.
//!
//! A single read of a large cached file copies inline in the shard's `io_uring_enter`, holding
//! the shard for the whole copy (tens of milliseconds for 100 MB). Split into chunks forced
//! into the kernel's worker pool (`IOSQE_ASYNC`), the copies run on worker threads, in
//! parallel on several CPUs, and the shard keeps running its other tasks meanwhile.
//!
//! Each chunk read owns a counted reference to the allocation (`Chunk`), so if the caller
//! drops the read half-way, the memory lives until the last cancelled chunk's completion.

use std::cell::UnsafeCell;
use std::future::{poll_fn, Future};
use std::io;
use std::sync::Arc;
use std::task::Poll;

use ringsteal_rt::buf::{IoBuf, IoBufMut};
use ringsteal_rt::op::{Op, ReadAt};

use crate::File;

/// Files from this size up are read in chunks.
pub(crate) const CHUNKED_MIN: usize = 16 << 20;
/// Smallest chunk.
const CHUNK_MIN: usize = 4 << 20;
/// Most chunks in flight.
const CHUNKS_MAX: usize = 8;
/// The most one read moves (Linux's `MAX_RW_COUNT`: `INT_MAX` rounded down to a 4 KiB page).
/// A longer chunk would come back short, which reads as a file that shrank.
const CHUNK_MAX: usize = 0x7fff_f000;

/// How `size` bytes are read: rounds of up to `chunks` concurrent reads of `chunk_len` bytes
/// (the file's last one shorter), as many rounds as it takes. One round for files up to
/// `CHUNKS_MAX * CHUNK_MAX` bytes (about 16 GiB).
fn chunk_plan(size: usize) -> (usize, usize) {
    let chunks = (size / CHUNK_MIN).clamp(2, CHUNKS_MAX);
    (chunks, size.div_ceil(chunks).min(CHUNK_MAX))
}

/// The allocation the chunks write into.
struct Allocation {
    ptr: *mut u8,
    vec: UnsafeCell<Vec<u8>>,
}

// SAFETY: the chunks write disjoint ranges through `ptr`; the Vec itself is only touched by
// whoever holds the last reference (`into_vec`).
unsafe impl Send for Allocation {}
// SAFETY: as above.
unsafe impl Sync for Allocation {}

/// One chunk: `len` bytes at `start` of the shared allocation.
struct Chunk {
    alloc: Arc<Allocation>,
    start: usize,
    len: usize,
}

// SAFETY: the range lies inside the allocation's capacity, which never moves (the Vec is not
// touched while chunks exist), and no two chunks overlap.
unsafe impl IoBuf for Chunk {
    fn stable_ptr(&self) -> *const u8 {
        // SAFETY: start < capacity (checked when the chunks are made).
        unsafe { self.alloc.ptr.add(self.start) }
    }
    fn bytes_init(&self) -> usize {
        0
    }
    fn bytes_total(&self) -> usize {
        self.len
    }
}

// SAFETY: as above; the kernel writes only inside the chunk's range.
unsafe impl IoBufMut for Chunk {
    fn stable_mut_ptr(&mut self) -> *mut u8 {
        // SAFETY: as above.
        unsafe { self.alloc.ptr.add(self.start) }
    }
    unsafe fn set_init(&mut self, _: usize) {
        // The caller tracks how much each chunk read and sets the Vec's length once.
    }
}

/// Reads the first `size` bytes of `file` in concurrent chunks. Returns a Vec with capacity
/// for `size + 1` bytes whose length is the contiguous prefix that was read (shorter if the
/// file shrank); the caller reads on from there to end of file. Fails with `OutOfMemory` if
/// that cannot be allocated.
pub(crate) async fn read_chunked(file: &File, size: usize) -> io::Result<Vec<u8>> {
    let (chunks, chunk_len) = chunk_plan(size);
    let mut vec = Vec::new();
    vec.try_reserve_exact(size.saturating_add(1))?;
    let alloc = Arc::new(Allocation {
        ptr: vec.as_mut_ptr(),
        vec: UnsafeCell::new(Vec::new()),
    });
    // SAFETY: the Arc was just made and is not shared yet.
    unsafe { *alloc.vec.get() = vec };
    let mut filled = 0;
    'rounds: while filled < size {
        let base = filled;
        let lens: Vec<usize> = (0..chunks)
            .map(|i| base + i * chunk_len)
            .take_while(|&start| start < size)
            .map(|start| chunk_len.min(size - start))
            .collect();
        let mut ops: Vec<Option<Op<ReadAt<Chunk>>>> = lens
            .iter()
            .enumerate()
            .map(|(i, &len)| {
                let start = base + i * chunk_len;
                let chunk = Chunk {
                    alloc: alloc.clone(),
                    start,
                    len,
                };
                Some(file.read_at(chunk, start as u64).force_async())
            })
            .collect();
        let mut results: Vec<Option<io::Result<usize>>> = lens.iter().map(|_| None).collect();
        poll_fn(|cx| {
            let mut pending = false;
            for (op, result) in ops.iter_mut().zip(results.iter_mut()) {
                if let Some(fut) = op {
                    match std::pin::Pin::new(fut).poll(cx) {
                        Poll::Ready((res, chunk)) => {
                            drop(chunk);
                            *result = Some(res);
                            *op = None;
                        }
                        Poll::Pending => pending = true,
                    }
                }
            }
            if pending {
                Poll::Pending
            } else {
                Poll::Ready(())
            }
        })
        .await;
        for (res, len) in results.into_iter().zip(lens) {
            let n = match res.expect("every chunk completed") {
                // Read on from here, as after a short chunk (the sequential reads retry it).
                Err(e) if e.kind() == io::ErrorKind::Interrupted => break 'rounds,
                res => res?,
            };
            filled += n;
            if n < len {
                break 'rounds; // the file is shorter than it was: the caller reads on from here
            }
        }
    }
    let alloc =
        Arc::try_unwrap(alloc).map_err(|_| io::Error::other("chunk buffers still shared"))?;
    let mut vec = alloc.vec.into_inner();
    // SAFETY: the first `filled` bytes were written by the reads, contiguously from 0.
    unsafe { vec.set_len(filled) };
    Ok(vec)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rounds of [`chunk_plan`] cover `size` bytes without a read longer than the kernel
    /// moves at once; the number of rounds it takes.
    fn rounds(size: usize) -> usize {
        let (chunks, chunk_len) = chunk_plan(size);
        assert!(
            (2..=CHUNKS_MAX).contains(&chunks),
            "{size}: {chunks} chunks"
        );
        assert!(
            chunk_len <= CHUNK_MAX,
            "{size}: chunks of {chunk_len} bytes"
        );
        assert!(
            chunk_len >= CHUNK_MIN / 2,
            "{size}: chunks of {chunk_len} bytes"
        );
        size.div_ceil(chunks * chunk_len)
    }

    #[test]
    fn a_file_up_to_16_gib_is_read_in_one_round_and_a_larger_one_in_chunks_the_kernel_can_move() {
        assert_eq!(rounds(CHUNKED_MIN), 1);
        assert_eq!(rounds(100 << 20), 1);
        assert_eq!(rounds(CHUNKS_MAX * CHUNK_MAX), 1);
        assert_eq!(rounds(CHUNKS_MAX * CHUNK_MAX + 1), 2);
        assert_eq!(rounds(20 << 30), 2);
        assert_eq!(rounds(100 << 30), 7);
    }
}
