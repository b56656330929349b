//! The last completion of a multishot receive (the one without `IORING_CQE_F_MORE`) may carry
//! data in a provided buffer: the kernel ends the request that way when it cannot post a
//! completion that keeps it armed, as when the completion queue is full. Nobody may have
//! taken that completion when the runtime shuts down and retires its buffer group: the
//! buffer, and the data in it, must still reach the stream's consumer, and the buffer must be
//! released afterwards.

mod common;
mod stream_support;

use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::task::{Context, Poll, Wake, Waker};

use common::{under_every_config, yield_until};
use ringsteal_rt::op::{self, SharedFd};
use stream_support::tcp_pair;

struct NoWake;
impl Wake for NoWake {
    fn wake(self: std::sync::Arc<Self>) {}
}

#[test]
fn data_in_the_last_completion_of_a_receive_survives_the_shutdown() {
    under_every_config("last completion with data", 1, |config, b| {
        // A small ring (a completion queue of 16): a few dozen NOPs fill it.
        let rt = b.ring_entries(8).recv_buffers(4, 4096).build().unwrap();
        let handle = rt.handle();
        let (mut stream, client) = rt.block_on(async {
            let (server, mut client) = tcp_pair();
            let mut stream = op::recv_multishot(&SharedFd::new(server.into()));
            client.write_all(b"first").unwrap();
            assert_eq!(&stream.next().await.unwrap().unwrap()[..], b"first");
            // NOPs submitted and not reaped fill the completion queue (the rest overflow)...
            let mut nops = Vec::new();
            std::future::poll_fn(|cx| {
                for _ in 0..64 {
                    let mut nop = op::nop();
                    let _ = Pin::new(&mut nop).poll(cx);
                    nops.push(nop);
                }
                Poll::Ready(())
            })
            .await;
            // ...so the receive of this cannot post a completion that keeps it armed: it
            // ends, with the data in its last completion.
            client.write_all(b"second").unwrap();
            drop(nops);
            // Until the receive has ended and every completion is reaped (bounded by the
            // hang guard), without the stream taking anything.
            yield_until(|| handle.stats().total().ops_in_flight == 0).await;
            (stream, client)
        });
        assert_eq!(stream.requests_submitted(), 1, "{config:?}: not re-armed");
        // The shutdown retires the shard's buffer group.
        drop(rt);
        let waker = Waker::from(std::sync::Arc::new(NoWake));
        let got = match stream.poll_next(&mut Context::from_waker(&waker)) {
            Poll::Ready(Some(got)) => got,
            other => panic!("{config:?}: the last completion is not there: {other:?}"),
        };
        let buf = got.unwrap_or_else(|e| panic!("{config:?}: its data was lost: {e}"));
        assert_eq!(&buf[..], b"second", "{config:?}");
        assert!(buf.is_provided());
        drop(buf);
        drop(client);
    });
}
