//! Parsing an HTTP/1.x request head (RFC 9112), without I/O: [`parse_request`] looks at the
//! bytes received so far and says "complete, here is the request and its length", "not yet",
//! or "this is not a request I will serve, answer with this status".
//!
//! Owns: the syntax of request lines and header fields, and what the framing headers mean
//! (`Content-Length`, `Transfer-Encoding`, `Connection`, `Host`). May not: read or write a
//! socket (the connection loop in `server.rs` does), or decide what a response says.

use std::fmt;

/// The longest request head (request line and header fields) accepted, in bytes. A client
/// that sends more without ending its head gets `431 Request Header Fields Too Large`.
pub const MAX_HEAD: usize = 8 * 1024;

/// The HTTP version of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// `HTTP/1.0`: the connection closes after the response unless the client asks for
    /// `Connection: keep-alive`.
    Http10,
    /// `HTTP/1.1`: the connection stays open unless either side says `Connection: close`.
    Http11,
}

/// A parsed request head.
///
/// ```
/// use ringsteal_examples::http::{parse_request, Version};
///
/// let bytes = b"GET /a/b?x=1 HTTP/1.1\r\nHost: example\r\nConnection: close\r\n\r\n";
/// let (req, len) = parse_request(bytes).unwrap().expect("a complete head");
/// assert_eq!(len, bytes.len());
/// assert_eq!((req.method.as_str(), req.path(), req.query()), ("GET", "/a/b", Some("x=1")));
/// assert_eq!(req.version, Version::Http11);
/// assert!(!req.keep_alive);
/// assert_eq!(req.header("host"), Some("example"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The method, as sent (methods are case-sensitive: `GET`, not `get`).
    pub method: String,
    /// The request target as sent: `/path?query`, an absolute URI, `*` or an authority.
    pub target: String,
    /// The protocol version.
    pub version: Version,
    /// The header fields in the order received, names as sent.
    pub headers: Vec<(String, String)>,
    /// Whether the connection may carry another request after this one's response.
    pub keep_alive: bool,
    /// The length of the body that follows the head (0 without `Content-Length`).
    pub content_length: u64,
}

impl Request {
    /// The path of the target, without the query: `/a/b` of `/a/b?x=1`, and of
    /// `http://host/a/b?x=1` (the absolute form, which servers must accept). `*` stays `*`;
    /// an absolute URI without a path gives `/`.
    pub fn path(&self) -> &str {
        let without_query = self.target.split('?').next().unwrap_or("");
        match without_query.split_once("://") {
            Some((_scheme, rest)) => rest.find('/').map_or("/", |i| &rest[i..]),
            None => without_query,
        }
    }

    /// The query of the target, after `?`, if any.
    pub fn query(&self) -> Option<&str> {
        self.target.split_once('?').map(|(_, q)| q)
    }

    /// The value of the first header field named `name` (compared without regard to case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Why a request head is refused, and so which status answers it. After any of these the
/// server closes the connection: it can no longer tell where the next request starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// Malformed syntax or contradictory framing: `400 Bad Request`, with the reason.
    BadRequest(&'static str),
    /// The head did not end within [`MAX_HEAD`] bytes: `431 Request Header Fields Too Large`.
    HeadTooLarge,
    /// A version other than 1.0 and 1.1: `505 HTTP Version Not Supported`.
    VersionNotSupported,
    /// A `Transfer-Encoding` (chunked bodies are not read by this small server):
    /// `501 Not Implemented`.
    TransferEncoding,
}

impl ParseError {
    /// The status code that answers this error.
    pub fn status(self) -> u16 {
        match self {
            ParseError::BadRequest(_) => 400,
            ParseError::HeadTooLarge => 431,
            ParseError::VersionNotSupported => 505,
            ParseError::TransferEncoding => 501,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::BadRequest(why) => write!(f, "bad request: {why}"),
            ParseError::HeadTooLarge => write!(f, "request head longer than {MAX_HEAD} bytes"),
            ParseError::VersionNotSupported => write!(f, "only HTTP/1.0 and HTTP/1.1 are served"),
            ParseError::TransferEncoding => write!(f, "Transfer-Encoding is not supported"),
        }
    }
}

impl std::error::Error for ParseError {}

/// Parses the request head at the start of `buf`.
///
/// * `Ok(Some((request, len)))`: a complete head of `len` bytes (empty lines before the
///   request line, which RFC 9112 says to ignore, included); the body, if
///   `content_length > 0`, follows it.
/// * `Ok(None)`: the head is not complete yet; read more and call again.
/// * `Err(e)`: answer with `e.status()` and close. A bad request line is refused as soon as
///   its line is complete; a head longer than [`MAX_HEAD`] as soon as that many bytes are
///   buffered.
///
/// Lines end with CRLF, or a bare LF (which RFC 9112 allows a recipient to accept). Refused:
/// a request line that is not `METHOD SP TARGET SP HTTP/x.y`; a header name with whitespace
/// or other non-token bytes, or without a colon; an obsolete folded line; control bytes in a
/// value; `Content-Length` that is not a number or that appears twice with different values;
/// `Content-Length` with `Transfer-Encoding`; an HTTP/1.1 request with no `Host` or two.
///
/// ```
/// use ringsteal_examples::http::{parse_request, ParseError};
///
/// assert_eq!(parse_request(b"GET / HTTP/1.1\r\nHost: a\r\n"), Ok(None)); // not yet complete
/// let err = parse_request(b"hello there\r\n").unwrap_err();
/// assert_eq!(err.status(), 400);
/// let pipelined = b"GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n";
/// let (first, len) = parse_request(pipelined).unwrap().unwrap();
/// assert_eq!(first.path(), "/1");
/// let (second, _) = parse_request(&pipelined[len..]).unwrap().unwrap();
/// assert_eq!(second.path(), "/2");
/// ```
pub fn parse_request(buf: &[u8]) -> Result<Option<(Request, usize)>, ParseError> {
    // Empty lines before the request line are skipped.
    let mut start = 0;
    while let Some(rest) = buf.get(start..) {
        if rest.starts_with(b"\r\n") {
            start += 2;
        } else if rest.starts_with(b"\n") {
            start += 1;
        } else {
            break;
        }
    }
    let mut lines = Lines {
        buf,
        pos: start,
        limit: MAX_HEAD,
    };
    let request_line = match lines.next()? {
        Some(line) => line,
        None => return Ok(None),
    };
    let (method, target, version) = parse_request_line(request_line)?;
    let mut req = Request {
        method: method.to_owned(),
        target: target.to_owned(),
        version,
        headers: Vec::new(),
        keep_alive: version == Version::Http11,
        content_length: 0,
    };
    let mut framing = Framing::default();
    loop {
        let line = match lines.next()? {
            Some(line) => line,
            None => return Ok(None),
        };
        if line.is_empty() {
            break;
        }
        let (name, value) = parse_field(line)?;
        framing.note(name, value)?;
        req.headers.push((name.to_owned(), value.to_owned()));
    }
    framing.finish(&mut req)?;
    Ok(Some((req, lines.pos)))
}

/// Lines of the head, each without its line ending; `next` is `Ok(None)` when the next line
/// has not fully arrived.
struct Lines<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Where the head must have ended by.
    limit: usize,
}

impl<'a> Lines<'a> {
    fn next(&mut self) -> Result<Option<&'a str>, ParseError> {
        let rest = &self.buf[self.pos..];
        let Some(lf) = rest.iter().position(|&b| b == b'\n') else {
            return if self.buf.len() >= self.limit {
                Err(ParseError::HeadTooLarge)
            } else {
                Ok(None)
            };
        };
        if self.pos + lf + 1 > self.limit {
            return Err(ParseError::HeadTooLarge);
        }
        let line = rest[..lf].strip_suffix(b"\r").unwrap_or(&rest[..lf]);
        self.pos += lf + 1;
        // Field values may hold obs-text (bytes >= 0x80), which is not UTF-8 in general; this
        // server has no use for such values, so it refuses them rather than guess a charset.
        std::str::from_utf8(line)
            .map(Some)
            .map_err(|_| ParseError::BadRequest("bytes that are not UTF-8 in the head"))
    }
}

fn parse_request_line(line: &str) -> Result<(&str, &str, Version), ParseError> {
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ParseError::BadRequest(
            "the request line is not METHOD TARGET VERSION",
        ));
    };
    if method.is_empty() || !method.bytes().all(is_token_byte) {
        return Err(ParseError::BadRequest("the method is not a token"));
    }
    if target.is_empty() || !target.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ParseError::BadRequest(
            "the target is empty or holds control bytes",
        ));
    }
    let version = match version {
        "HTTP/1.1" => Version::Http11,
        "HTTP/1.0" => Version::Http10,
        v if is_http_version(v) => return Err(ParseError::VersionNotSupported),
        _ => return Err(ParseError::BadRequest("the version is not HTTP/x.y")),
    };
    Ok((method, target, version))
}

fn is_http_version(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 8
        && v.starts_with("HTTP/")
        && b[5].is_ascii_digit()
        && b[6] == b'.'
        && b[7].is_ascii_digit()
}

fn parse_field(line: &str) -> Result<(&str, &str), ParseError> {
    if line.starts_with([' ', '\t']) {
        return Err(ParseError::BadRequest("an obsolete folded header line"));
    }
    let Some((name, value)) = line.split_once(':') else {
        return Err(ParseError::BadRequest("a header line without a colon"));
    };
    if name.is_empty() || !name.bytes().all(is_token_byte) {
        return Err(ParseError::BadRequest(
            "a header name that is not a token (or whitespace before the colon)",
        ));
    }
    let value = value.trim_matches([' ', '\t']);
    if value.bytes().any(|b| b.is_ascii_control() && b != b'\t') {
        return Err(ParseError::BadRequest("control bytes in a header value"));
    }
    Ok((name, value))
}

/// `tchar` of RFC 9110: what methods and header names are made of.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// What the framing and connection headers said.
#[derive(Default)]
struct Framing {
    content_length: Option<u64>,
    transfer_encoding: bool,
    hosts: usize,
    close: bool,
    keep_alive: bool,
}

impl Framing {
    fn note(&mut self, name: &str, value: &str) -> Result<(), ParseError> {
        if name.eq_ignore_ascii_case("content-length") {
            // A list of equal values ("5, 5") is allowed by RFC 9110; anything else is not.
            for item in value.split(',').map(|v| v.trim_matches([' ', '\t'])) {
                if item.is_empty() || !item.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(ParseError::BadRequest("Content-Length is not a number"));
                }
                let n: u64 = item
                    .parse()
                    .map_err(|_| ParseError::BadRequest("Content-Length is too large"))?;
                if self.content_length.is_some_and(|m| m != n) {
                    return Err(ParseError::BadRequest("two different Content-Lengths"));
                }
                self.content_length = Some(n);
            }
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            self.transfer_encoding = true;
        } else if name.eq_ignore_ascii_case("host") {
            self.hosts += 1;
        } else if name.eq_ignore_ascii_case("connection") {
            for option in value.split(',').map(|o| o.trim_matches([' ', '\t'])) {
                self.close |= option.eq_ignore_ascii_case("close");
                self.keep_alive |= option.eq_ignore_ascii_case("keep-alive");
            }
        }
        Ok(())
    }

    fn finish(self, req: &mut Request) -> Result<(), ParseError> {
        if self.transfer_encoding {
            return Err(if self.content_length.is_some() {
                // The classic request-smuggling shape: refuse rather than pick one.
                ParseError::BadRequest("both Content-Length and Transfer-Encoding")
            } else {
                ParseError::TransferEncoding
            });
        }
        if req.version == Version::Http11 && self.hosts != 1 {
            return Err(ParseError::BadRequest(
                "an HTTP/1.1 request needs exactly one Host",
            ));
        }
        req.content_length = self.content_length.unwrap_or(0);
        req.keep_alive = match req.version {
            Version::Http11 => !self.close,
            Version::Http10 => self.keep_alive && !self.close,
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(bytes: &[u8]) -> (Request, usize) {
        parse_request(bytes)
            .expect("valid")
            .expect("a complete head")
    }

    fn refused(bytes: &[u8]) -> u16 {
        parse_request(bytes).expect_err("refused").status()
    }

    #[test]
    fn a_head_arriving_byte_by_byte_is_incomplete_until_its_empty_line() {
        let head = b"GET /x HTTP/1.1\r\nHost: h\r\nAccept: */*\r\n\r\n";
        for end in 0..head.len() {
            assert_eq!(parse_request(&head[..end]), Ok(None), "at {end}");
        }
        assert_eq!(parse_ok(head).1, head.len());
    }

    #[test]
    fn pipelined_requests_are_parsed_one_after_another_with_their_lengths() {
        let two = b"GET /1 HTTP/1.1\r\nHost: h\r\n\r\nHEAD /2 HTTP/1.1\r\nHost: h\r\n\r\n";
        let (first, n) = parse_ok(two);
        assert_eq!((first.method.as_str(), first.path()), ("GET", "/1"));
        let (second, m) = parse_ok(&two[n..]);
        assert_eq!((second.method.as_str(), second.path()), ("HEAD", "/2"));
        assert_eq!(n + m, two.len());
    }

    #[test]
    fn bare_line_feeds_and_leading_empty_lines_are_accepted() {
        let (req, n) = parse_ok(b"\r\n\nGET / HTTP/1.1\nHost: h\n\n");
        assert_eq!((req.path(), n), ("/", 27));
    }

    #[test]
    fn keep_alive_follows_the_version_and_the_connection_header() {
        let cases: [(&[u8], bool); 5] = [
            (b"GET / HTTP/1.1\r\nHost: h\r\n\r\n", true),
            (
                b"GET / HTTP/1.1\r\nHost: h\r\nConnection: Close\r\n\r\n",
                false,
            ),
            (b"GET / HTTP/1.0\r\n\r\n", false),
            (b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true),
            (
                b"GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade, close\r\n\r\n",
                false,
            ),
        ];
        for (bytes, keep_alive) in cases {
            assert_eq!(
                parse_ok(bytes).0.keep_alive,
                keep_alive,
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[test]
    fn content_length_is_read_and_contradictions_are_refused() {
        let (req, _) = parse_ok(b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 12\r\n\r\n");
        assert_eq!(req.content_length, 12);
        let (req, _) = parse_ok(b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3, 3\r\n\r\n");
        assert_eq!(req.content_length, 3);
        assert_eq!(
            refused(
                b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n"
            ),
            400
        );
        assert_eq!(
            refused(b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n"),
            400
        );
        assert_eq!(
            refused(
                b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n"
            ),
            400
        );
        assert_eq!(
            refused(
                b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
            ),
            400
        );
        assert_eq!(
            refused(b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"),
            501
        );
    }

    #[test]
    fn garbage_is_refused_as_soon_as_its_first_line_is_complete() {
        assert_eq!(
            refused(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\n"),
            400
        );
        assert_eq!(refused(b"hello\r\n"), 400);
        assert_eq!(refused(b"GET /  HTTP/1.1\r\n"), 400);
        assert_eq!(refused(b"GET / HTTP/1.1 extra\r\n"), 400);
        assert_eq!(refused(b"G(T / HTTP/1.1\r\n"), 400);
        assert_eq!(refused(b"GET / FTP/1.0\r\n"), 400);
        assert_eq!(refused(b"GET / HTTP/2.0\r\n"), 505);
        assert_eq!(refused(b"GET /\x7f HTTP/1.1\r\n"), 400);
    }

    #[test]
    fn bad_header_lines_are_refused() {
        for bad in [
            &b"GET / HTTP/1.1\r\nHost: h\r\nNo colon here\r\n\r\n"[..],
            b"GET / HTTP/1.1\r\nHost: h\r\nName : value\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n folded\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: h\r\n: empty name\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: h\r\nX: a\x00b\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: h\r\nX: \xff\r\n\r\n",
            b"GET / HTTP/1.1\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        ] {
            assert_eq!(refused(bad), 400, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn a_head_longer_than_the_limit_is_refused_once_that_much_arrived() {
        let mut head = b"GET / HTTP/1.1\r\nHost: h\r\nX: ".to_vec();
        head.resize(MAX_HEAD - 1, b'a');
        assert_eq!(
            parse_request(&head),
            Ok(None),
            "one byte short of the limit"
        );
        head.push(b'a');
        assert_eq!(parse_request(&head), Err(ParseError::HeadTooLarge));
        // A complete head that ends past the limit is refused too.
        head.extend_from_slice(b"\r\n\r\n");
        assert_eq!(parse_request(&head), Err(ParseError::HeadTooLarge));
        // One that ends exactly at the limit is not.
        let mut exact = b"GET / HTTP/1.1\r\nHost: h\r\nX: ".to_vec();
        exact.resize(MAX_HEAD - 4, b'a');
        exact.extend_from_slice(b"\r\n\r\n");
        assert_eq!(parse_ok(&exact).1, MAX_HEAD);
    }

    #[test]
    fn paths_and_queries_come_from_origin_and_absolute_forms() {
        let path = |target: &str| {
            let bytes = format!("GET {target} HTTP/1.1\r\nHost: h\r\n\r\n");
            let (req, _) = parse_ok(bytes.as_bytes());
            (req.path().to_owned(), req.query().map(str::to_owned))
        };
        assert_eq!(path("/a?b=c"), ("/a".into(), Some("b=c".into())));
        assert_eq!(path("http://h/x/y?z"), ("/x/y".into(), Some("z".into())));
        assert_eq!(path("http://h"), ("/".into(), None));
        assert_eq!(path("*"), ("*".into(), None));
    }

    #[test]
    fn header_lookup_ignores_case_and_values_lose_surrounding_whitespace() {
        let (req, _) = parse_ok(b"GET / HTTP/1.1\r\nHOST: h\r\nX-Thing: \t spaced out \t\r\n\r\n");
        assert_eq!(req.header("host"), Some("h"));
        assert_eq!(req.header("x-thing"), Some("spaced out"));
        assert_eq!(req.header("missing"), None);
    }
}
