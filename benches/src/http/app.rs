//! The application every server of the http groups serves, and the per-read request step of
//! the servers that cannot run `ringsteal_examples::http::serve` (which needs ringsteal's
//! owned-buffer streams): tokio's, the std threads' and the raw io_uring floor's.
//!
//! [`Requests::handle`] is `serve`'s inner loop without the I/O: parse every complete request
//! at the start of the input with `parse_request`, answer it with [`route`] and `write_head`
//! (the body left out for `HEAD`), skip a request body (`Content-Length`), stop after a
//! request that closes the connection, and answer a refused head as `serve` does (status,
//! `Connection: close`). The caller then writes everything answered with one write, as
//! `serve` does, and closes if told to.
//!
//! May not: do I/O, or answer anything differently from `serve` with [`handler`].

use std::future::{ready, Ready};
use std::sync::OnceLock;

use ringsteal_examples::http::{
    parse_request, reason, write_head, Body, ParseError, Request, Response, Version,
};

/// Responses gathered for one write, at most (plus one response): `serve`'s limit, so that a
/// client that pipelines many requests for large bodies and does not read holds up that much
/// of a server's memory at most, not all of its answers at once.
pub const GATHER_LIMIT: usize = 64 * 1024;

/// Largest body `GET /bytes/N` serves.
pub const MAX_BODY: usize = 1 << 20;

/// The greeting of `GET /`, as `examples/http_server` answers it.
pub const HELLO: &str = "Hello, world!\n";

/// The application: `GET /` (and `HEAD`) answers `examples/http_server`'s greeting,
/// `GET /bytes/N` answers `N` bytes (at most [`MAX_BODY`]) of a fixed pattern
/// ([`body_byte`]), any other path 404, other methods 405.
pub fn route(req: &Request) -> Response {
    match (req.method.as_str(), req.path()) {
        ("GET" | "HEAD", "/") => Response::static_text(200, HELLO),
        ("GET" | "HEAD", path) => match bytes_len(path) {
            Some(n) => Response {
                status: 200,
                headers: vec![("Content-Type", "application/octet-stream".into())],
                body: Body::Static(&pattern()[..n]),
            },
            None => Response::error(404),
        },
        _ => Response::error(405).with_header("Allow", "GET, HEAD"),
    }
}

/// [`route`] as the handler `ringsteal_examples::http::serve` takes.
pub fn handler(req: Request) -> Ready<Response> {
    ready(route(&req))
}

/// Byte `i` of every `/bytes/N` body.
pub fn body_byte(i: usize) -> u8 {
    b'a' + (i % 26) as u8
}

/// `N` of `/bytes/N`, if the path is that and `N` is at most [`MAX_BODY`].
fn bytes_len(path: &str) -> Option<usize> {
    let n = path.strip_prefix("/bytes/")?;
    if n.is_empty() || n.len() > 7 || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok().filter(|&n| n <= MAX_BODY)
}

/// The `/bytes/N` pattern, [`MAX_BODY`] bytes, built once.
fn pattern() -> &'static [u8] {
    static PATTERN: OnceLock<Box<[u8]>> = OnceLock::new();
    PATTERN.get_or_init(|| (0..MAX_BODY).map(body_byte).collect())
}

/// What [`Requests::handle`] did with its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handled {
    /// Bytes of input used (requests answered and request body skipped); the rest is the
    /// start of the next request.
    pub consumed: usize,
    /// Requests answered (refusals included).
    pub requests: usize,
    /// The connection must be closed once the output is written.
    pub close: bool,
    /// Stopped at [`GATHER_LIMIT`]: the input may hold more complete requests. Write the
    /// output, then call [`Requests::handle`] again with the rest of the input before reading.
    pub full: bool,
}

/// One connection's request state: the bytes of a request body still to skip.
#[derive(Debug, Default)]
pub struct Requests {
    body_left: u64,
}

impl Requests {
    /// Answers every complete request at the start of `input`, appending the responses to
    /// `out` (see the module docs).
    pub fn handle(&mut self, input: &[u8], out: &mut Vec<u8>) -> Handled {
        let mut at = 0;
        let mut requests = 0;
        loop {
            if self.body_left > 0 {
                let skip = self.body_left.min((input.len() - at) as u64);
                at += skip as usize;
                self.body_left -= skip;
                if self.body_left > 0 {
                    return Handled {
                        consumed: at,
                        requests,
                        close: false,
                        full: false,
                    };
                }
            }
            let (req, len) = match parse_request(&input[at..]) {
                Ok(Some(parsed)) => parsed,
                Ok(None) => {
                    return Handled {
                        consumed: at,
                        requests,
                        close: false,
                        full: false,
                    }
                }
                Err(e) => {
                    refuse(out, e);
                    return Handled {
                        consumed: input.len(),
                        requests: requests + 1,
                        close: true,
                        full: false,
                    };
                }
            };
            at += len;
            requests += 1;
            self.body_left = req.content_length;
            let resp = route(&req);
            let close = !req.keep_alive;
            write_head(out, &resp, req.version, close);
            if req.method != "HEAD" {
                match &resp.body {
                    Body::Bytes(b) => out.extend_from_slice(b),
                    Body::Static(b) => out.extend_from_slice(b),
                    Body::Empty | Body::File { .. } => {}
                }
            }
            if close {
                return Handled {
                    consumed: at,
                    requests,
                    close: true,
                    full: false,
                };
            }
            if out.len() >= GATHER_LIMIT {
                return Handled {
                    consumed: at,
                    requests,
                    close: false,
                    full: true,
                };
            }
        }
    }
}

/// The response to a refused request head, as `serve` writes it.
fn refuse(out: &mut Vec<u8>, e: ParseError) {
    let status = e.status();
    let resp = Response::text(status, format!("{status} {}: {e}\n", reason(status)));
    write_head(out, &resp, Version::Http11, true);
    if let Body::Bytes(body) = resp.body {
        out.extend_from_slice(&body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";

    fn answer(input: &[u8]) -> (Handled, String) {
        let mut out = Vec::new();
        let h = Requests::default().handle(input, &mut out);
        (h, String::from_utf8(out).unwrap())
    }

    #[test]
    fn answers_every_pipelined_request_and_leaves_a_partial_one() {
        let mut input = GET.repeat(3);
        input.extend_from_slice(b"GET / HT");
        let (h, out) = answer(&input);
        assert_eq!((h.consumed, h.requests, h.close), (3 * GET.len(), 3, false));
        assert_eq!(out.matches("HTTP/1.1 200 OK\r\n").count(), 3);
        assert_eq!(out.matches(HELLO).count(), 3);
    }

    #[test]
    fn serves_n_bytes_of_the_pattern() {
        let (_, out) = answer(b"GET /bytes/30 HTTP/1.1\r\nHost: x\r\n\r\n");
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(head.contains("Content-Length: 30\r\n"), "{head}");
        assert_eq!(body.len(), 30);
        assert!(body.bytes().enumerate().all(|(i, b)| b == body_byte(i)));
        assert!(answer(b"GET /bytes/2000000 HTTP/1.1\r\nHost: x\r\n\r\n")
            .1
            .starts_with("HTTP/1.1 404 "));
    }

    #[test]
    fn head_gets_the_length_without_the_body() {
        let (_, out) = answer(b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(out.ends_with("\r\n\r\n"), "{out}");
        assert!(out.contains(&format!("Content-Length: {}\r\n", HELLO.len())));
    }

    #[test]
    fn skips_a_request_body_across_reads() {
        let mut conn = Requests::default();
        let mut out = Vec::new();
        let first = b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhel";
        let h = conn.handle(first, &mut out);
        assert_eq!((h.consumed, h.requests), (first.len(), 1));
        let rest = [&b"lo"[..], GET].concat();
        let h = conn.handle(&rest, &mut out);
        assert_eq!((h.consumed, h.requests), (rest.len(), 1));
    }

    #[test]
    fn stops_gathering_at_the_limit_and_answers_the_rest_when_called_again() {
        let big = b"GET /bytes/16384 HTTP/1.1\r\nHost: x\r\n\r\n";
        let input = big.repeat(10);
        let mut conn = Requests::default();
        let (mut at, mut answered, mut calls) = (0, 0, 0);
        while at < input.len() {
            let mut out = Vec::new();
            let h = conn.handle(&input[at..], &mut out);
            assert!(
                out.len() < GATHER_LIMIT + 17 * 1024,
                "{} bytes gathered",
                out.len()
            );
            assert_eq!(
                h.full,
                at + h.consumed < input.len(),
                "full only with requests left"
            );
            let out = String::from_utf8(out).unwrap();
            assert_eq!(out.matches("HTTP/1.1 200 OK\r\n").count(), h.requests);
            (at, answered, calls) = (at + h.consumed, answered + h.requests, calls + 1);
        }
        assert_eq!((answered, calls), (10, 3), "4 + 4 + 2 responses of 16 KiB");
    }

    #[test]
    fn stops_after_a_closing_request_and_refuses_bad_ones() {
        let closing = b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        let (h, out) = answer(&[&closing[..], GET].concat());
        assert_eq!((h.consumed, h.requests, h.close), (closing.len(), 1, true));
        assert!(out.contains("Connection: close\r\n"));
        let (h, out) = answer(b"nonsense\r\n\r\n");
        assert!(h.close);
        assert!(out.starts_with("HTTP/1.1 400 "), "{out}");
    }
}
