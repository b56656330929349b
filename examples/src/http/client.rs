//! The client side, as small as the tour and the tests need: [`parse_response_head`]
//! (without I/O, for any client) and [`Client`], a keep-alive connection that sends `GET`s
//! one at a time.
//!
//! Owns: reading response heads and bodies framed by `Content-Length`. May not: serve.

use std::io;
use std::net::SocketAddr;

use ringsteal::buf::IoBuf;
use ringsteal::net::TcpStream;

use super::request::MAX_HEAD;

/// A parsed response head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseHead {
    /// The status code.
    pub status: u16,
    /// The header fields, in order.
    pub headers: Vec<(String, String)>,
    /// `Content-Length` (0 if absent).
    pub content_length: u64,
    /// Whether the server said `Connection: close`.
    pub close: bool,
    /// The head's length in bytes; the body starts there.
    pub len: usize,
}

impl ResponseHead {
    /// The value of the first header field named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Parses the response head at the start of `buf`: `Ok(None)` until it is complete; an
/// `InvalidData` error for a head that is malformed or framed with `Transfer-Encoding`
/// (which these clients do not read).
///
/// ```
/// use ringsteal_examples::http::parse_response_head;
///
/// let bytes = b"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nno\n";
/// let head = parse_response_head(bytes).unwrap().unwrap();
/// assert_eq!((head.status, head.content_length, head.len), (404, 3, bytes.len() - 3));
/// assert_eq!(parse_response_head(&bytes[..10]).unwrap(), None);
/// ```
pub fn parse_response_head(buf: &[u8]) -> io::Result<Option<ResponseHead>> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return if buf.len() > MAX_HEAD {
            Err(bad("response head too long"))
        } else {
            Ok(None)
        };
    };
    let text = std::str::from_utf8(&buf[..end]).map_err(|_| bad("response head not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.splitn(3, ' ');
    let (Some(version), Some(code)) = (parts.next(), parts.next()) else {
        return Err(bad("malformed status line"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(bad("not an HTTP/1.x response"));
    }
    let status = code.parse().map_err(|_| bad("malformed status code"))?;
    let mut head = ResponseHead {
        status,
        headers: Vec::new(),
        content_length: 0,
        close: version == "HTTP/1.0",
        len: end + 4,
    };
    for line in lines {
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| bad("header without colon"))?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            head.content_length = value.parse().map_err(|_| bad("bad Content-Length"))?;
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(bad("Transfer-Encoding is not supported by this client"));
        } else if name.eq_ignore_ascii_case("connection") {
            head.close = value.eq_ignore_ascii_case("close");
        }
        head.headers.push((name.to_owned(), value.to_owned()));
    }
    Ok(Some(head))
}

/// A keep-alive HTTP/1.1 connection that sends one `GET` at a time.
///
/// ```
/// use ringsteal::net::TcpListener;
/// use ringsteal_examples::http::{self, Client, Response};
///
/// let rt = ringsteal::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let addr = listener.local_addr()?;
///     ringsteal::spawn(async move {
///         let (stream, _) = listener.accept().await?;
///         http::serve(stream, &|req: http::Request| async move {
///             Response::text(200, req.path().to_owned())
///         }, None).await
///     });
///     let mut client = Client::connect(addr).await?;
///     for path in ["/one", "/two"] {
///         let (head, body) = client.get(path).await?;
///         assert_eq!((head.status, body.as_slice()), (200, path.as_bytes()));
///     }
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct Client {
    stream: TcpStream,
    /// Bytes received and not yet returned.
    buf: Vec<u8>,
}

impl Client {
    /// Connects (with `TCP_NODELAY`: requests are small and each waits for its answer).
    pub async fn connect(addr: SocketAddr) -> io::Result<Client> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Client {
            stream,
            buf: Vec::with_capacity(MAX_HEAD),
        })
    }

    /// Sends `GET path` and reads the whole response: its head and its body.
    pub async fn get(&mut self, path: &str) -> io::Result<(ResponseHead, Vec<u8>)> {
        let request = format!("GET {path} HTTP/1.1\r\nHost: ringsteal\r\n\r\n");
        self.stream.write_all(request.into_bytes()).await.0?;
        let head = loop {
            if let Some(head) = parse_response_head(&self.buf)? {
                break head;
            }
            self.fill().await?;
        };
        let total = head.len + head.content_length as usize;
        while self.buf.len() < total {
            self.fill().await?;
        }
        let body = self.buf[head.len..total].to_vec();
        self.buf.drain(..total);
        Ok((head, body))
    }

    /// Reads more into the buffer; end of stream is an `UnexpectedEof` error.
    async fn fill(&mut self) -> io::Result<()> {
        if self.buf.len() == self.buf.capacity() {
            self.buf.reserve(self.buf.capacity().max(4096));
        }
        let len = self.buf.len();
        let (res, buf) = self
            .stream
            .read(std::mem::take(&mut self.buf).slice(len..))
            .await;
        self.buf = buf.into_inner();
        match res? {
            0 => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection mid-response",
            )),
            _ => Ok(()),
        }
    }
}
