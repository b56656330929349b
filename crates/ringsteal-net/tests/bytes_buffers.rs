//! `bytes::Bytes` and `BytesMut` as owned buffers (feature `bytes`) over a real socket,
//! under every wake mechanism and ring mode: written whole, read into spare capacity, filled
//! exactly, and gathered.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use bytes::{Bytes, BytesMut};
use common::with_every_runtime;
use ringsteal_rt::io::AsyncReadOwned;
use support::*;

#[test]
fn bytes_and_bytes_mut_carry_data_over_tcp() {
    with_every_runtime("bytes buffers", 1, |_, rt| {
        rt.block_on(async {
            let (mut client, server) = tcp_pair().await;

            let (res, sent) = client.write_all(Bytes::from_static(b"static bytes")).await;
            res.unwrap();
            assert_eq!(&sent[..], b"static bytes", "the buffer comes back whole");
            // A read fills the spare capacity and grows the length by what it read.
            let (res, got) = server.read_exact(BytesMut::with_capacity(12)).await;
            res.unwrap();
            assert_eq!(&got[..], b"static bytes");

            // Gathered from two handles on the same storage.
            let whole = Bytes::from(b"split in two".to_vec());
            let (res, _) = client.writev((whole.slice(..6), whole.slice(6..))).await;
            assert_eq!(res.unwrap(), 12);
            let mut into = BytesMut::with_capacity(64);
            into.extend_from_slice(b"kept:");
            let mut total = 0;
            while total < 12 {
                // Reads go to the start of the buffer: give each one fresh capacity.
                let (res, buf) = server.read(BytesMut::with_capacity(12 - total)).await;
                let n = res.unwrap();
                assert!(n > 0, "the stream ended early");
                assert_eq!(buf.len(), n);
                into.extend_from_slice(&buf);
                total += n;
            }
            assert_eq!(&into[..], b"kept:split in two");

            // `read_buf` appends to a BytesMut the caller keeps, as tokio's does.
            client
                .write_all(Bytes::from_static(b" and more"))
                .await
                .0
                .unwrap();
            let mut total = 0;
            while total < 9 {
                let n = server.read_buf(&mut into).await.unwrap();
                assert!(n > 0, "the stream ended early");
                total += n;
            }
            assert_eq!(&into[..], b"kept:split in two and more");

            // A frozen BytesMut is written as what it holds, not its capacity.
            let mut answer = BytesMut::with_capacity(1024);
            answer.extend_from_slice(b"reply");
            server.write_all(answer.freeze()).await.0.unwrap();
            drop(server);
            let (res, rest) = client.read_to_end(Vec::new()).await;
            assert_eq!((res.unwrap(), &rest[..]), (5, &b"reply"[..]));
        })
    });
}
