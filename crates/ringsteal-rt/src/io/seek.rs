//! [`AsyncSeek`]: moving a reader's or writer's position, as tokio's `AsyncSeekExt`, and the
//! buffered types' implementations (a [`BufReader`] drops what it buffered, a
//! [`BufWriter`] writes it out first, as tokio's and std's do).
//!
//! May not: hold state; a seek of a buffered type is the inner value's seek plus what the
//! buffer changes.

use std::future::Future;
use std::io::{self, SeekFrom};

use super::buf_reader::BufReader;
use super::buf_writer::BufWriter;
use super::traits::AsyncWriteOwned;

/// A position that can be moved: `ringsteal::fs::File` (and `&File`), `std::io::Cursor`,
/// and the buffered types over one. The methods of tokio's `AsyncSeekExt`; a `BufReader`'s
/// `stream_position` keeps its buffer, as std's does.
///
/// ```
/// use std::io::{Cursor, SeekFrom};
/// use ringsteal_rt::io::{AsyncReadOwned, AsyncSeek, BufReader};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     // Any `AsyncSeek + AsyncReadOwned`: a `Cursor` here, `fs::File` in practice.
///     let mut reader = BufReader::new(Cursor::new(b"header\nbody".to_vec()));
///     let mut line = String::new();
///     reader.read_line(&mut line).await?;
///     assert_eq!(reader.stream_position().await?, 7); // where the caller is, not the buffer
///     reader.seek(SeekFrom::Current(2)).await?;
///     let (n, rest) = reader.read_to_end(Vec::new()).await;
///     assert_eq!((n?, &rest[..]), (2, &b"dy"[..]));
///     reader.rewind().await?;
///     line.clear();
///     reader.read_line(&mut line).await?;
///     assert_eq!(line, "header\n");
///     Ok::<(), std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub trait AsyncSeek: Send {
    /// Moves the position; yields the new one, from the start.
    fn seek(&mut self, pos: SeekFrom) -> impl Future<Output = io::Result<u64>> + Send;

    /// Moves the position to the start.
    fn rewind(&mut self) -> impl Future<Output = io::Result<()>> + Send {
        async move { self.seek(SeekFrom::Start(0)).await.map(drop) }
    }

    /// The current position, from the start.
    fn stream_position(&mut self) -> impl Future<Output = io::Result<u64>> + Send {
        self.seek(SeekFrom::Current(0))
    }
}

/// Drops the buffered bytes, as std's and tokio's `BufReader` do on every seek (even one
/// that would land inside the buffer); a `SeekFrom::Current` counts from the caller's
/// position, behind what is buffered.
impl<R: AsyncSeek> AsyncSeek for BufReader<R> {
    async fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let at = match pos {
            SeekFrom::Current(n) => {
                let buffered = self.buffer().len() as i64;
                match n.checked_sub(buffered) {
                    Some(from_inner) => self.get_mut().seek(SeekFrom::Current(from_inner)).await?,
                    None => {
                        // Past what an i64 holds: two moves, as std's does.
                        self.get_mut().seek(SeekFrom::Current(-buffered)).await?;
                        self.discard_buffer();
                        self.get_mut().seek(SeekFrom::Current(n)).await?
                    }
                }
            }
            other => self.get_mut().seek(other).await?,
        };
        self.discard_buffer();
        Ok(at)
    }

    /// The inner position less what is buffered, keeping the buffer, as std's `BufReader`
    /// (tokio's seeks, which drops the buffer).
    async fn stream_position(&mut self) -> io::Result<u64> {
        let buffered = self.buffer().len() as u64;
        let inner = self.get_mut().stream_position().await?;
        inner.checked_sub(buffered).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "the inner reader's position is before the bytes buffered from it",
            )
        })
    }
}

/// Writes the buffered bytes out first, as tokio's `BufWriter` does, then moves.
impl<W: AsyncWriteOwned + AsyncSeek> AsyncSeek for BufWriter<W> {
    async fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.flush_buf().await?;
        self.get_mut().seek(pos).await
    }
}
