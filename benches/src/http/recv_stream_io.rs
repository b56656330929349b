//! [`RecvStreamIo`]: a TCP stream whose reads come from one multishot receive
//! (`TcpStream::recv_stream()`, the shard's provided buffers) instead of one receive request
//! per read, behind the owned-buffer traits, so `ringsteal_examples::http::serve` runs on it
//! unchanged. Writes go to the stream as they are.
//!
//! A read copies from the provided buffer at hand into the caller's buffer (as much as fits)
//! and gives the provided buffer back to the ring once it is used up: one copy per byte,
//! where a plain read has the kernel copy into the caller's buffer directly; what the
//! receive stream saves is the request per read.
//!
//! May not: hold on to a provided buffer after its last byte was read.

use std::future::Future;
use std::io;
use std::net::Shutdown;

use ringsteal::buf::{BufResult, IoBuf, IoBufMut, RecvBuf};
use ringsteal::io::{AsyncReadOwned, AsyncWriteOwned};
use ringsteal::net::{RecvStream, TcpStream};

/// A stream read through its receive stream (see the module docs).
pub struct RecvStreamIo {
    stream: TcpStream,
    received: RecvStream,
    /// The provided buffer being read from, and how much of it was read already.
    held: Option<(RecvBuf, usize)>,
}

impl RecvStreamIo {
    /// Starts reading `stream` through its receive stream.
    pub fn new(stream: TcpStream) -> Self {
        let received = stream.recv_stream();
        Self {
            stream,
            received,
            held: None,
        }
    }
}

impl AsyncReadOwned for RecvStreamIo {
    async fn read<B: IoBufMut>(&mut self, mut buf: B) -> BufResult<usize, B> {
        let (data, mut at) = match self.held.take() {
            Some(held) => held,
            None => match self.received.next().await {
                None => return (Ok(0), buf),
                Some(Err(e)) => return (Err(e), buf),
                Some(Ok(data)) => (data, 0),
            },
        };
        let n = (data.len() - at).min(buf.bytes_total());
        // SAFETY: `n` bytes fit in `buf` (at most `bytes_total`), whose pointer is valid
        // for that many writes; the source is `n` initialised bytes of the provided
        // buffer, which does not overlap memory the caller owns; after the copy the first
        // `n` bytes of `buf` are initialised.
        unsafe {
            std::ptr::copy_nonoverlapping(data[at..].as_ptr(), buf.stable_mut_ptr(), n);
            buf.set_init(n);
        }
        at += n;
        if at < data.len() {
            self.held = Some((data, at));
        } // else dropped: the provided buffer goes back to the shard's ring
        (Ok(n), buf)
    }
}

impl AsyncWriteOwned for RecvStreamIo {
    fn write<B: IoBuf>(&mut self, buf: B) -> impl Future<Output = BufResult<usize, B>> + Send {
        self.stream.write(buf)
    }

    fn write_all<B: IoBuf>(&mut self, buf: B) -> impl Future<Output = BufResult<(), B>> + Send {
        self.stream.write_all(buf)
    }

    fn shutdown(&mut self) -> impl Future<Output = io::Result<()>> + Send {
        self.stream.shutdown(Shutdown::Write)
    }
}
