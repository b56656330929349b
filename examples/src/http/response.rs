//! Responses: what a handler returns ([`Response`], [`Body`]) and how its head is written
//! (status line, `Date`, `Content-Length`, `Connection`).
//!
//! Owns: the bytes of a response head. May not: touch a socket (`server.rs` sends).

use std::cell::Cell;
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use super::request::Version;

/// A response: a status, header fields, and a body whose length is always known, so every
/// response carries a `Content-Length` and the connection can carry the next one.
///
/// ```
/// use ringsteal_examples::http::Response;
///
/// let ok = Response::text(200, "hello\n").with_header("Cache-Control", "no-store");
/// assert_eq!((ok.status, ok.body.len()), (200, 6));
/// assert_eq!(Response::error(404).status, 404);
/// ```
#[derive(Debug)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Header fields besides `Date`, `Content-Length` and `Connection`, which are written
    /// for every response.
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Body,
}

/// The body of a [`Response`].
#[derive(Debug)]
pub enum Body {
    /// No body.
    Empty,
    /// Bytes in memory.
    Bytes(Vec<u8>),
    /// Bytes that live for the whole program.
    Static(&'static [u8]),
    /// The first `len` bytes of a file, read in chunks as they are sent.
    File {
        /// The open file.
        file: ringsteal::fs::File,
        /// How many bytes to send from its start.
        len: u64,
    },
}

impl Body {
    /// The body's length in bytes.
    pub fn len(&self) -> u64 {
        match self {
            Body::Empty => 0,
            Body::Bytes(b) => b.len() as u64,
            Body::Static(b) => b.len() as u64,
            Body::File { len, .. } => *len,
        }
    }

    /// Whether the body is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Response {
    /// A response with `status` and no body.
    pub fn new(status: u16) -> Self {
        Response {
            status,
            headers: Vec::new(),
            body: Body::Empty,
        }
    }

    /// A `text/plain` response.
    pub fn text(status: u16, body: impl Into<String>) -> Self {
        Response {
            status,
            headers: vec![("Content-Type", "text/plain; charset=utf-8".into())],
            body: Body::Bytes(body.into().into_bytes()),
        }
    }

    /// A `text/plain` response whose body is a constant (no allocation for the body).
    pub fn static_text(status: u16, body: &'static str) -> Self {
        Response {
            status,
            headers: vec![("Content-Type", "text/plain; charset=utf-8".into())],
            body: Body::Static(body.as_bytes()),
        }
    }

    /// A response for an error status, whose body is the status line (`404 Not Found`).
    pub fn error(status: u16) -> Self {
        Self::text(status, format!("{status} {}\n", reason(status)))
    }

    /// Adds a header field.
    pub fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }
}

/// The reason phrase of the status codes this server uses.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}

/// Appends the head of `resp` to `out`: the status line (always `HTTP/1.1`, the highest
/// version this server speaks, which an HTTP/1.0 client understands), `Date`,
/// `Content-Length` (also for a `HEAD` request, whose body is not sent), the handler's
/// fields, and `Connection: close` when the connection ends after this response (or
/// `Connection: keep-alive` to an HTTP/1.0 client that asked to keep it).
///
/// Public so that a server on another runtime (the benchmarks' tokio, std and raw io_uring
/// servers) writes exactly the heads [`serve`](super::serve) writes.
///
/// ```
/// use ringsteal_examples::http::{write_head, Response, Version};
///
/// let mut out = Vec::new();
/// write_head(&mut out, &Response::static_text(200, "hi"), Version::Http11, true);
/// let head = String::from_utf8(out).unwrap();
/// assert!(head.starts_with("HTTP/1.1 200 OK\r\nDate: "));
/// assert!(head.ends_with("Content-Length: 2\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"));
/// ```
pub fn write_head(out: &mut Vec<u8>, resp: &Response, version: Version, close: bool) {
    let status = resp.status;
    // Writes into a Vec cannot fail.
    let _ = write!(out, "HTTP/1.1 {status} {}\r\nDate: ", reason(status));
    http_date_now(out);
    let _ = write!(out, "\r\nContent-Length: {}\r\n", resp.body.len());
    for (name, value) in &resp.headers {
        let _ = write!(out, "{name}: {value}\r\n");
    }
    if close {
        out.extend_from_slice(b"Connection: close\r\n");
    } else if version == Version::Http10 {
        out.extend_from_slice(b"Connection: keep-alive\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// Appends the current time as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), which
/// an origin server with a clock must send (RFC 9110, 6.6.1). Formatted once a second per
/// thread.
fn http_date_now(out: &mut Vec<u8>) {
    thread_local! {
        static CACHED: Cell<(u64, [u8; 29])> = const { Cell::new((u64::MAX, [0; 29])) };
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (secs, text) = CACHED.get();
    let text = if secs == now {
        text
    } else {
        let text = http_date(now);
        CACHED.set((now, text));
        text
    };
    out.extend_from_slice(&text);
}

/// `secs` since the Unix epoch as an IMF-fixdate.
fn http_date(secs: u64) -> [u8; 29] {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = secs / 86_400;
    let (h, m, s) = (secs % 86_400 / 3600, secs % 3600 / 60, secs % 60);
    let (year, month, day) = civil_from_days(days);
    let mut text = [0u8; 29];
    let mut cursor = &mut text[..];
    let _ = write!(
        cursor,
        "{}, {day:02} {} {year:04} {h:02}:{m:02}:{s:02} GMT",
        DAYS[(days % 7) as usize],
        MONTHS[month as usize - 1]
    );
    text
}

/// The proleptic Gregorian (year, month 1–12, day 1–31) of a count of days since
/// 1970-01-01: shift to years starting in March (so the leap day ends a year), split into
/// 400-year eras of 146,097 days, then into years and months of that era.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468; // days since 0000-03-01
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(secs: u64) -> String {
        String::from_utf8(http_date(secs).to_vec()).unwrap()
    }

    #[test]
    fn dates_are_imf_fixdates() {
        assert_eq!(date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(date(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT"); // RFC 9110's example
        assert_eq!(date(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT"); // a leap day
                                                                        // 2100 is not a leap year: the day after 28 February is 1 March.
        assert_eq!(date(4_107_542_399), "Sun, 28 Feb 2100 23:59:59 GMT");
        assert_eq!(date(4_107_542_400), "Mon, 01 Mar 2100 00:00:00 GMT");
    }

    #[test]
    fn heads_carry_the_length_and_say_when_the_connection_closes() {
        let resp = Response::text(200, "hi").with_header("X-A", "b");
        let mut out = Vec::new();
        write_head(&mut out, &resp, Version::Http11, false);
        let head = String::from_utf8(out).unwrap();
        assert!(head.starts_with("HTTP/1.1 200 OK\r\nDate: "), "{head}");
        assert!(head.contains("\r\nContent-Length: 2\r\n"), "{head}");
        assert!(head.contains("\r\nX-A: b\r\n"), "{head}");
        assert!(!head.contains("Connection"), "{head}");
        assert!(head.ends_with("\r\n\r\n"), "{head}");

        let mut out = Vec::new();
        write_head(&mut out, &Response::error(400), Version::Http11, true);
        let head = String::from_utf8(out).unwrap();
        assert!(head.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{head}");
        assert!(head.contains("\r\nConnection: close\r\n"), "{head}");

        let mut out = Vec::new();
        write_head(&mut out, &Response::new(200), Version::Http10, false);
        assert!(String::from_utf8(out)
            .unwrap()
            .contains("\r\nConnection: keep-alive\r\n"));
    }
}
