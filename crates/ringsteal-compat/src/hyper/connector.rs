//! [`HttpConnector`]: hyper-util's legacy `Client` connecting over ringsteal TCP, in place of
//! hyper-util's `HttpConnector` (which needs tokio's reactor); and hyper-util's `Connection`
//! for [`Io`], so a connector of your own can yield it.
//!
//! May not: resolve names on a shard (`TcpStream::connect` resolves hostnames on the
//! blocking pool) or retry (the `Client` decides).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection};
use ringsteal_net::TcpStream;

use super::Io;

/// Connects hyper-util's legacy `Client` over ringsteal TCP: a `tower_service::Service<Uri>`
/// yielding an [`Io`]`<TcpStream>`, as hyper-util's `HttpConnector` yields a `TokioIo`.
///
/// The host is resolved on the blocking pool (an IP address never blocks), the port is the
/// URI's or the scheme's (80, or 443 for `https`), and, as hyper-util's, an `https` URI is
/// refused unless [`enforce_http(false)`](Self::enforce_http) (a TLS connector wrapping this
/// one sets that). `TCP_NODELAY` is on by default here (hyper-util's is off; request/response
/// traffic wants it on).
///
/// ```
/// use http_body_util::{BodyExt, Empty};
/// use hyper::body::Bytes;
/// use hyper_util::client::legacy::Client;
/// use ringsteal_compat::hyper::{Executor, HttpConnector, Timer};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
/// rt.block_on(async {
///     // A server that answers one request, written by hand.
///     let listener = ringsteal_net::TcpListener::bind("127.0.0.1:0").await?;
///     let url = format!("http://{}/", listener.local_addr()?);
///     let server = ringsteal_rt::spawn(async move {
///         let (stream, _) = listener.accept().await?;
///         let (res, _) = stream.read(Vec::with_capacity(1024)).await;
///         res?;
///         let reply = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi";
///         stream.write_all(reply.as_bytes().to_vec()).await.0
///     });
///
///     let mut connector = HttpConnector::new();
///     connector.set_connect_timeout(Some(std::time::Duration::from_secs(5)));
///     let client = Client::builder(Executor::new())
///         .timer(Timer::new())
///         .pool_timer(Timer::new())
///         .build::<_, Empty<Bytes>>(connector);
///     let res = client.get(url.parse().unwrap()).await.unwrap();
///     assert_eq!(res.status(), 200);
///     let body = res.into_body().collect().await.unwrap().to_bytes();
///     assert_eq!(&body[..], b"hi");
///     server.await.unwrap()
/// })
/// .unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct HttpConnector {
    nodelay: bool,
    connect_timeout: Option<Duration>,
    enforce_http: bool,
}

impl Default for HttpConnector {
    fn default() -> Self {
        Self::new()
    }
}

impl HttpConnector {
    /// `TCP_NODELAY` on, no connect timeout, `http` URIs only.
    pub fn new() -> Self {
        Self {
            nodelay: true,
            connect_timeout: None,
            enforce_http: true,
        }
    }

    /// Sets `TCP_NODELAY` on each connection (on by default).
    pub fn set_nodelay(&mut self, nodelay: bool) {
        self.nodelay = nodelay;
    }

    /// Fails a connect (the name resolution included) that takes longer than `timeout` with
    /// `TimedOut`; `None` (the default) waits as long as the kernel does.
    pub fn set_connect_timeout(&mut self, timeout: Option<Duration>) {
        self.connect_timeout = timeout;
    }

    /// Whether URIs other than `http` are refused (the default, as hyper-util's). Turn it off
    /// when a TLS connector wraps this one.
    pub fn enforce_http(&mut self, enforce: bool) {
        self.enforce_http = enforce;
    }

    async fn connect(self, uri: Uri) -> io::Result<Io<TcpStream>> {
        let (host, port) = destination(&uri, self.enforce_http)?;
        let connecting = TcpStream::connect((host.as_str(), port));
        let stream = match self.connect_timeout {
            None => connecting.await,
            Some(limit) => ringsteal_rt::time::timeout(limit, connecting)
                .await
                .unwrap_or_else(|_| {
                    Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("connecting to {host}:{port} took longer than {limit:?}"),
                    ))
                }),
        }
        .map_err(|e| io::Error::new(e.kind(), format!("tcp connect to {host}:{port}: {e}")))?;
        if self.nodelay {
            stream.set_nodelay(true)?;
        }
        Ok(Io::new(stream))
    }
}

/// The host (without an IPv6 literal's brackets) and port to connect to for `uri`.
fn destination(uri: &Uri, enforce_http: bool) -> io::Result<(String, u16)> {
    let invalid =
        |what: &str| io::Error::new(io::ErrorKind::InvalidInput, format!("{what}: {uri}"));
    let scheme = uri.scheme_str();
    if enforce_http && scheme != Some("http") {
        return Err(invalid("the URI's scheme is not http"));
    }
    let host = uri.host().ok_or_else(|| invalid("the URI has no host"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = uri
        .port_u16()
        .unwrap_or(if scheme == Some("https") { 443 } else { 80 });
    Ok((host.to_owned(), port))
}

impl tower_service::Service<Uri> for HttpConnector {
    type Response = Io<TcpStream>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Io<TcpStream>>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        Box::pin(self.clone().connect(uri))
    }
}

/// A plain connection: what hyper-util's pool needs to know of one (nothing is negotiated).
impl<S> Connection for Io<S> {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_destination_comes_from_the_uri_and_its_scheme() {
        let at = |s: &str, enforce| destination(&s.parse().unwrap(), enforce);
        assert_eq!(
            at("http://example.com/x", true).unwrap(),
            ("example.com".into(), 80)
        );
        assert_eq!(
            at("http://127.0.0.1:8080", true).unwrap(),
            ("127.0.0.1".into(), 8080)
        );
        assert_eq!(at("http://[::1]:9/", true).unwrap(), ("::1".into(), 9));
        assert_eq!(
            at("https://example.com", false).unwrap(),
            ("example.com".into(), 443)
        );
        let refused = at("https://example.com", true).unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(
            at("/just/a/path", false).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    }
}
