//! The provided methods of the I/O traits (`read_exact`, `read_to_end`, `write_all`, ...),
//! written once over the required ones.
//!
//! May not: depend on any implementation; everything here goes through the traits.

use std::io;

use super::traits::{AsyncReadOwned, AsyncWriteOwned};
use super::write_then_read::WriteThenRead;
use crate::buf::{Advance, BufResult, IoBuf, IoBufMut, IoVecBuf};

/// How much a `read_to_end` grows its buffer by at least, when it is full.
const READ_TO_END_STEP: usize = 8 * 1024;

pub(crate) async fn read_exact<R, B>(r: &mut R, buf: B) -> BufResult<(), B>
where
    R: AsyncReadOwned + ?Sized,
    B: IoBufMut,
{
    let want = buf.bytes_total();
    let mut buf = buf;
    let mut filled = 0;
    while filled < want {
        let (res, slice) = r.read(buf.slice(filled..)).await;
        buf = slice.into_inner();
        match res {
            Ok(0) => return (Err(unexpected_eof()), buf),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (Err(e), buf),
        }
    }
    (Ok(()), buf)
}

pub(crate) fn unexpected_eof() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the stream ended before the buffer was full",
    )
}

/// The error for an allocation that failed: `OutOfMemory`, not an abort.
pub(crate) fn out_of_memory(e: std::collections::TryReserveError) -> io::Error {
    io::Error::new(io::ErrorKind::OutOfMemory, e)
}

/// An empty buffer with room for `capacity` bytes, or `OutOfMemory`.
pub(crate) fn buffer_with_capacity(capacity: usize) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    buf.try_reserve_exact(capacity).map_err(out_of_memory)?;
    Ok(buf)
}

pub(crate) async fn read_to_end<R>(r: &mut R, buf: Vec<u8>) -> BufResult<usize, Vec<u8>>
where
    R: AsyncReadOwned + ?Sized,
{
    let start = buf.len();
    let mut buf = buf;
    loop {
        if buf.len() == buf.capacity() {
            if let Err(e) = buf.try_reserve(READ_TO_END_STEP.max(buf.len() - start)) {
                return (Err(out_of_memory(e)), buf);
            }
        }
        let len = buf.len();
        let (res, slice) = r.read(buf.slice(len..)).await;
        buf = slice.into_inner();
        match res {
            Ok(0) => return (Ok(buf.len() - start), buf),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (Err(e), buf),
        }
    }
}

pub(crate) async fn write_all<W, B>(w: &mut W, buf: B) -> BufResult<(), B>
where
    W: AsyncWriteOwned + ?Sized,
    B: IoBuf,
{
    let want = buf.bytes_init();
    let mut buf = buf;
    let mut done = 0;
    while done < want {
        let (res, slice) = w.write(buf.slice(done..want)).await;
        buf = slice.into_inner();
        match res {
            Ok(0) => return (Err(write_zero()), buf),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (Err(e), buf),
        }
    }
    (Ok(()), buf)
}

pub(crate) fn write_zero() -> io::Error {
    io::Error::new(io::ErrorKind::WriteZero, "the writer accepted no bytes")
}

/// `write_all(out)`, then, if it succeeded, `read(buf)`; a failed write leaves the read
/// unmade ([`WriteThenRead::read_not_made`]).
pub(crate) async fn write_all_then_read<S, W, R>(
    s: &mut S,
    out: W,
    buf: R,
) -> (BufResult<(), W>, BufResult<usize, R>)
where
    S: AsyncReadOwned + AsyncWriteOwned + ?Sized,
    W: IoBuf,
    R: IoBufMut,
{
    let (res, out) = s.write_all(out).await;
    if let Err(e) = res {
        let skipped = WriteThenRead::<W, R>::read_not_made(&e);
        return ((Err(e), out), (Err(skipped), buf));
    }
    ((Ok(()), out), s.read(buf).await)
}

pub(crate) async fn write_all_vectored<W, B>(w: &mut W, bufs: B) -> BufResult<(), B>
where
    W: AsyncWriteOwned + ?Sized,
    B: IoVecBuf,
{
    let mut rest = Advance::new(bufs);
    while rest.remaining() > 0 {
        let (res, back) = w.writev(rest).await;
        rest = back;
        match res {
            Ok(0) => return (Err(write_zero()), rest.into_inner()),
            Ok(n) => rest.advance(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (Err(e), rest.into_inner()),
        }
    }
    (Ok(()), rest.into_inner())
}

pub(crate) async fn writev_by_copy<W, B>(w: &mut W, bufs: B) -> BufResult<usize, B>
where
    W: AsyncWriteOwned + ?Sized,
    B: IoVecBuf,
{
    // At most this much per call: a `write_all_vectored` calls again after every short
    // write, and copying all that is left each time was quadratic (a pipe takes 64 KiB a
    // write: 64 MiB took 17 s).
    let take = total_len(&bufs).min(WRITEV_COPY_MAX);
    let mut joined = Vec::with_capacity(take);
    for iov in bufs.iovecs() {
        let n = iov.iov_len.min(take - joined.len());
        // SAFETY: an IoVecBuf's iovecs describe initialised bytes of buffers it owns; n is
        // at most this one's length.
        joined
            .extend_from_slice(unsafe { std::slice::from_raw_parts(iov.iov_base.cast::<u8>(), n) });
        if joined.len() == take {
            break;
        }
    }
    let (res, _) = w.write(joined).await;
    (res, bufs)
}

/// The most bytes [`writev_by_copy`] gathers for one write.
const WRITEV_COPY_MAX: usize = 256 * 1024;

fn total_len<B: IoVecBuf>(bufs: &B) -> usize {
    bufs.iovecs().iter().map(|i| i.iov_len).sum()
}

pub(crate) async fn read_to_string<R>(r: &mut R, buf: String) -> BufResult<usize, String>
where
    R: AsyncReadOwned + ?Sized,
{
    let start = buf.len();
    let (res, bytes) = r.read_to_end(buf.into_bytes()).await;
    match String::from_utf8(bytes) {
        Ok(text) => (res, text),
        Err(e) => {
            let mut bytes = e.into_bytes();
            bytes.truncate(start);
            // What was there before is the string that was given: UTF-8.
            let given = String::from_utf8(bytes).unwrap_or_default();
            let err = io::Error::new(io::ErrorKind::InvalidData, "the stream is not valid UTF-8");
            (res.and(Err(err)), given)
        }
    }
}
