//! [`copy_bidirectional`]: tokio's proxy loop, both directions of two streams at once.
//!
//! May not: copy by itself ([`copy`](super::copy) does each direction).

use std::future::{poll_fn, Future};
use std::io;
use std::pin::pin;
use std::task::Poll;

use super::copy::{copy_through, COPY_BUF};
use super::traits::{AsyncReadOwned, AsyncWriteOwned};

/// Copies `a`'s bytes to `b` and `b`'s to `a` at the same time, as tokio's
/// `copy_bidirectional`: when one side's reader reaches its end, the other side's write side
/// is shut down (the half-close is passed on) and the other direction goes on, until both
/// have ended. Yields the bytes copied `a` to `b` and `b` to `a`. The first error of either
/// direction ends both and is returned.
///
/// It takes shared references: the two directions of a stream are used at once, which
/// ringsteal's streams allow (`&TcpStream` and `&UnixStream` read and write; their lanes keep
/// each direction in order). Each direction is [`copy`](super::copy), so a regular file is
/// spliced and a socket read through a 64 KiB buffer; dropping the future loses what was
/// read and not yet written, as with tokio.
///
/// With `ringsteal::net`'s streams: `copy_bidirectional(&client, &backend).await?` in each
/// connection's task of a proxy (`crates/ringsteal-net/tests/io_traits.rs` runs one).
pub async fn copy_bidirectional<'a, A, B>(a: &'a A, b: &'a B) -> io::Result<(u64, u64)>
where
    A: ?Sized,
    B: ?Sized,
    &'a A: AsyncReadOwned + AsyncWriteOwned,
    &'a B: AsyncReadOwned + AsyncWriteOwned,
{
    copy_bidirectional_with_sizes(a, b, COPY_BUF, COPY_BUF).await
}

/// [`copy_bidirectional`] with a buffer of `a_to_b` bytes for the copy from `a` to `b` and
/// of `b_to_a` bytes for the other direction, as tokio's `copy_bidirectional_with_sizes`: a
/// proxy holding many stalled connections bounds its memory with small buffers (each
/// direction of a socket pair holds up to its buffer while the peer does not read). A size
/// of 0 fails with `InvalidInput`.
///
/// ```ignore
/// // In a proxy's connection task, with `ringsteal::net::TcpStream`s:
/// let (up, down) = copy_bidirectional_with_sizes(&client, &backend, 8192, 8192).await?;
/// ```
pub async fn copy_bidirectional_with_sizes<'a, A, B>(
    a: &'a A,
    b: &'a B,
    a_to_b: usize,
    b_to_a: usize,
) -> io::Result<(u64, u64)>
where
    A: ?Sized,
    B: ?Sized,
    &'a A: AsyncReadOwned + AsyncWriteOwned,
    &'a B: AsyncReadOwned + AsyncWriteOwned,
{
    let a_to_b = pin!(one_way(a, b, a_to_b));
    let b_to_a = pin!(one_way(b, a, b_to_a));
    join_or_first_error(a_to_b, b_to_a).await
}

/// Copies `from` to `to` until `from` ends, then shuts `to`'s write side down.
async fn one_way<'a, R, W>(from: &'a R, to: &'a W, buf_size: usize) -> io::Result<u64>
where
    R: ?Sized,
    W: ?Sized,
    &'a R: AsyncReadOwned,
    &'a W: AsyncWriteOwned,
{
    let (mut reader, mut writer) = (from, to);
    let n = copy_through(&mut reader, &mut writer, buf_size).await?;
    writer.shutdown().await?;
    Ok(n)
}

/// Both results, or the first error as soon as either fails.
async fn join_or_first_error<F, G>(
    mut f: std::pin::Pin<&mut F>,
    mut g: std::pin::Pin<&mut G>,
) -> io::Result<(u64, u64)>
where
    F: Future<Output = io::Result<u64>>,
    G: Future<Output = io::Result<u64>>,
{
    let (mut first, mut second) = (None, None);
    poll_fn(|cx| {
        if first.is_none() {
            if let Poll::Ready(res) = f.as_mut().poll(cx) {
                first = Some(res?);
            }
        }
        if second.is_none() {
            if let Poll::Ready(res) = g.as_mut().poll(cx) {
                second = Some(res?);
            }
        }
        match (first, second) {
            (Some(x), Some(y)) => Poll::Ready(Ok((x, y))),
            _ => Poll::Pending,
        }
    })
    .await
}
