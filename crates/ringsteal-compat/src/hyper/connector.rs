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
    /// `TimedOut`; `None` (the default) waits as long as the kernel does. A name with
    /// several addresses gives each attempt an equal share of what is left, as hyper-util's
    /// does (there is no happy-eyeballs race between address families).
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

    /// Resolves `host` (within the timeout), then tries each address in turn, each with an
    /// equal share of what is left of the timeout, as hyper-util's does: an address that
    /// drops its packets leaves time for the next.
    async fn connect_to(&self, host: &str, port: u16) -> io::Result<TcpStream> {
        let deadline = self.connect_timeout.map(|t| (Instant::now() + t, t));
        let addrs: Vec<SocketAddr> = within(deadline, lookup_host((host, port))).await?.collect();
        let mut last = None;
        for (i, addr) in addrs.iter().enumerate() {
            let share = deadline.map(|(end, limit)| {
                let left = end.saturating_duration_since(Instant::now());
                (Instant::now() + left / (addrs.len() - i) as u32, limit)
            });
            match within(share, TcpStream::connect(*addr)).await {
                Ok(stream) => return Ok(stream),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| {
            io::Error::new(io::ErrorKind::NotFound, "the name resolved to no address")
        }))
    }
}

/// Runs `connecting` until `deadline` (its instant and the whole timeout, for the message).
async fn within<T>(
    deadline: Option<(Instant, Duration)>,
    connecting: impl Future<Output = io::Result<T>>,
) -> io::Result<T> {
    match deadline {
        None => connecting.await,
        Some((end, limit)) => ringsteal_rt::time::timeout_at(end, connecting)
            .await
            .unwrap_or_else(|_| {
                Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("connecting took longer than the {limit:?} connect timeout"),
                ))
            }),
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
