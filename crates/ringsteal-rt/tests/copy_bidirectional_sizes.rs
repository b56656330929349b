//! `io::copy_bidirectional_with_sizes`: each direction reads through a buffer of its own
//! size (what bounds a proxy's memory per stalled connection), every byte arrives, a size
//! of 0 is refused, and one no allocation can have is `OutOfMemory`.

use std::sync::Mutex;

use ringsteal_rt::buf::{BufResult, IoBuf, IoBufMut};
use ringsteal_rt::io::{copy_bidirectional_with_sizes, AsyncReadOwned, AsyncWriteOwned};

/// One end of a relay: yields `input` to reads (recording the room each read offered) and
/// keeps what is written to it.
struct End {
    input: Vec<u8>,
    taken: Mutex<usize>,
    read_room: Mutex<Vec<usize>>,
    output: Mutex<Vec<u8>>,
}

impl End {
    fn new(input: Vec<u8>) -> Self {
        Self {
            input,
            taken: Mutex::new(0),
            read_room: Mutex::new(Vec::new()),
            output: Mutex::new(Vec::new()),
        }
    }
}

impl AsyncReadOwned for &End {
    async fn read<B: IoBufMut>(&mut self, buf: B) -> BufResult<usize, B> {
        self.read_room
            .lock()
            .unwrap()
            .push(buf.bytes_total() - buf.bytes_init());
        let taken = *self.taken.lock().unwrap();
        let mut rest = &self.input[taken..];
        let out = AsyncReadOwned::read(&mut rest, buf).await;
        *self.taken.lock().unwrap() = self.input.len() - rest.len();
        out
    }
}

impl AsyncWriteOwned for &End {
    async fn write<B: IoBuf>(&mut self, buf: B) -> BufResult<usize, B> {
        let mut out = std::mem::take(&mut *self.output.lock().unwrap());
        let res = AsyncWriteOwned::write(&mut out, buf).await;
        *self.output.lock().unwrap() = out;
        res
    }

    async fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }

    async fn shutdown(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect()
}

#[test]
fn each_direction_reads_through_its_own_buffer_and_loses_nothing() {
    let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    rt.block_on(async {
        let (up, down) = (bytes(100_000, 1), bytes(30_000, 2));
        let (a, b) = (End::new(up.clone()), End::new(down.clone()));
        let moved = copy_bidirectional_with_sizes(&a, &b, 1000, 777)
            .await
            .unwrap();
        assert_eq!(moved, (up.len() as u64, down.len() as u64));
        assert_eq!(b.output.lock().unwrap()[..], up[..]);
        assert_eq!(a.output.lock().unwrap()[..], down[..]);
        for (end, size) in [(&a, 1000), (&b, 777)] {
            let rooms = end.read_room.lock().unwrap();
            assert!(!rooms.is_empty());
            assert!(rooms.iter().all(|&r| r == size), "{rooms:?} for {size}");
        }
    });
}

#[test]
fn a_buffer_of_no_bytes_is_refused() {
    let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    rt.block_on(async {
        let (a, b) = (End::new(b"x".to_vec()), End::new(b"y".to_vec()));
        let err = copy_bidirectional_with_sizes(&a, &b, 4096, 0)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    });
}

#[test]
fn a_buffer_no_allocation_can_have_is_out_of_memory_not_an_abort() {
    let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    rt.block_on(async {
        let (a, b) = (End::new(b"x".to_vec()), End::new(b"y".to_vec()));
        let err = copy_bidirectional_with_sizes(&a, &b, usize::MAX, 4096)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::OutOfMemory);
    });
}
