//! TLS with rustls on ringsteal: an echo server and a client over loopback, through the
//! `tokio::io` adapter (`ringsteal::io::compat::PollIo`) and tokio-rustls. The certificate is
//! made at start by rcgen for `localhost`, and the client trusts only it.
//!
//! ```text
//! cargo run --release --example tls_echo                 # echoes a line of its own
//! cargo run --release --example tls_echo -- "any text"   # echoes this
//! ```

use std::error::Error;
use std::sync::Arc;

use ringsteal::io::compat::PollIo;
use ringsteal::net::{TcpListener, TcpStream};
use ringsteal::Placement;
use ringsteal_examples::cli;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore, ServerConfig};
use tokio_rustls::{TlsAcceptor, TlsConnector};

type BoxError = Box<dyn Error + Send + Sync>;

const USAGE: &str = "tls_echo [TEXT]    (TEXT defaults to \"hello over rustls on io_uring\")";

#[ringsteal::main(shards = 2)]
async fn main() {
    let args = cli::args(USAGE, 1);
    let line = args
        .first()
        .map_or("hello over rustls on io_uring", String::as_str);
    match echo(line).await {
        Ok(echoed) => println!("echoed over TLS: {echoed}"),
        Err(e) => cli::fail(USAGE, e),
    }
}

/// Starts the server, sends `line` through a TLS client, and yields what came back.
async fn echo(line: &str) -> Result<String, BoxError> {
    let (server_config, client_config) = configs()?;
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    // The server: one TLS echo per connection, on shard 1.
    let server = ringsteal::spawn_with(Placement::Pinned(1), async move {
        let (stream, _) = listener.accept().await?;
        let mut tls = TlsAcceptor::from(server_config)
            .accept(PollIo::new(stream))
            .await?;
        let mut buf = vec![0u8; 4096];
        loop {
            let n = tls.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            tls.write_all(&buf[..n]).await?;
        }
        tls.shutdown().await?; // close_notify, then the FIN
        Ok::<(), BoxError>(())
    });
    // The client, on this shard (0).
    let stream = TcpStream::connect(addr).await?;
    let mut tls = TlsConnector::from(client_config)
        .connect(ServerName::try_from("localhost")?, PollIo::new(stream))
        .await?;
    tls.write_all(line.as_bytes()).await?;
    tls.shutdown().await?;
    let mut echoed = String::new();
    tls.read_to_string(&mut echoed).await?;
    server.await??;
    Ok(echoed)
}

/// A self-signed certificate for `localhost`, a server configuration with it and a client
/// configuration that trusts only it (ring as the crypto provider).
fn configs() -> Result<(Arc<ServerConfig>, Arc<ClientConfig>), BoxError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string()])?;
    let cert = certified.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certified.key_pair.serialize_der()));
    let server = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)?;
    let mut roots = RootCertStore::empty();
    roots.add(cert)?;
    let client = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok((Arc::new(server), Arc::new(client)))
}
