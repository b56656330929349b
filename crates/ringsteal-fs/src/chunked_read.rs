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
    let chunks = (size / CHUNK_MIN).clamp(2, CHUNKS_MAX);
    let chunk_len = size.div_ceil(chunks);
    let mut vec = Vec::new();
    vec.try_reserve_exact(size.saturating_add(1))?;
    let alloc = Arc::new(Allocation {
        ptr: vec.as_mut_ptr(),
        vec: UnsafeCell::new(Vec::new()),
    });
    // SAFETY: the Arc was just made and is not shared yet.
    unsafe { *alloc.vec.get() = vec };
    let mut ops: Vec<Option<Op<ReadAt<Chunk>>>> = (0..chunks)
        .map(|i| {
            let start = i * chunk_len;
            let len = chunk_len.min(size - start);
            let chunk = Chunk {
                alloc: alloc.clone(),
                start,
                len,
            };
            Some(file.read_at(chunk, start as u64).force_async())
        })
        .collect();
    let mut results: Vec<Option<io::Result<usize>>> = (0..chunks).map(|_| None).collect();
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
    let mut filled = 0;
    for (i, res) in results.into_iter().enumerate() {
        let n = match res.expect("every chunk completed") {
            // Read on from here, as after a short chunk (the sequential reads retry it).
            Err(e) if e.kind() == io::ErrorKind::Interrupted => break,
            res => res?,
        };
        let len = chunk_len.min(size - i * chunk_len);
        filled += n;
        if n < len {
            break; // the file is shorter than it was: the caller reads on from here
        }
    }
    let alloc =
        Arc::try_unwrap(alloc).map_err(|_| io::Error::other("chunk buffers still shared"))?;
    let mut vec = alloc.vec.into_inner();
    // SAFETY: the first `filled` bytes were written by the reads, contiguously from 0.
    unsafe { vec.set_len(filled) };
    Ok(vec)
}
