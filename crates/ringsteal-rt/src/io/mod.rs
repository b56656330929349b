//! Owned-buffer I/O: the traits every ringsteal byte stream implements
//! ([`AsyncReadOwned`], [`AsyncWriteOwned`]), helpers over them ([`copy`], [`BufReader`],
//! [`BufWriter`], [`LengthDelimited`]), and the [`Lane`] machinery that keeps a stream's
//! bytes in order when a read or write future is dropped mid-flight ([`InLane`]), and
//! [`PollStream`], poll-based reads and writes with borrowed buffers driven by io_uring
//! readiness (what the `futures-io`, `tokio::io` and `hyper` adapters stand on), and
//! [`AsyncFd`], tokio's readiness for a descriptor the program reads and writes itself.
//!
//! Implemented by `ringsteal::net`'s TCP and Unix streams and their halves, `ringsteal::fs`'s
//! `File` (reading and writing at its position), `&[u8]` (a source) and `Vec<u8>` (a sink);
//! other crates can implement them too.

mod async_fd;
mod bidirectional;
mod buf_reader;
mod buf_writer;
mod copy;
mod framed;
mod holding;
mod in_lane;
mod interest;
mod lane;
mod memory;
#[macro_use]
mod numbers;
mod poll;
mod provided;
mod provided_read;
mod read_buf;
mod readiness_cache;
mod ready_again;
mod seek;
#[cfg(test)]
mod test_util;
mod traits;
mod write_then_read;

pub use async_fd::{AsyncFd, AsyncFdReadyGuard, AsyncFdReadyMutGuard, TryIoError};
pub use bidirectional::{copy_bidirectional, copy_bidirectional_with_sizes};
pub use buf_reader::{BufReader, Lines};
pub use buf_writer::BufWriter;
pub use copy::{copy, copy_buffered, copy_spliced};
pub use framed::LengthDelimited;
pub use holding::{read_exact_in_lane, write_all_in_lane, write_all_vectored_in_lane};
pub use in_lane::{InLane, LaneOutput};
pub use interest::{Interest, Ready};
pub use lane::{Acquire, AcquireOwned, Lane, LaneGuard, Leftover};
pub use poll::{
    try_peek_from, try_peek_in_lane, try_read_in_lane, try_read_in_lane_uninit,
    try_read_vectored_in_lane, try_recv_from, try_recv_from_uninit, try_send_to, try_write_in_lane,
    try_write_vectored_in_lane, PollParts, PollSource, PollStream, Readiness,
};
pub use provided_read::{ProvidedRead, ProvidedReadOutput};
pub use read_buf::{read_buf_by, AppendBuf};
pub use readiness_cache::{ReadinessCache, ReadyEvent};
pub use ready_again::ReadyAgain;
pub use seek::AsyncSeek;
pub use traits::{AsyncReadOwned, AsyncWriteOwned, SpliceEnd};
pub use write_then_read::{WriteThenRead, WriteThenReadOutput, WriteThenReadParts};
