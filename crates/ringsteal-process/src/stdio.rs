//! [`stdin`], [`stdout`], [`stderr`]: the process's own standard streams, read and written
//! with owned buffers through the ring as a child's pipes are (`pipe.rs`), for
//! `tokio::io::{stdin, stdout, stderr}` (ADR-0038).
//!
//! Each stream is one process-wide object, made on first use: descriptor 0, 1 or 2 itself
//! (so a later `dup2` onto it, a redirection or a daemon's move to `/dev/null`, is followed,
//! as std and tokio follow it) and one lane, shared by every handle. So a `write_all` to
//! stdout is never interleaved with another task's, whichever handle each used, and bytes a
//! dropped read of stdin took go to the next read of any handle. Nothing is buffered: each
//! call is one transfer (or, for `write_all`, as many as it takes).
//!
//! Owns: the three process-wide streams. May not: close or change the mode of descriptors
//! 0, 1 and 2 (a standard stream left non-blocking is waited on with a poll, `pipe.rs`): the
//! `SharedFd` of each lives in a static and is never dropped.

use std::future::Future;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

use ringsteal_rt::buf::{BufResult, IoBuf, IoBufMut, IoVecBuf};
use ringsteal_rt::io::{AsyncReadOwned, AsyncWriteOwned, Lane};
use ringsteal_rt::op::SharedFd;

use crate::pipe::{
    read_exact_in_pipe, read_in_pipe, read_to_end, write_all_in_pipe, write_all_vectored_in_pipe,
    write_in_pipe, writev_in_pipe,
};

/// One standard stream: its descriptor and its lane.
#[derive(Debug)]
pub(crate) struct StdStream {
    fd: SharedFd,
    lane: Lane,
    /// The descriptor number.
    number: RawFd,
}

impl StdStream {
    fn open(number: RawFd) -> Self {
        // SAFETY: the standard descriptors are the process's for its whole life (std reopens
        // a closed one on `/dev/null` at startup). The `OwnedFd` never closes it: it lives in
        // a `SharedFd` kept in a static, which is never dropped, so the last holder never
        // lets go; the `SharedFd` is never handed out (no `try_unwrap` or `into_owned`).
        let fd = SharedFd::new(unsafe { OwnedFd::from_raw_fd(number) });
        Self {
            fd,
            // Standard input may be a terminal (input goes on after `^D`) or a FIFO (a next
            // writer comes): a dropped read's end is not kept.
            lane: Lane::bytes_only(),
            number,
        }
    }

    fn parts(&self) -> (&SharedFd, &Lane) {
        (&self.fd, &self.lane)
    }
}

fn stream(cell: &'static OnceLock<StdStream>, number: RawFd) -> &'static StdStream {
    cell.get_or_init(|| StdStream::open(number))
}

static STDIN: OnceLock<StdStream> = OnceLock::new();
static STDOUT: OnceLock<StdStream> = OnceLock::new();
static STDERR: OnceLock<StdStream> = OnceLock::new();

/// A handle to the process's standard input, as tokio's `tokio::io::stdin()` (owned buffers:
/// [`read`](Stdin::read), or line by line through `ringsteal::io::BufReader`).
///
/// Every handle reads the same stream, in turns; the bytes of a read whose future was dropped
/// after the kernel read them go to the next read. Works whatever standard input is: a
/// terminal, a pipe, a file, `/dev/null`.
///
/// ```no_run
/// use ringsteal_rt::io::BufReader;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let mut lines = BufReader::new(ringsteal_process::stdio::stdin()).lines();
///     while let Some(line) = lines.next_line().await? {
///         println!("read {line:?}");
///     }
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub fn stdin() -> Stdin {
    Stdin {
        stream: stream(&STDIN, 0),
    }
}

/// A handle to the process's standard output, as tokio's `tokio::io::stdout()` (owned
/// buffers: [`write_all`](Stdout::write_all), or through `ringsteal::io::BufWriter`).
///
/// Not buffered, as tokio's is not: each call is written when it is made. Every handle writes
/// the same stream in turns, so a `write_all` is never interleaved with another task's. Do not
/// mix it with `print!` on the same stream without flushing std's buffer first
/// (`std::io::stdout().flush()`): std holds a line until its end. A reader that went away (a
/// pipe into `head`) fails writes with `BrokenPipe`, never `SIGPIPE`.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (res, _) = ringsteal_process::stdio::stdout().write_all(b"hello\n".to_vec()).await;
///     res
/// })
/// .unwrap();
/// ```
pub fn stdout() -> Stdout {
    Stdout {
        stream: stream(&STDOUT, 1),
    }
}

/// A handle to the process's standard error, as tokio's `tokio::io::stderr()`: as
/// [`stdout`], on descriptor 2.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (res, _) = ringsteal_process::stdio::stderr().write_all(b"warning\n".to_vec()).await;
///     res
/// })
/// .unwrap();
/// ```
pub fn stderr() -> Stderr {
    Stderr {
        stream: stream(&STDERR, 2),
    }
}

/// The process's standard input: see [`stdin`]. Handles are `Copy`; every one reads the
/// same stream.
///
/// ```no_run
/// use ringsteal_process::stdio::{stdin, Stdin};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let input: Stdin = stdin();
///     let (res, all) = input.read_to_end(Vec::new()).await;
///     println!("{} bytes on standard input", res?);
///     # drop(all);
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Stdin {
    stream: &'static StdStream,
}

impl Stdin {
    /// Reads into `buf` (up to its capacity); yields the count (0 at end of input) and the
    /// buffer, its initialised length extended.
    pub async fn read<B: IoBufMut>(&self, buf: B) -> BufResult<usize, B> {
        let (fd, lane) = self.stream.parts();
        read_in_pipe(fd, lane, buf).await
    }

    /// Fills `buf` to its capacity, or fails with `UnexpectedEof` if input ends first.
    pub async fn read_exact<B: IoBufMut>(&self, buf: B) -> BufResult<(), B> {
        let (fd, lane) = self.stream.parts();
        read_exact_in_pipe(fd, lane, buf).await
    }

    /// Appends everything up to end of input to `buf`; yields the count appended.
    pub async fn read_to_end(&self, buf: Vec<u8>) -> BufResult<usize, Vec<u8>> {
        let (fd, lane) = self.stream.parts();
        read_to_end(fd, lane, buf).await
    }
}

/// Through the read lane, as [`Stdin`]'s own methods (so `ringsteal::io::BufReader` and
/// `io::copy` work over standard input).
impl AsyncReadOwned for Stdin {
    fn read<B: IoBufMut>(&mut self, buf: B) -> impl Future<Output = BufResult<usize, B>> + Send {
        Stdin::read(self, buf)
    }
    fn read_exact<B: IoBufMut>(&mut self, buf: B) -> impl Future<Output = BufResult<(), B>> + Send {
        Stdin::read_exact(self, buf)
    }
    fn read_to_end(
        &mut self,
        buf: Vec<u8>,
    ) -> impl Future<Output = BufResult<usize, Vec<u8>>> + Send {
        Stdin::read_to_end(self, buf)
    }
}

macro_rules! writer {
    ($name:ident, $what:literal) => {
        #[doc = concat!("The process's standard ", $what, ": see [`", $what, "`]. Handles are `Copy`; every one writes the same stream, in turns.")]
        ///
        #[doc = concat!(
            "```\nuse ringsteal_process::stdio::", $what, ";\n\n",
            "let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();\n",
            "rt.block_on(async {\n",
            "    let out = ", $what, "();\n",
            "    let (res, _) = out.writev(vec![b\"one \".to_vec(), b\"line\\n\".to_vec()]).await;\n",
            "    res.map(drop)\n",
            "})\n.unwrap();\n```"
        )]
        #[derive(Debug, Clone, Copy)]
        pub struct $name {
            stream: &'static StdStream,
        }

        impl $name {
            /// Writes some of `buf`; yields the count written and the buffer.
            pub async fn write<B: IoBuf>(&self, buf: B) -> BufResult<usize, B> {
                let (fd, lane) = self.stream.parts();
                write_in_pipe(fd, lane, buf).await
            }

            /// Writes every initialised byte of `buf`, none of another task's in between.
            pub async fn write_all<B: IoBuf>(&self, buf: B) -> BufResult<(), B> {
                let (fd, lane) = self.stream.parts();
                write_all_in_pipe(fd, lane, buf).await
            }

            /// One vectored write; yields the count written.
            pub async fn writev<B: IoVecBuf>(&self, bufs: B) -> BufResult<usize, B> {
                let (fd, lane) = self.stream.parts();
                writev_in_pipe(fd, lane, bufs).await
            }

            /// Writes every initialised byte of `bufs`, in order, none of another task's in
            /// between.
            pub async fn write_all_vectored<B: IoVecBuf>(&self, bufs: B) -> BufResult<(), B> {
                let (fd, lane) = self.stream.parts();
                write_all_vectored_in_pipe(fd, lane, bufs).await
            }
        }

        /// Through the write lane, as the stream's own methods; `flush` and `shutdown` have
        /// nothing to do (nothing is buffered, and the standard stream stays open).
        impl AsyncWriteOwned for $name {
            fn write<B: IoBuf>(
                &mut self,
                buf: B,
            ) -> impl Future<Output = BufResult<usize, B>> + Send {
                $name::write(self, buf)
            }
            fn write_all<B: IoBuf>(
                &mut self,
                buf: B,
            ) -> impl Future<Output = BufResult<(), B>> + Send {
                $name::write_all(self, buf)
            }
            fn writev<B: IoVecBuf>(
                &mut self,
                bufs: B,
            ) -> impl Future<Output = BufResult<usize, B>> + Send {
                $name::writev(self, bufs)
            }
            fn write_all_vectored<B: IoVecBuf>(
                &mut self,
                bufs: B,
            ) -> impl Future<Output = BufResult<(), B>> + Send {
                $name::write_all_vectored(self, bufs)
            }
            fn shutdown(&mut self) -> impl Future<Output = io::Result<()>> + Send {
                std::future::ready(Ok(()))
            }
        }
    };
}

writer!(Stdout, "stdout");
writer!(Stderr, "stderr");

macro_rules! fd_traits {
    ($($name:ident),*) => {$(
        /// The standard descriptor number (0, 1 or 2), as std's and tokio's give it, which
        /// the stream's transfers use.
        impl AsRawFd for $name {
            fn as_raw_fd(&self) -> RawFd {
                self.stream.number
            }
        }

        impl AsFd for $name {
            fn as_fd(&self) -> BorrowedFd<'_> {
                // SAFETY: as std's `Stdout::as_fd`: the standard descriptors are the
                // process's for its whole life.
                unsafe { BorrowedFd::borrow_raw(self.stream.number) }
            }
        }
    )*};
}

fd_traits!(Stdin, Stdout, Stderr);
