//! The owned-buffer I/O traits for a child's pipes, so `io::BufReader`, `io::copy` and
//! `io::LengthDelimited` work over them as over a stream: `ChildStdout` and `ChildStderr`
//! read, `ChildStdin` writes, each through the pipe's lane as its own methods do, for the
//! pipe and for a reference to it.
//!
//! May not: offer `ChildStdin` as a splice sink. A splice into a pipe whose reader is gone
//! raises `SIGPIPE`, which the pipe's writes block first (`sigpipe.rs`); `copy` writes into
//! it through a buffer instead.

use std::borrow::Borrow;
use std::future::Future;
use std::io;

use ringsteal_rt::buf::{BufResult, IoBuf, IoBufMut, IoVecBuf};
use ringsteal_rt::io::{AsyncReadOwned, AsyncWriteOwned, SpliceEnd};

use crate::pipe::{
    read_exact_in_pipe, read_in_pipe, read_to_end, write_all_in_pipe, write_all_vectored_in_pipe,
    write_in_pipe, writev_in_pipe,
};
use crate::{ChildStderr, ChildStdin, ChildStdout};

/// `AsyncReadOwned` for a reading pipe `$pipe` and for `$t`, one of it or a reference to it.
macro_rules! reader {
    ($pipe:ty, $t:ty) => {
        impl AsyncReadOwned for $t {
            fn read<B: IoBufMut>(
                &mut self,
                buf: B,
            ) -> impl Future<Output = BufResult<usize, B>> + Send {
                let (fd, lane) = <$t as Borrow<$pipe>>::borrow(self).reading();
                read_in_pipe(fd, lane, buf)
            }
            /// Holds the read lane throughout: dropped, it gives back every byte it took.
            fn read_exact<B: IoBufMut>(
                &mut self,
                buf: B,
            ) -> impl Future<Output = BufResult<(), B>> + Send {
                let (fd, lane) = <$t as Borrow<$pipe>>::borrow(self).reading();
                read_exact_in_pipe(fd, lane, buf)
            }
            fn read_to_end(
                &mut self,
                buf: Vec<u8>,
            ) -> impl Future<Output = BufResult<usize, Vec<u8>>> + Send {
                let (fd, lane) = <$t as Borrow<$pipe>>::borrow(self).reading();
                read_to_end(fd, lane, buf)
            }
            fn splice_source(&self) -> Option<SpliceEnd<'_>> {
                let (fd, lane) = <$t as Borrow<$pipe>>::borrow(self).reading();
                Some(SpliceEnd::new(fd, lane))
            }
        }
    };
}

reader!(ChildStdout, ChildStdout);
reader!(ChildStdout, &ChildStdout);
reader!(ChildStderr, ChildStderr);
reader!(ChildStderr, &ChildStderr);

/// `AsyncWriteOwned` for `ChildStdin` and a reference to it.
macro_rules! writer {
    ($t:ty) => {
        /// Writes take turns in the pipe's write lane; a `write_all` or
        /// `write_all_vectored` holds it for the whole call. `shutdown` does nothing, as
        /// tokio's does for a child's stdin: the child sees end of file once the
        /// `ChildStdin` is dropped.
        impl AsyncWriteOwned for $t {
            fn write<B: IoBuf>(
                &mut self,
                buf: B,
            ) -> impl Future<Output = BufResult<usize, B>> + Send {
                let (fd, lane) = <$t as Borrow<ChildStdin>>::borrow(self).writing();
                write_in_pipe(fd, lane, buf)
            }
            /// Holds the write lane throughout: another task's write goes before or after
            /// all of it.
            fn write_all<B: IoBuf>(
                &mut self,
                buf: B,
            ) -> impl Future<Output = BufResult<(), B>> + Send {
                let (fd, lane) = <$t as Borrow<ChildStdin>>::borrow(self).writing();
                write_all_in_pipe(fd, lane, buf)
            }
            fn writev<B: IoVecBuf>(
                &mut self,
                bufs: B,
            ) -> impl Future<Output = BufResult<usize, B>> + Send {
                let (fd, lane) = <$t as Borrow<ChildStdin>>::borrow(self).writing();
                writev_in_pipe(fd, lane, bufs)
            }
            fn write_all_vectored<B: IoVecBuf>(
                &mut self,
                bufs: B,
            ) -> impl Future<Output = BufResult<(), B>> + Send {
                let (fd, lane) = <$t as Borrow<ChildStdin>>::borrow(self).writing();
                write_all_vectored_in_pipe(fd, lane, bufs)
            }
            fn shutdown(&mut self) -> impl Future<Output = io::Result<()>> + Send {
                std::future::ready(Ok(()))
            }
        }
    };
}

writer!(ChildStdin);
writer!(&ChildStdin);
