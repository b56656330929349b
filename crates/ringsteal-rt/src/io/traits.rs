//! [`AsyncReadOwned`] and [`AsyncWriteOwned`]: the owned-buffer read and write traits, and
//! [`SpliceEnd`], what a type offers to [`copy`](super::copy) to move bytes in the kernel.
//!
//! May not: hold state; the provided methods are in `provided.rs` (the number methods in
//! `numbers.rs`).

use std::future::Future;
use std::io;

use super::lane::Lane;
use super::provided;
use super::read_buf::{self, AppendBuf};
use crate::buf::{BufResult, IoBuf, IoBufMut, IoVecBuf};
use crate::op::SharedFd;

/// A source of bytes read with owned buffers: a read takes the buffer and gives it back with
/// the result, so the kernel can fill it after the call returned (io_uring).
///
/// A read fills `buf` from its start, up to its capacity (`bytes_total`), and extends its
/// initialised length; `Ok(0)` means end of stream, or an empty buffer (a socket's read
/// into an empty buffer returns once the socket is readable, as tokio's does). Methods take
/// `&mut self`, so an implementation may keep state without locks; types that can be read
/// from several tasks at once (TCP and Unix streams) implement the trait for `&T` too, as
/// std does for `Read`. Returned futures are `Send`, so generic code over these traits can
/// be spawned on any shard.
///
/// Dropping a read's future cancels the read. ringsteal's streams keep the bytes of a read
/// that completed anyway and return them from the next read (see [`Lane`]); an
/// implementation outside ringsteal should say what it does.
///
/// ```
/// use ringsteal_rt::io::AsyncReadOwned;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let mut src: &[u8] = b"hello world";
///     let (res, buf) = src.read(Vec::with_capacity(5)).await;
///     assert_eq!((res.unwrap(), &buf[..]), (5, &b"hello"[..]));
///     let (res, rest) = src.read_to_end(Vec::new()).await;
///     assert_eq!((res.unwrap(), &rest[..]), (6, &b" world"[..]));
///
///     // tokio's number methods: big-endian, and `_le` for little-endian.
///     let mut frame: &[u8] = &[0, 0, 1, 0, 0x2a, 0];
///     assert_eq!(frame.read_u32().await.unwrap(), 256);
///     assert_eq!(frame.read_u16_le().await.unwrap(), 42);
///     let err = frame.read_u8().await.unwrap_err();
///     assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
/// });
/// ```
pub trait AsyncReadOwned: Send {
    /// Reads into `buf` (from its start, up to its capacity). Yields the byte count and the
    /// buffer, on success and on error alike.
    fn read<B: IoBufMut>(&mut self, buf: B) -> impl Future<Output = BufResult<usize, B>> + Send;

    /// Fills `buf` to its capacity, or fails with `UnexpectedEof` if the stream ends first
    /// (the bytes read so far are in the buffer, its initialised length says how many).
    fn read_exact<B: IoBufMut>(&mut self, buf: B) -> impl Future<Output = BufResult<(), B>> + Send {
        provided::read_exact(self, buf)
    }

    /// Reads once and appends what it read to `buf`, which stays with the caller, as tokio's
    /// `AsyncReadExt::read_buf`: yields the count, `0` only at the end of the stream (a full
    /// buffer grows; one read asks for the buffer's spare room, at least 4 KiB and at most
    /// 64 KiB). `buf` is a `Vec<u8>`, or a `bytes::BytesMut` with the `bytes` feature.
    ///
    /// Made for a frame buffer read inside `select!` or under a timeout: dropped before it
    /// completes, it leaves `buf` as it was, and a stream (TCP, Unix, their halves) keeps
    /// the bytes of the dropped read for its next read, so nothing is lost. Moving the
    /// frame buffer itself into [`read`](Self::read) instead would lose what it held when
    /// the read is dropped. The price is a copy of what was read; the read's own buffer is
    /// one the thread keeps for its next `read_buf` (at most 64 KiB per thread), so a loop
    /// of them allocates it once.
    ///
    /// ```
    /// use ringsteal_rt::io::AsyncReadOwned;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let mut src: &[u8] = b"*1\r\n$4\r\nPING\r\n";
    ///     let mut frame = Vec::new();
    ///     while !frame.ends_with(b"PING\r\n") {
    ///         if src.read_buf(&mut frame).await.unwrap() == 0 {
    ///             break; // end of stream
    ///         }
    ///     }
    ///     assert_eq!(frame, b"*1\r\n$4\r\nPING\r\n");
    /// });
    /// ```
    fn read_buf<B: AppendBuf + ?Sized>(
        &mut self,
        buf: &mut B,
    ) -> impl Future<Output = io::Result<usize>> + Send {
        read_buf::read_buf(self, buf)
    }

    /// Appends everything up to the end of the stream to `buf`. Yields the number of bytes
    /// appended and the buffer.
    ///
    /// Not for racing against a timeout: dropped, it loses what it had appended (the buffer
    /// goes with the future; tokio's appends to a vector the caller keeps). A lane-keeping
    /// reader keeps only the bytes of the read in flight then.
    fn read_to_end(
        &mut self,
        buf: Vec<u8>,
    ) -> impl Future<Output = BufResult<usize, Vec<u8>>> + Send {
        provided::read_to_end(self, buf)
    }

    /// Appends everything up to the end of the stream to `buf` as text, as tokio's
    /// `read_to_string`; yields the number of bytes appended and the string.
    ///
    /// # Errors
    /// The reader's, or `InvalidData` if what was read is not UTF-8: the string then comes
    /// back as it was given (the bytes read are lost, as with tokio).
    ///
    /// ```
    /// use ringsteal_rt::io::AsyncReadOwned;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let mut src: &[u8] = "grüße".as_bytes();
    ///     let (res, text) = src.read_to_string(String::from("> ")).await;
    ///     assert_eq!((res.unwrap(), text.as_str()), (7, "> grüße"));
    ///     let mut bad: &[u8] = &[0xff, 0xfe];
    ///     let (res, text) = bad.read_to_string(String::from("kept")).await;
    ///     assert_eq!(res.unwrap_err().kind(), std::io::ErrorKind::InvalidData);
    ///     assert_eq!(text, "kept");
    /// });
    /// ```
    fn read_to_string(
        &mut self,
        buf: String,
    ) -> impl Future<Output = BufResult<usize, String>> + Send {
        provided::read_to_string(self, buf)
    }

    read_numbers!();

    /// Fills all of `dst` from bytes this reader already holds in memory (what a
    /// [`BufReader`](super::BufReader) has buffered, a byte slice), with no I/O and no wait,
    /// and yields `true`; or consumes nothing and yields `false` if it holds fewer. The
    /// number methods ([`read_u32`](Self::read_u32), ...) try it first, so that on a
    /// `BufReader` they cost a copy rather than an owned buffer and a read. Default:
    /// `false`. A wrapper that reads through to an inner reader may forward it.
    ///
    /// ```
    /// use ringsteal_rt::io::{AsyncReadOwned, BufReader};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let mut reader = BufReader::new(&[1u8, 2, 3][..]);
    ///     let mut two = [0u8; 2];
    ///     assert!(!reader.read_exact_from_memory(&mut two), "nothing buffered yet");
    ///     reader.fill_buf().await.unwrap();
    ///     assert!(reader.read_exact_from_memory(&mut two));
    ///     assert_eq!(two, [1, 2]);
    ///     assert!(!reader.read_exact_from_memory(&mut two), "one byte left");
    ///     assert_eq!(reader.buffer(), [3]);
    /// });
    /// ```
    fn read_exact_from_memory(&mut self, dst: &mut [u8]) -> bool {
        let _ = dst;
        false
    }

    /// The descriptor [`copy`](super::copy) may splice from, if this type reads straight
    /// from one (no user-space buffer in between). Default: none.
    fn splice_source(&self) -> Option<SpliceEnd<'_>> {
        None
    }
}

/// A sink of bytes written with owned buffers: a write takes the buffer and gives it back
/// with the byte count, which may be short.
///
/// Methods take `&mut self` and return `Send` futures, as for [`AsyncReadOwned`]. Dropping a
/// write's future cancels the write, but the kernel may have sent any prefix of the buffer
/// by then; ringsteal's streams make sure the next write starts only after the dropped one
/// has finished, so bytes of two writes never interleave.
///
/// ```
/// use ringsteal_rt::io::AsyncWriteOwned;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let mut sink: Vec<u8> = Vec::new();
///     let (res, _) = sink.write_all(b"hello ".to_vec()).await;
///     res.unwrap();
///     let (res, _) = sink.write_all_vectored((b"wor".to_vec(), b"ld".to_vec())).await;
///     res.unwrap();
///     assert_eq!(sink, b"hello world");
///
///     let mut frame: Vec<u8> = Vec::new();
///     frame.write_u32(256).await.unwrap();
///     frame.write_u16_le(42).await.unwrap();
///     assert_eq!(frame, [0, 0, 1, 0, 0x2a, 0]);
/// });
/// ```
pub trait AsyncWriteOwned: Send {
    /// Writes the initialised bytes of `buf`; yields how many were written and the buffer.
    fn write<B: IoBuf>(&mut self, buf: B) -> impl Future<Output = BufResult<usize, B>> + Send;

    /// Writes the buffers of `bufs` in order, as one request where the type can (`sendmsg`
    /// for sockets). The default copies them into one buffer and calls
    /// [`write`](Self::write).
    fn writev<B: IoVecBuf>(&mut self, bufs: B) -> impl Future<Output = BufResult<usize, B>> + Send {
        provided::writev_by_copy(self, bufs)
    }

    /// Writes all initialised bytes of `buf`, or fails (`WriteZero` if nothing is accepted).
    fn write_all<B: IoBuf>(&mut self, buf: B) -> impl Future<Output = BufResult<(), B>> + Send {
        provided::write_all(self, buf)
    }

    /// Writes all bytes of `bufs` in order with as few requests as the type allows (a
    /// length prefix and its payload in one `sendmsg`, for instance).
    fn write_all_vectored<B: IoVecBuf>(
        &mut self,
        bufs: B,
    ) -> impl Future<Output = BufResult<(), B>> + Send {
        provided::write_all_vectored(self, bufs)
    }

    /// Writes all of `out`, then reads once into `buf` (from its start, up to its
    /// capacity): `write_all(out)` followed by `read(buf)`, the step of a request/response
    /// server that answers and waits for the next request. If the write fails the read is
    /// not made, and its result is an error of the write's kind.
    ///
    /// TCP and Unix streams make the two one pair of linked requests (`SEND` with
    /// `MSG_WAITALL`, then `RECV`): one submission and one wake-up of the task for both,
    /// where a write and a read cost two of each. Their write lane is let go as soon as
    /// everything is sent, as `write_all`'s would be. Dropped before it completes, it is a
    /// dropped `write_all` and a dropped `read`: some of `out` may have been sent, and bytes
    /// the read received are kept for the next read. The default makes the two calls.
    ///
    /// ```
    /// use ringsteal_rt::io::AsyncWriteOwned;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     // Anything that reads and writes: here a reader and a writer glued together.
    ///     struct Both(&'static [u8], Vec<u8>);
    ///     impl ringsteal_rt::io::AsyncReadOwned for Both {
    ///         async fn read<B: ringsteal_rt::buf::IoBufMut>(&mut self, buf: B) -> ringsteal_rt::buf::BufResult<usize, B> {
    ///             self.0.read(buf).await
    ///         }
    ///     }
    ///     impl AsyncWriteOwned for Both {
    ///         async fn write<B: ringsteal_rt::buf::IoBuf>(&mut self, buf: B) -> ringsteal_rt::buf::BufResult<usize, B> {
    ///             self.1.write(buf).await
    ///         }
    ///         async fn shutdown(&mut self) -> std::io::Result<()> {
    ///             Ok(())
    ///         }
    ///     }
    ///     let mut io = Both(b"next request", Vec::new());
    ///     let ((sent, _), (n, next)) = io.write_all_then_read(b"reply".to_vec(), Vec::with_capacity(64)).await;
    ///     sent.unwrap();
    ///     assert_eq!(&next[..n.unwrap()], b"next request");
    ///     assert_eq!(io.1, b"reply");
    /// });
    /// ```
    fn write_all_then_read<W: IoBuf, R: IoBufMut>(
        &mut self,
        out: W,
        buf: R,
    ) -> impl Future<Output = (BufResult<(), W>, BufResult<usize, R>)> + Send
    where
        Self: AsyncReadOwned,
    {
        provided::write_all_then_read(self, out, buf)
    }

    write_numbers!();

    /// Takes all of `src` into memory this writer holds (a
    /// [`BufWriter`](super::BufWriter)'s buffer while it has room, a `Vec<u8>`), with no I/O
    /// and no wait, and yields `true`; or takes nothing and yields `false`. The number
    /// methods ([`write_u32`](Self::write_u32), ...) try it first, so that on a `BufWriter`
    /// they cost a copy rather than an owned buffer. Default: `false`. A wrapper that writes
    /// through to an inner writer may forward it.
    ///
    /// ```
    /// use ringsteal_rt::io::{AsyncWriteOwned, BufWriter};
    ///
    /// let mut writer = BufWriter::with_capacity(4, Vec::new());
    /// assert!(writer.write_all_to_memory(b"abc"));
    /// assert!(!writer.write_all_to_memory(b"de"), "no room: a write must flush first");
    /// assert_eq!(writer.buffer(), b"abc");
    /// ```
    fn write_all_to_memory(&mut self, src: &[u8]) -> bool {
        let _ = src;
        false
    }

    /// Writes out anything buffered in user space. Default: nothing to do.
    fn flush(&mut self) -> impl Future<Output = io::Result<()>> + Send {
        std::future::ready(Ok(()))
    }

    /// Flushes, then ends the stream for the reader (a socket's `shutdown(SHUT_WR)`).
    fn shutdown(&mut self) -> impl Future<Output = io::Result<()>> + Send;

    /// The descriptor [`copy`](super::copy) may splice into, if this type writes straight
    /// to one. Default: none.
    fn splice_sink(&self) -> Option<SpliceEnd<'_>> {
        None
    }
}

/// One end of a kernel-side copy: a descriptor and the [`Lane`] that orders its reads (for a
/// source) or writes (for a sink), so a splice neither overtakes nor is overtaken by the
/// type's own reads and writes, and a source's leftover bytes are copied first.
///
/// ```
/// use ringsteal_rt::io::{Lane, SpliceEnd};
/// use ringsteal_rt::op::SharedFd;
///
/// let fd = SharedFd::new(std::fs::File::open("/dev/null").unwrap().into());
/// let lane = Lane::new();
/// let end = SpliceEnd::new(&fd, &lane);
/// assert!(!end.lane().is_held());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SpliceEnd<'a> {
    fd: &'a SharedFd,
    lane: &'a Lane,
    after: Option<&'a Lane>,
}

impl<'a> SpliceEnd<'a> {
    /// `fd`, read or written at its current position, ordered by `lane`.
    pub fn new(fd: &'a SharedFd, lane: &'a Lane) -> Self {
        Self {
            fd,
            lane,
            after: None,
        }
    }

    /// A source whose splices also wait for `first` to be free before taking their own lane
    /// (and let it go once they hold it): a seekable file's write lane, so a splice from the
    /// file's position starts after the write in flight there, as its reads do.
    ///
    /// ```
    /// use ringsteal_rt::io::{Lane, SpliceEnd};
    /// use ringsteal_rt::op::SharedFd;
    ///
    /// let fd = SharedFd::new(std::fs::File::open("/dev/null").unwrap().into());
    /// let (reads, writes) = (Lane::new(), Lane::new());
    /// let end = SpliceEnd::new(&fd, &reads).after(&writes);
    /// assert!(end.waits_for().is_some());
    /// ```
    pub fn after(self, first: &'a Lane) -> Self {
        Self {
            after: Some(first),
            ..self
        }
    }

    /// The lane a splice from this source waits for first, if any ([`after`](Self::after)).
    pub fn waits_for(&self) -> Option<&'a Lane> {
        self.after
    }

    /// The descriptor.
    pub fn fd(&self) -> &'a SharedFd {
        self.fd
    }

    /// The lane that orders its I/O.
    pub fn lane(&self) -> &'a Lane {
        self.lane
    }
}

/// Implements both traits for a pointer type (`&mut T`, `Box<T>`) by forwarding *every*
/// method to the pointee, the provided ones included: a type's own `read_exact` or
/// `write_all` may promise more than the provided loops (a stream's keep a dropped
/// `read_exact`'s bytes and hold its write lane for the whole call), and a pointer to it
/// must keep those promises. All but `write_all_then_read`, which may only be called where
/// the pointer reads too, and that does not tell the compiler the pointee reads: through a
/// pointer it is the provided `write_all` and `read`, which promise what the pair does
/// (only the pair's single wake-up is lost).
macro_rules! forward_through {
    ($($ptr:ty),+) => {$(
        impl<T: AsyncReadOwned + ?Sized> AsyncReadOwned for $ptr {
            fn read<B: IoBufMut>(
                &mut self,
                buf: B,
            ) -> impl Future<Output = BufResult<usize, B>> + Send {
                (**self).read(buf)
            }
            fn read_exact<B: IoBufMut>(
                &mut self,
                buf: B,
            ) -> impl Future<Output = BufResult<(), B>> + Send {
                (**self).read_exact(buf)
            }
            fn read_to_end(
                &mut self,
                buf: Vec<u8>,
            ) -> impl Future<Output = BufResult<usize, Vec<u8>>> + Send {
                (**self).read_to_end(buf)
            }
            fn read_buf<A: AppendBuf + ?Sized>(
                &mut self,
                buf: &mut A,
            ) -> impl Future<Output = io::Result<usize>> + Send {
                (**self).read_buf(buf)
            }
            fn read_exact_from_memory(&mut self, dst: &mut [u8]) -> bool {
                (**self).read_exact_from_memory(dst)
            }
            fn splice_source(&self) -> Option<SpliceEnd<'_>> {
                (**self).splice_source()
            }
        }

        impl<T: AsyncWriteOwned + ?Sized> AsyncWriteOwned for $ptr {
            fn write<B: IoBuf>(
                &mut self,
                buf: B,
            ) -> impl Future<Output = BufResult<usize, B>> + Send {
                (**self).write(buf)
            }
            fn writev<B: IoVecBuf>(
                &mut self,
                bufs: B,
            ) -> impl Future<Output = BufResult<usize, B>> + Send {
                (**self).writev(bufs)
            }
            fn write_all<B: IoBuf>(
                &mut self,
                buf: B,
            ) -> impl Future<Output = BufResult<(), B>> + Send {
                (**self).write_all(buf)
            }
            fn write_all_vectored<B: IoVecBuf>(
                &mut self,
                bufs: B,
            ) -> impl Future<Output = BufResult<(), B>> + Send {
                (**self).write_all_vectored(bufs)
            }
            fn flush(&mut self) -> impl Future<Output = io::Result<()>> + Send {
                (**self).flush()
            }
            fn shutdown(&mut self) -> impl Future<Output = io::Result<()>> + Send {
                (**self).shutdown()
            }
            fn write_all_to_memory(&mut self, src: &[u8]) -> bool {
                (**self).write_all_to_memory(src)
            }
            fn splice_sink(&self) -> Option<SpliceEnd<'_>> {
                (**self).splice_sink()
            }
        }
    )+};
}

forward_through!(&mut T, Box<T>);
