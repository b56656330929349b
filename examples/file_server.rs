//! A static file server: serves a directory over HTTP/1.1.
//!
//! Shows files and sockets together: each request's file is opened, measured and read
//! through the ring, and sent in 64 KiB chunks with the exact `Content-Length` (a `HEAD`
//! request gets the length without the bytes). A directory gets its `index.html` or a
//! listing; a missing file 404. Each connection is a plain `spawn` after the `accept`,
//! dealt to the shards in turn (ADR-0009), so its file reads run on that shard's ring.
//!
//! It never serves anything outside the directory: the path is percent-decoded first (so
//! `%2e%2e` is `..`), any `..` segment is refused with 404, and a symlink is followed only
//! if it resolves inside the directory. Only regular files are served (opened with
//! `O_NONBLOCK`, so that a FIFO cannot stall the open). Limits: the symlink check and the
//! open are two steps, so someone who can write to the served directory could swap a
//! directory for a symlink between them; `openat2` with `RESOLVE_BENEATH` closes that gap.
//!
//! Try:
//!
//! ```text
//! cargo run --release --example file_server -- 127.0.0.1:8080 .
//! curl -sI http://127.0.0.1:8080/Cargo.toml                  # HEAD: the length
//! curl -s http://127.0.0.1:8080/examples/ | head             # a listing
//! curl -s --path-as-is http://127.0.0.1:8080/../etc/passwd   # 404
//! cargo run --example file_server -- 127.0.0.1:8080 /no/such/dir   # an error and the usage
//! ```

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::io::ErrorKind;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ringsteal::fs::{self, File};
use ringsteal_examples::cli;
use ringsteal_examples::http::{self, Body, Request, Response};

/// A client silent this long (between requests, or in the middle of one) is closed, so
/// idle or trickling connections cannot hold every descriptor.
const IDLE: std::time::Duration = std::time::Duration::from_secs(30);

const USAGE: &str = "file_server [ADDR] [DIR]    (defaults: 127.0.0.1:8080 and the current directory; port 0 picks a free one)";

#[ringsteal::main]
async fn main() {
    let args = cli::args(USAGE, 2);
    let addr = cli::listen_addr(&args);
    let dir = args.get(1).map_or(".", String::as_str);
    let root = match fs::canonicalize(dir).await {
        Ok(root) => root,
        Err(e) => cli::fail(USAGE, format_args!("cannot serve {dir}: {e}")),
    };
    match fs::metadata(&root).await {
        Ok(m) if m.is_dir() => {}
        Ok(_) => cli::fail(USAGE, format_args!("{dir} is not a directory")),
        Err(e) => cli::fail(USAGE, format_args!("cannot serve {dir}: {e}")),
    }
    let listener = cli::listen(addr, USAGE).await;
    println!("serving {}", root.display());

    let root = Arc::new(root);
    loop {
        match listener.accept().await {
            Ok((stream, _peer)) => {
                let root = root.clone();
                drop(ringsteal::spawn(async move {
                    let handler = |req: Request| {
                        let root = root.clone();
                        async move { respond(&root, req).await }
                    };
                    let _ = http::serve_with_idle_limit(stream, &handler, None, IDLE).await;
                }));
            }
            Err(e) => cli::accept_failed(e).await,
        }
    }
}

/// The response to one request for something under `root` (a canonical path).
async fn respond(root: &Path, req: Request) -> Response {
    if req.method != "GET" && req.method != "HEAD" {
        return Response::error(405).with_header("Allow", "GET, HEAD");
    }
    let Some(relative) = relative_path(req.path()) else {
        return Response::error(404);
    };
    // Follow symlinks, then make sure the result is still inside the root.
    let real = match fs::canonicalize(root.join(&relative)).await {
        Ok(real) if real.starts_with(root) => real,
        Ok(_) => return Response::error(404),
        Err(e) => return error_response(&e),
    };
    let meta = match fs::metadata(&real).await {
        Ok(meta) => meta,
        Err(e) => return error_response(&e),
    };
    if meta.is_dir() {
        if !req.path().ends_with('/') {
            // So that relative links inside the directory's page resolve under it. One
            // leading slash only: `//sub/` would be a link to the host `sub`.
            let location = format!("/{}/", req.path().trim_start_matches('/'));
            return Response::error(301).with_header("Location", location);
        }
        return match open_regular(&real.join("index.html")).await {
            Ok((file, len)) => file_response(file, len, "index.html"),
            Err(_) => listing(&real, req.path()).await,
        };
    }
    match open_regular(&real).await {
        Ok((file, len)) => file_response(file, len, &real.to_string_lossy()),
        Err(e) => error_response(&e),
    }
}

/// The path of a request relative to the root, or `None` if it is not one that may be
/// served: not absolute, a bad percent escape, a NUL, or a `..` segment anywhere.
fn relative_path(url_path: &str) -> Option<PathBuf> {
    let decoded = percent_decode(url_path.strip_prefix('/')?)?;
    let mut relative = PathBuf::new();
    for segment in decoded.split(|&b| b == b'/') {
        match segment {
            b"" | b"." => {}
            b".." => return None,
            name if name.contains(&0) => return None,
            name => relative.push(OsStr::from_bytes(name)),
        }
    }
    Some(relative)
}

/// `%XX` escapes decoded; `None` for a malformed escape.
fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len());
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hi = (bytes.next()? as char).to_digit(16)?;
            let lo = (bytes.next()? as char).to_digit(16)?;
            out.push((hi * 16 + lo) as u8);
        } else {
            out.push(b);
        }
    }
    Some(out)
}

/// Opens `path` if it is a regular file; returns it with its length, both taken from the
/// open file (so the length is the length of what is sent, whatever happens to the path).
async fn open_regular(path: &Path) -> std::io::Result<(File, u64)> {
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .await?;
    let meta = file.metadata().await?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            ErrorKind::NotFound,
            "not a regular file",
        ));
    }
    Ok((file, meta.len()))
}

fn file_response(file: File, len: u64, name: &str) -> Response {
    Response {
        status: 200,
        headers: vec![("Content-Type", content_type(name).to_owned())],
        body: Body::File { file, len },
    }
}

fn error_response(e: &std::io::Error) -> Response {
    Response::error(match e.kind() {
        ErrorKind::PermissionDenied => 403,
        ErrorKind::NotFound => 404,
        // ENOTDIR ("a/file/b"), a name too long, and the like: there is nothing there.
        _ if e.raw_os_error().is_some() => 404,
        _ => 500,
    })
}

/// An HTML page listing the directory `dir`, requested as `url_path` (ending in `/`).
async fn listing(dir: &Path, url_path: &str) -> Response {
    let mut entries = match fs::read_dir(dir).await {
        Ok(entries) => entries,
        Err(e) => return error_response(&e),
    };
    let mut names = Vec::new();
    loop {
        match entries.next_entry().await {
            Ok(Some(entry)) => {
                let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
                let mut name = entry.file_name().to_string_lossy().into_owned();
                if is_dir {
                    name.push('/');
                }
                names.push(name);
            }
            Ok(None) => break,
            Err(e) => return error_response(&e),
        }
    }
    names.sort();
    let title = html_escape(url_path);
    let mut page = format!("<!doctype html>\n<title>{title}</title>\n<h1>{title}</h1>\n<ul>\n");
    for name in names {
        let _ = writeln!(
            page,
            "<li><a href=\"{}\">{}</a></li>",
            percent_encode(&name),
            html_escape(&name)
        );
    }
    page.push_str("</ul>\n");
    Response {
        status: 200,
        headers: vec![("Content-Type", "text/html; charset=utf-8".to_owned())],
        body: Body::Bytes(page.into_bytes()),
    }
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Escapes everything but unreserved characters and `/`, for a relative link.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

fn content_type(name: &str) -> &'static str {
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    match ext.to_ascii_lowercase().as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "txt" | "md" | "rs" | "toml" | "lock" | "sh" => "text/plain; charset=utf-8",
        "css" => "text/css",
        "js" => "text/javascript",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "wasm" => "application/wasm",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}
