//! rustls over the `tokio::io` adapter: a TLS echo server and client on loopback, with a
//! certificate made for the test by rcgen, under every wake mechanism and ring mode. The
//! TLS layer reads and writes through `PollIo` exactly as it would through a tokio
//! `TcpStream`; no tokio runtime exists.

#![cfg(feature = "tokio-io")]

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
#[path = "../../ringsteal-net/tests/support/mod.rs"]
mod support;

use std::sync::Arc;

use common::with_every_runtime;
use ringsteal_compat::PollIo;
use ringsteal_rt::time::timeout;
use ringsteal_rt::Placement;
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls::pki_types::{
    CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName,
};
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore, ServerConfig};
use tokio_rustls::{TlsAcceptor, TlsConnector};

/// A server and a client configuration that trust a fresh self-signed certificate for
/// `localhost`.
fn tls_configs() -> (Arc<ServerConfig>, Arc<ClientConfig>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let cert: CertificateDer<'static> = certified.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certified.key_pair.serialize_der()));
    let server = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .unwrap();
    let mut roots = RootCertStore::empty();
    roots.add(cert).unwrap();
    let client = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    (Arc::new(server), Arc::new(client))
}

#[test]
fn a_rustls_echo_round_trips_a_self_checking_stream_across_shards() {
    with_every_runtime("tls echo", 2, |_, rt| {
        let (server_cfg, client_cfg) = tls_configs();
        rt.block_on(async move {
            let (client, server) = tcp_pair().await;
            let echo = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let mut tls = TlsAcceptor::from(server_cfg)
                    .accept(PollIo::new(server))
                    .await
                    .expect("server handshake");
                let mut buf = vec![0u8; 16 * 1024];
                loop {
                    let n = tls.read(&mut buf).await.expect("server read");
                    if n == 0 {
                        break;
                    }
                    tls.write_all(&buf[..n]).await.expect("server write");
                }
                tls.shutdown().await.expect("close_notify and FIN");
            });
            let mut tls = TlsConnector::from(client_cfg)
                .connect(
                    ServerName::try_from("localhost").unwrap(),
                    PollIo::new(client),
                )
                .await
                .expect("client handshake");
            let (_, conn) = tls.get_ref();
            assert!(conn.negotiated_cipher_suite().is_some());
            const LEN: usize = 300_000;
            let data = stream_bytes(8, 0, LEN);
            let mut back = Vec::with_capacity(LEN);
            for chunk in data.chunks(30_000) {
                tls.write_all(chunk).await.unwrap();
                let mut part = vec![0u8; chunk.len()];
                timeout(OP_GUARD, tls.read_exact(&mut part))
                    .await
                    .expect("echo stalled")
                    .unwrap();
                back.extend_from_slice(&part);
            }
            check_stream(8, 0, &back);
            tls.shutdown().await.unwrap();
            let mut rest = Vec::new();
            tls.read_to_end(&mut rest).await.unwrap();
            assert!(
                rest.is_empty(),
                "the server closed cleanly with close_notify"
            );
            echo.await.unwrap();
        })
    });
}

#[test]
fn a_client_that_does_not_trust_the_certificate_fails_its_handshake() {
    with_every_runtime("tls untrusted", 1, |_, rt| {
        let (server_cfg, _) = tls_configs();
        let (_, other_client) = tls_configs(); // trusts a different certificate
        rt.block_on(async move {
            let (client, server) = tcp_pair().await;
            let srv = ringsteal_rt::spawn(async move {
                TlsAcceptor::from(server_cfg)
                    .accept(PollIo::new(server))
                    .await
                    .is_err()
            });
            let res = TlsConnector::from(other_client)
                .connect(
                    ServerName::try_from("localhost").unwrap(),
                    PollIo::new(client),
                )
                .await;
            let err = res.expect_err("an untrusted certificate was accepted");
            assert_eq!(err.kind(), std::io::ErrorKind::InvalidData, "{err}");
            assert!(srv.await.unwrap(), "the server saw the handshake fail");
        })
    });
}

/// HTTPS: hyper serves and sends over tokio-rustls through `hyper::TokioIo`, the port of
/// hyper-util's `TokioIo::new(tls_stream)`; a 1 MiB body is echoed back whole, twice on one
/// keep-alive connection, across shards.
#[cfg(feature = "hyper")]
#[test]
fn hyper_serves_https_over_rustls_through_tokio_io() {
    use http_body_util::{BodyExt, Full};
    use hyper::body::{Bytes, Incoming};
    use ringsteal_compat::hyper::{Timer, TokioIo};

    with_every_runtime("https through TokioIo", 2, |_, rt| {
        let (server_cfg, client_cfg) = tls_configs();
        rt.block_on(async move {
            let (client, server) = tcp_pair().await;
            let served = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let tls = TlsAcceptor::from(server_cfg)
                    .accept(PollIo::new(server))
                    .await
                    .expect("server handshake");
                let echo = hyper::service::service_fn(|req: hyper::Request<Incoming>| async {
                    let body = req.into_body().collect().await?.to_bytes();
                    Ok::<_, hyper::Error>(hyper::Response::new(Full::new(body)))
                });
                hyper::server::conn::http1::Builder::new()
                    .timer(Timer::new())
                    .serve_connection(TokioIo::new(tls), echo)
                    .await
            });
            let tls = TlsConnector::from(client_cfg)
                .connect(
                    ServerName::try_from("localhost").unwrap(),
                    PollIo::new(client),
                )
                .await
                .expect("client handshake");
            let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
                .await
                .unwrap();
            let conn = ringsteal_rt::spawn(conn);
            for round in 0..2 {
                let data = Bytes::from(stream_bytes(3, round, 1 << 20));
                let req = hyper::Request::post("/echo")
                    .header("host", "localhost")
                    .body(Full::new(data.clone()))
                    .unwrap();
                let res = timeout(OP_GUARD, sender.send_request(req))
                    .await
                    .expect("the request stalled")
                    .unwrap();
                assert_eq!(res.status(), 200);
                let body = res.into_body().collect().await.unwrap().to_bytes();
                assert!(body == data, "round {round}: the echoed body differs");
            }
            drop(sender);
            conn.await.unwrap().unwrap();
            served.await.unwrap().unwrap();
        })
    });
}
