//! [`HttpConnector`]: hyper-util's legacy `Client` connecting over ringsteal TCP, in place of
//! hyper-util's `HttpConnector` (which needs tokio's reactor); and hyper-util's `Connection`
//! for [`Io`] and `TokioIo`, so a connector of your own (TLS around this one) can yield
//! either.
//!
//! May not: resolve names on a shard (`TcpStream::connect` resolves hostnames on the
//! blocking pool) or retry (the `Client` decides).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection};
use ringsteal_net::{lookup_host, TcpStream};
use ringsteal_rt::time::Instant;

use super::connect_addrs::{self, within};
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
    happy_eyeballs: Option<Duration>,
    enforce_http: bool,
}

impl Default for HttpConnector {
    fn default() -> Self {
        Self::new()
    }
}

impl HttpConnector {
    /// `TCP_NODELAY` on, no connect timeout, a 300 ms happy-eyeballs delay (hyper-util's),
    /// `http` URIs only.
    pub fn new() -> Self {
        Self {
            nodelay: true,
            connect_timeout: None,
            happy_eyeballs: Some(Duration::from_millis(300)),
            enforce_http: true,
        }
    }

    /// Sets `TCP_NODELAY` on each connection (on by default).
    pub fn set_nodelay(&mut self, nodelay: bool) {
        self.nodelay = nodelay;
    }

    /// Fails a connect (the name resolution included) that takes longer than `timeout` with
    /// `TimedOut`; `None` (the default) waits as long as the kernel does. A name with
    /// several addresses of a family gives each attempt an equal share of what is left, as
    /// hyper-util's does. A timeout too long to have an end on the clock (`Duration::MAX`)
    /// is none.
    pub fn set_connect_timeout(&mut self, timeout: Option<Duration>) {
        self.connect_timeout = timeout;
    }

    /// How long the addresses of the name's first address family get before those of the
    /// other family are tried beside them, as hyper-util's `set_happy_eyeballs_timeout`
    /// (RFC 8305): 300 ms by default. So a host whose IPv6 route drops packets still
    /// connects over IPv4, after the delay instead of after the kernel's SYN retries. The
    /// first connection wins and the other attempt is dropped. `None` tries every address
    /// in turn, whatever its family.
    pub fn set_happy_eyeballs_timeout(&mut self, delay: Option<Duration>) {
        self.happy_eyeballs = delay;
    }

    /// Whether URIs other than `http` are refused (the default, as hyper-util's). Turn it off
    /// when a TLS connector wraps this one.
    pub fn enforce_http(&mut self, enforce: bool) {
        self.enforce_http = enforce;
    }

    async fn connect(self, uri: Uri) -> io::Result<Io<TcpStream>> {
        let (host, port) = destination(&uri, self.enforce_http)?;
        let shown = match host.contains(':') {
            true => format!("[{host}]:{port}"),
            false => format!("{host}:{port}"),
        };
        let stream = self
            .connect_to(&host, port)
            .await
            .map_err(|cause| ConnectError::wrap(&shown, cause))?;
        if self.nodelay {
            stream.set_nodelay(true)?;
        }
        Ok(Io::new(stream))
    }

    /// Resolves `host` (within the timeout), then connects to one of its addresses
    /// (`connect_addrs.rs`: in turn, the other address family raced after the
    /// happy-eyeballs delay).
    async fn connect_to(&self, host: &str, port: u16) -> io::Result<TcpStream> {
        // A timeout too long for the clock to hold its end (`Duration::MAX`) never ends:
        // no deadline, rather than a panic on every connect.
        let deadline = self
            .connect_timeout
            .and_then(|t| Some((Instant::now().checked_add(t)?, t)));
        let addrs: Vec<SocketAddr> = within(deadline, lookup_host((host, port))).await?.collect();
        connect_addrs::connect(&addrs, self.happy_eyeballs, deadline).await
    }
}

/// A failed connect: the address it was for, and the error of the last attempt (its
/// `source`, so `raw_os_error` stays reachable by downcasting).
#[derive(Debug)]
struct ConnectError {
    addr: String,
    cause: io::Error,
}

impl ConnectError {
    fn wrap(addr: &str, cause: io::Error) -> io::Error {
        let kind = cause.kind();
        io::Error::new(
            kind,
            ConnectError {
                addr: addr.to_owned(),
                cause,
            },
        )
    }
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "tcp connect to {}: {}", self.addr, self.cause)
    }
}

impl std::error::Error for ConnectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.cause)
    }
}

/// The host (without an IPv6 literal's brackets) and port to connect to for `uri`.
fn destination(uri: &Uri, enforce_http: bool) -> io::Result<(String, u16)> {
    let invalid =
        |what: &str| io::Error::new(io::ErrorKind::InvalidInput, format!("{what}: {uri}"));
    let scheme = uri
        .scheme_str()
        .ok_or_else(|| invalid("the URI has no scheme"))?;
    if enforce_http && scheme != "http" {
        return Err(invalid("the URI's scheme is not http"));
    }
    let host = uri.host().ok_or_else(|| invalid("the URI has no host"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = uri
        .port_u16()
        .unwrap_or(if scheme == "https" { 443 } else { 80 });
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

/// A stream wrapped for hyper (a TLS stream over an [`Io`], say), so a TLS connector around
/// [`HttpConnector`] can yield it to hyper-util's `Client`. Reports a plain connection (a
/// connector that negotiates HTTP/2 by ALPN says so itself with its own type).
#[cfg(feature = "tokio-io")]
impl<T> Connection for super::TokioIo<T> {
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
        // No scheme is refused even when any scheme is allowed, as by hyper-util.
        let no_scheme = at("example.com:80", false).unwrap_err();
        assert!(no_scheme.to_string().contains("no scheme"), "{no_scheme}");
    }
}
