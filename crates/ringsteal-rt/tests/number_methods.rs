//! The number methods (`read_u32`, `write_u64_le`, ...) on a `BufReader` or `BufWriter`
//! cost a copy while the buffer holds the bytes or has room: no allocation per call, as
//! tokio's. A test binary of its own, since it counts allocations with a global allocator.

mod common;

use std::future::Future;

use common::block_on_plain;
use common::counting::{allocations, Counting};
use ringsteal_rt::buf::{BufResult, IoBufMut};
use ringsteal_rt::io::{AsyncReadOwned, AsyncWriteOwned, BufReader, BufWriter};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A reader with nothing but `read` (no bytes in memory of its own to offer): what a
/// `BufReader` over a socket sees.
struct Source {
    bytes: Vec<u8>,
    pos: usize,
}

impl AsyncReadOwned for Source {
    fn read<B: IoBufMut>(&mut self, buf: B) -> impl Future<Output = BufResult<usize, B>> + Send {
        let mut buf = buf;
        let n = (self.bytes.len() - self.pos).min(buf.bytes_total());
        // SAFETY: `buf` is owned, valid for bytes_total() >= n bytes of writes, and not in
        // `self.bytes`; the n bytes are then initialised.
        unsafe {
            std::ptr::copy_nonoverlapping(self.bytes[self.pos..].as_ptr(), buf.stable_mut_ptr(), n);
            buf.set_init(n);
        }
        self.pos += n;
        std::future::ready((Ok(n), buf))
    }
}

fn numbers(count: u32) -> Vec<u8> {
    (0..count).flat_map(|i| (i * 7919).to_be_bytes()).collect()
}

#[test]
fn reading_numbers_from_a_filled_buffer_allocates_nothing() {
    let mut reader = BufReader::with_capacity(
        400,
        Source {
            bytes: numbers(100),
            pos: 0,
        },
    );
    block_on_plain(async {
        reader.fill_buf().await.unwrap();
        let before = allocations();
        for i in 0..100u32 {
            assert_eq!(reader.read_u32().await.unwrap(), i * 7919);
        }
        assert_eq!(allocations() - before, 0, "100 read_u32s from the buffer");
    });
}

#[test]
fn numbers_that_straddle_refills_read_back_in_order() {
    // 4-byte numbers through a 6-byte buffer: every other one is split by a refill.
    let mut reader = BufReader::with_capacity(
        6,
        Source {
            bytes: numbers(50),
            pos: 0,
        },
    );
    block_on_plain(async {
        for i in 0..50u32 {
            assert_eq!(reader.read_u32().await.unwrap(), i * 7919);
        }
        let err = reader.read_u8().await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
    });
}

#[test]
fn writing_numbers_into_a_buffer_with_room_allocates_nothing() {
    let mut writer = BufWriter::with_capacity(400, Vec::with_capacity(1024));
    block_on_plain(async {
        writer.write_u32(0).await.unwrap(); // allocates the buffer
        let before = allocations();
        for i in 1..100u32 {
            writer.write_u32(i * 7919).await.unwrap();
        }
        assert_eq!(allocations() - before, 0, "99 write_u32s into the buffer");
        assert!(writer.get_ref().is_empty(), "all still buffered");
        // Past the buffer's room, the numbers go out in order.
        for i in 100..250u32 {
            writer.write_u32(i * 7919).await.unwrap();
        }
        writer.flush().await.unwrap();
    });
    assert_eq!(writer.into_inner(), numbers(250));
}
