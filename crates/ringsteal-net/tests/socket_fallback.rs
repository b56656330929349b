//! Kernels before 5.19 have no `IORING_OP_SOCKET`: `connect` then creates its socket with
//! `socket(2)`. The builder's `without_feature(Feature::Socket)` forces that path here.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use common::{under_every_config, Config};
use ringsteal_net::{TcpStream, UnixListener, UnixStream};
use ringsteal_rt::{Feature, Runtime};
use ringsteal_uring::abi::IORING_OP_SOCKET;
use support::*;

/// Operations one `TcpStream::connect` completes (the accept is done after counting).
fn ops_for_a_connect(rt: &Runtime) -> u64 {
    rt.block_on(async {
        let (listener, addr) = listener().await;
        let before = ops_completed();
        let client = TcpStream::connect(addr).await.unwrap();
        let ops = ops_completed() - before;
        let (server, _) = listener.accept().await.unwrap();
        client.write_all(b"works".to_vec()).await.0.unwrap();
        let (res, buf) = server.read_exact(vec![0; 5]).await;
        res.unwrap();
        assert_eq!(buf, b"works");
        ops
    })
}

#[test]
fn connect_falls_back_to_a_plain_socket_call_without_the_socket_opcode() {
    let has_socket_op =
        ringsteal_uring::Features::get().is_ok_and(|f| f.opcode_supported(IORING_OP_SOCKET));
    if has_socket_op {
        // SOCKET + CONNECT through the ring.
        assert_eq!(ops_for_a_connect(&Config::MsgRing.runtime(1)), 2);
    }
    let without_socket_op = |builder: ringsteal_rt::Builder| {
        builder
            .without_feature(Feature::Socket)
            .build()
            .expect("a runtime without IORING_OP_SOCKET")
    };
    under_every_config("connect without IORING_OP_SOCKET", 1, move |_, builder| {
        // socket(2), then CONNECT through the ring.
        assert_eq!(ops_for_a_connect(&without_socket_op(builder)), 1);
    });
    under_every_config(
        "unix connect without IORING_OP_SOCKET",
        1,
        move |_, builder| {
            let rt = without_socket_op(builder);
            rt.block_on(async {
                let name = format!("\0ringsteal-test-fallback-{}", std::process::id());
                let listener = UnixListener::bind(&name).unwrap();
                let client = UnixStream::connect(&name).await.unwrap();
                let (server, _) = listener.accept().await.unwrap();
                client.write_all(b"unix".to_vec()).await.0.unwrap();
                let (res, buf) = server.read_exact(vec![0; 4]).await;
                res.unwrap();
                assert_eq!(buf, b"unix");
            })
        },
    );
}
