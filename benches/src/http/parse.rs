//! HTTP/1.1 requests in, responses out: a hand-written parser for request heads and the
//! responses of the example's routes, with no I/O. The benchmarks (`benches/`) serve their
//! tokio, std and raw io_uring servers with this same file, so every server they compare
//! handles requests with the same code.
//!
//! Routes: `GET /` answers `Hello, world!`; `GET /bytes/N` answers `N` bytes (at most
//! [`MAX_BODY`]) of a fixed pattern ([`body_byte`]); other paths are 404, other methods 405
//! (`HEAD` is served like `GET`, without the body). Keep-alive follows HTTP/1.1 (on unless
//! `Connection: close`) and HTTP/1.0 (off unless `Connection: keep-alive`). A request body
//! announced by `Content-Length` (up to [`MAX_REQUEST_BODY`]) is skipped; chunked request
//! bodies are refused (501). A malformed request gets a 400 (431 for a head over
//! [`MAX_HEAD`], 413 for a body over the limit) and the connection is closed.
//!
//! [`handle_requests`] is the whole per-read step: it answers every complete request at the
//! start of the input (several when the client pipelines) and says how many bytes it used.
//!
//! May not: read or write sockets, allocate per request beyond growing the output vector,
//! or use anything but `std` (the benchmarks include this file as it is).

use std::sync::OnceLock;

/// Largest request head (request line and headers) accepted.
pub const MAX_HEAD: usize = 8 * 1024;
/// Largest response body `/bytes/N` serves.
pub const MAX_BODY: usize = 1 << 20;
/// Largest request body accepted (and skipped).
pub const MAX_REQUEST_BODY: usize = 64 * 1024;
/// The body of `GET /`.
pub const HELLO: &[u8] = b"Hello, world!";

/// One parsed request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request<'a> {
    /// The method, as sent (`GET`).
    pub method: &'a [u8],
    /// The request target, as sent (`/bytes/16384`).
    pub path: &'a [u8],
    /// The minor HTTP version: 1 for HTTP/1.1, 0 for HTTP/1.0.
    pub minor_version: u8,
    /// Whether the connection stays open after the response.
    pub keep_alive: bool,
    /// Bytes of request body after the head.
    pub content_length: usize,
}

/// Why a request was refused; every one closes the connection after its error response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    /// No end of head within [`MAX_HEAD`] bytes (431).
    HeadTooLarge,
    /// A request line or header that does not parse (400).
    Malformed,
    /// A `Content-Length` above [`MAX_REQUEST_BODY`] (413).
    BodyTooLarge,
    /// `Transfer-Encoding` on a request (501).
    Unsupported,
}

/// What [`handle_requests`] did with its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handled {
    /// Bytes of input used by complete requests; the rest is the start of the next one.
    pub consumed: usize,
    /// Requests answered (error responses included).
    pub requests: usize,
    /// The connection must be closed once the output is written.
    pub close: bool,
}

/// Answers every complete request at the start of `input`, appending the responses to
/// `out`, and stops at the first incomplete one, after a request that closes the
/// connection, or at a malformed request (answered with an error; `close` is then set).
pub fn handle_requests(input: &[u8], out: &mut Vec<u8>) -> Handled {
    let mut at = 0;
    let mut requests = 0;
    loop {
        match parse_request(&input[at..]) {
            Ok(Some((req, len))) => {
                at += len;
                requests += 1;
                if !respond(&req, out) {
                    return Handled {
                        consumed: at,
                        requests,
                        close: true,
                    };
                }
            }
            Ok(None) => {
                return Handled {
                    consumed: at,
                    requests,
                    close: false,
                }
            }
            Err(e) => {
                respond_error(e, out);
                return Handled {
                    consumed: input.len(),
                    requests: requests + 1,
                    close: true,
                };
            }
        }
    }
}

/// Parses the request at the start of `buf`: `Ok(None)` until its head and body are all
/// there, then the request and its length in bytes (head and body).
pub fn parse_request(buf: &[u8]) -> Result<Option<(Request<'_>, usize)>, ParseError> {
    let Some(head_len) = head_end(buf) else {
        return if buf.len() > MAX_HEAD {
            Err(ParseError::HeadTooLarge)
        } else {
            Ok(None)
        };
    };
    if head_len > MAX_HEAD {
        return Err(ParseError::HeadTooLarge);
    }
    // Lines of the head, each still ending in `\r`: the head up to the `\r` of its last
    // line, split at `\n`.
    let mut lines = buf[..head_len - 3].split(|&b| b == b'\n');
    let request_line = strip_cr(lines.next().ok_or(ParseError::Malformed)?)?;
    let mut parts = request_line.split(|&b| b == b' ');
    let method = parts.next().filter(|m| is_token(m));
    let path = parts.next().filter(|p| !p.is_empty());
    let version = parts.next();
    let (Some(method), Some(path), Some(version), None) = (method, path, version, parts.next())
    else {
        return Err(ParseError::Malformed);
    };
    let minor_version = match version {
        b"HTTP/1.1" => 1,
        b"HTTP/1.0" => 0,
        _ => return Err(ParseError::Malformed),
    };
    let mut keep_alive = minor_version == 1;
    let mut content_length: Option<usize> = None;
    for line in lines {
        let line = strip_cr(line)?;
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or(ParseError::Malformed)?;
        let (name, value) = (&line[..colon], trim(&line[colon + 1..]));
        if !is_token(name) {
            return Err(ParseError::Malformed);
        }
        if name.eq_ignore_ascii_case(b"connection") {
            for option in value.split(|&b| b == b',').map(trim) {
                if option.eq_ignore_ascii_case(b"close") {
                    keep_alive = false;
                } else if option.eq_ignore_ascii_case(b"keep-alive") {
                    keep_alive = true;
                }
            }
        } else if name.eq_ignore_ascii_case(b"content-length") {
            let n = parse_decimal(value).ok_or(ParseError::Malformed)?;
            if content_length.is_some_and(|m| m != n) {
                return Err(ParseError::Malformed);
            }
            content_length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            return Err(ParseError::Unsupported);
        }
    }
    let content_length = content_length.unwrap_or(0);
    if content_length > MAX_REQUEST_BODY {
        return Err(ParseError::BodyTooLarge);
    }
    let len = head_len + content_length;
    if buf.len() < len {
        return Ok(None);
    }
    Ok(Some((
        Request {
            method,
            path,
            minor_version,
            keep_alive,
            content_length,
        },
        len,
    )))
}

/// Appends the response to `req` to `out`; returns whether the connection stays open.
pub fn respond(req: &Request<'_>, out: &mut Vec<u8>) -> bool {
    let keep = req.keep_alive;
    let head_only = req.method == b"HEAD";
    if req.method != b"GET" && !head_only {
        write_response(
            out,
            req,
            b"405 Method Not Allowed",
            b"method not allowed\n",
            true,
        );
        return keep;
    }
    match route(req.path) {
        Some(n) => {
            let body = if n == usize::MAX {
                HELLO
            } else {
                &pattern()[..n]
            };
            write_response(out, req, b"200 OK", body, !head_only);
        }
        None => write_response(out, req, b"404 Not Found", b"not found\n", !head_only),
    }
    keep
}

/// Appends the error response for `err` (with `Connection: close`) to `out`.
pub fn respond_error(err: ParseError, out: &mut Vec<u8>) {
    let status: &[u8] = match err {
        ParseError::HeadTooLarge => b"431 Request Header Fields Too Large",
        ParseError::Malformed => b"400 Bad Request",
        ParseError::BodyTooLarge => b"413 Content Too Large",
        ParseError::Unsupported => b"501 Not Implemented",
    };
    let req = Request {
        method: b"GET",
        path: b"",
        minor_version: 1,
        keep_alive: false,
        content_length: 0,
    };
    write_response(out, &req, status, b"bad request\n", true);
}

/// Byte `i` of every `/bytes/N` body.
pub fn body_byte(i: usize) -> u8 {
    b'a' + (i % 26) as u8
}

/// The body length of `path`: `usize::MAX` stands for `/` (the hello body), `Some(n)` for
/// `/bytes/n`, `None` for a path that is not served. A query string is ignored.
fn route(path: &[u8]) -> Option<usize> {
    let path = path.split(|&b| b == b'?').next().unwrap_or(path);
    if path == b"/" {
        return Some(usize::MAX);
    }
    let n = parse_decimal(path.strip_prefix(b"/bytes/")?)?;
    (n <= MAX_BODY).then_some(n)
}

fn write_response(out: &mut Vec<u8>, req: &Request<'_>, status: &[u8], body: &[u8], send: bool) {
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(status);
    out.extend_from_slice(
        b"\r\nServer: ringsteal-example\r\nContent-Type: text/plain\r\nContent-Length: ",
    );
    push_decimal(out, body.len());
    if !req.keep_alive {
        out.extend_from_slice(b"\r\nConnection: close");
    } else if req.minor_version == 0 {
        out.extend_from_slice(b"\r\nConnection: keep-alive");
    }
    out.extend_from_slice(b"\r\n\r\n");
    if send {
        out.extend_from_slice(body);
    }
}

/// The `/bytes/N` pattern, [`MAX_BODY`] bytes, built once.
fn pattern() -> &'static [u8] {
    static PATTERN: OnceLock<Box<[u8]>> = OnceLock::new();
    PATTERN.get_or_init(|| (0..MAX_BODY).map(body_byte).collect())
}

/// Index just past the `\r\n\r\n` that ends the head, if it is in `buf`.
fn head_end(buf: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(p) = buf[from..].iter().position(|&b| b == b'\n') {
        let nl = from + p;
        if nl >= 3 && &buf[nl - 3..=nl] == b"\r\n\r\n" {
            return Some(nl + 1);
        }
        from = nl + 1;
    }
    None
}

/// A head line without its `\r` (every line must end in `\r\n`).
fn strip_cr(line: &[u8]) -> Result<&[u8], ParseError> {
    line.strip_suffix(b"\r").ok_or(ParseError::Malformed)
}

fn trim(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|b| !matches!(b, b' ' | b'\t'));
    let end = s.iter().rposition(|b| !matches!(b, b' ' | b'\t'));
    match (start, end) {
        (Some(a), Some(b)) => &s[a..=b],
        _ => &[],
    }
}

/// RFC 9110 token characters (methods, header names).
fn is_token(s: &[u8]) -> bool {
    !s.is_empty()
        && s.iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// A decimal number of at most 10 digits (no sign, no spaces).
fn parse_decimal(s: &[u8]) -> Option<usize> {
    if s.is_empty() || s.len() > 10 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0, |n, &d| n * 10 + usize::from(d - b'0')))
}

fn push_decimal(out: &mut Vec<u8>, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";

    fn answer(input: &[u8]) -> (Handled, String) {
        let mut out = Vec::new();
        let h = handle_requests(input, &mut out);
        (h, String::from_utf8(out).unwrap())
    }

    #[test]
    fn answers_a_get_of_the_root_with_hello_and_keeps_the_connection() {
        let (h, out) = answer(GET);
        assert_eq!(
            h,
            Handled {
                consumed: GET.len(),
                requests: 1,
                close: false
            }
        );
        assert_eq!(
            out,
            "HTTP/1.1 200 OK\r\nServer: ringsteal-example\r\nContent-Type: text/plain\r\n\
             Content-Length: 13\r\n\r\nHello, world!"
        );
    }

    #[test]
    fn waits_for_the_rest_of_a_partial_head() {
        for cut in 0..GET.len() {
            assert_eq!(parse_request(&GET[..cut]), Ok(None), "cut at {cut}");
        }
    }

    #[test]
    fn answers_every_pipelined_request_and_leaves_a_partial_one() {
        let mut input = GET.repeat(3);
        input.extend_from_slice(b"GET / HT");
        let (h, out) = answer(&input);
        assert_eq!(h.consumed, 3 * GET.len());
        assert_eq!(h.requests, 3);
        assert!(!h.close);
        assert_eq!(out.matches("Hello, world!").count(), 3);
    }

    #[test]
    fn serves_bytes_of_the_pattern() {
        let (_, out) = answer(b"GET /bytes/30 HTTP/1.1\r\n\r\n");
        let body = out.split("\r\n\r\n").nth(1).unwrap().as_bytes();
        assert!(out.contains("Content-Length: 30\r\n"));
        assert_eq!(body.len(), 30);
        assert!(body.iter().enumerate().all(|(i, &b)| b == body_byte(i)));
        assert!(out.ends_with("abcd"), "byte 26 wraps to 'a'");
    }

    #[test]
    fn closes_on_connection_close_and_after_http_1_0_unless_kept_alive() {
        let (h, out) = answer(b"GET / HTTP/1.1\r\nConnection: Close\r\n\r\nGET / HTTP/1.1\r\n\r\n");
        assert!(h.close);
        assert_eq!(h.requests, 1, "nothing after a closing request is answered");
        assert!(out.contains("Connection: close\r\n"));
        assert!(answer(b"GET / HTTP/1.0\r\n\r\n").0.close);
        let (h, out) = answer(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        assert!(!h.close);
        assert!(out.contains("Connection: keep-alive\r\n"));
    }

    #[test]
    fn skips_a_request_body_and_waits_for_all_of_it() {
        let req = b"GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello";
        assert_eq!(parse_request(&req[..req.len() - 1]), Ok(None));
        let (h, _) = answer(req);
        assert_eq!((h.consumed, h.requests), (req.len(), 1));
    }

    #[test]
    fn answers_unknown_paths_with_404_and_other_methods_with_405() {
        assert!(answer(b"GET /nope HTTP/1.1\r\n\r\n")
            .1
            .starts_with("HTTP/1.1 404 "));
        assert!(answer(b"GET /bytes/2000000 HTTP/1.1\r\n\r\n")
            .1
            .starts_with("HTTP/1.1 404 "));
        assert!(answer(b"POST / HTTP/1.1\r\n\r\n")
            .1
            .starts_with("HTTP/1.1 405 "));
        let (_, head) = answer(b"HEAD / HTTP/1.1\r\n\r\n");
        assert!(
            head.ends_with("Content-Length: 13\r\n\r\n"),
            "HEAD has no body: {head}"
        );
    }

    #[test]
    fn refuses_bad_requests_and_closes() {
        for (input, status) in [
            (&b"GET /\r\n\r\n"[..], "400"),
            (b"GET / HTTP/2.0\r\n\r\n", "400"),
            (b"GET / HTTP/1.1\r\nno colon\r\n\r\n", "400"),
            (b"GET / HTTP/1.1\nHost: x\r\n\r\n", "400"),
            (b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n", "400"),
            (
                b"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                "400",
            ),
            (
                b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                "501",
            ),
            (b"GET / HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", "413"),
        ] {
            let (h, out) = answer(input);
            assert!(h.close, "{input:?}");
            assert_eq!(h.consumed, input.len());
            assert!(
                out.starts_with(&format!("HTTP/1.1 {status} ")),
                "{input:?}: {out}"
            );
            assert!(out.contains("Connection: close\r\n"));
        }
    }

    #[test]
    fn refuses_a_head_larger_than_the_limit() {
        let mut big = b"GET / HTTP/1.1\r\nX: ".to_vec();
        big.resize(MAX_HEAD + 1, b'a');
        assert_eq!(parse_request(&big), Err(ParseError::HeadTooLarge));
        assert!(answer(&big).1.starts_with("HTTP/1.1 431 "));
    }

    #[test]
    fn writes_decimals() {
        for n in [0, 7, 10, 13, 16384, usize::MAX] {
            let mut v = Vec::new();
            push_decimal(&mut v, n);
            assert_eq!(v, n.to_string().as_bytes());
        }
    }
}
