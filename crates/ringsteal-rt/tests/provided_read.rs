//! `io::ProvidedRead`, the receive into a provided buffer that a stream's `read_buf` waits
//! with: it yields what arrived (and the lane's guard), and polled again after it completed
//! it panics before it submits anything (a second receive, without the lane, would take
//! bytes that then went back to the ring with the buffer).

mod common;

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::Poll;

use ringsteal_rt::io::{Lane, ProvidedRead, ProvidedReadOutput};
use ringsteal_rt::op::{self, SharedFd};

#[test]
fn a_provided_read_polled_after_it_completed_panics_before_receiving_again() {
    common::quiet_intentional_panics();
    let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    let handle = rt.handle();
    rt.block_on(async move {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
        let lane = Lane::new();
        op::send(&b, b"first".to_vec(), 0).await.0.unwrap();
        let mut read = ProvidedRead::new(&a, lane.acquire().await);
        match (&mut read).await {
            ProvidedReadOutput::Data { buf, guard, .. } => {
                assert_eq!(&buf[..], b"first");
                drop(guard);
            }
            other => panic!("{other:?}"),
        }
        op::send(&b, b"second".to_vec(), 0).await.0.unwrap();
        let in_flight = handle.stats().total().ops_in_flight;
        let again = std::future::poll_fn(|cx| {
            Poll::Ready(catch_unwind(AssertUnwindSafe(|| {
                let _ = Pin::new(&mut read).poll(cx);
            })))
        })
        .await;
        assert!(again.is_err(), "polled after it completed");
        assert_eq!(
            handle.stats().total().ops_in_flight,
            in_flight,
            "nothing submitted"
        );
        drop(read);
        // The second message is still the socket's.
        let (n, got) = op::recv(&a, Vec::with_capacity(16), 0).await;
        assert_eq!(&got[..n.unwrap()], b"second");
    });
}
