//! A hyper 1.x client on ringsteal: fetches a URL over HTTP/1.1 and prints the status line,
//! the headers and the body, as `curl -i` does.
//!
//! ```text
//! cargo run --release --example hyper_server -- 127.0.0.1:8080 &
//! cargo run --release --example hyper_client -- http://127.0.0.1:8080/hello
//! ```
//!
//! The first argument is the URL (default `http://127.0.0.1:8080/`; `http` only: for TLS
//! see the `tls_echo` example). A URL it cannot fetch is an error and a non-zero status.

use std::error::Error;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::Request;
use ringsteal::hyper::Io;
use ringsteal::net::TcpStream;
use ringsteal_examples::cli;

const USAGE: &str = "hyper_client [URL]    (an http:// URL; defaults to http://127.0.0.1:8080/)";

#[ringsteal::main(shards = 1)]
async fn main() {
    let args = cli::args(USAGE, 1);
    let url = args
        .first()
        .map_or("http://127.0.0.1:8080/", String::as_str);
    let uri: hyper::Uri = url
        .parse()
        .unwrap_or_else(|e| cli::usage_error(USAGE, format_args!("{url:?}: {e}")));
    if uri.scheme_str() != Some("http") || uri.host().is_none() {
        cli::usage_error(USAGE, format_args!("{url}: not an http:// URL with a host"));
    }
    if let Err(e) = fetch(&uri).await {
        cli::fail(USAGE, format_args!("cannot fetch {url}: {e}"));
    }
}

/// GETs `uri` and prints the response.
async fn fetch(uri: &hyper::Uri) -> Result<(), Box<dyn Error + Send + Sync>> {
    let host = uri.host().ok_or("the URL has no host")?;
    let stream = TcpStream::connect((host, uri.port_u16().unwrap_or(80))).await?;
    // hyper's HTTP/1 client connection has no timeouts, so it takes no timer; its HTTP/2
    // builder and hyper-util's client do (`.timer(ringsteal::hyper::Timer::new())`).
    let (mut sender, conn) = hyper::client::conn::http1::handshake(Io::new(stream)).await?;
    // The connection is driven by its own task; the request and response go through it.
    let driver = ringsteal::spawn(conn);
    let authority = uri.authority().map_or(host, |a| a.as_str());
    let req = Request::get(uri.path_and_query().map_or("/", |p| p.as_str()))
        .header(hyper::header::HOST, authority)
        .body(Empty::<Bytes>::new())?;
    let res = sender.send_request(req).await?;
    println!("{:?} {}", res.version(), res.status());
    for (name, value) in res.headers() {
        println!("{name}: {}", value.to_str().unwrap_or("<binary>"));
    }
    println!();
    let body = res.into_body().collect().await?.to_bytes();
    print!("{}", String::from_utf8_lossy(&body));
    drop(sender);
    driver.await??;
    Ok(())
}
