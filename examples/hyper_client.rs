//! A hyper 1.x client on ringsteal: fetches a URL over HTTP/1.1 and prints the status, the
//! headers and the body.
//!
//! ```text
//! cargo run --release --example hyper_server -- 127.0.0.1:8080 &
//! cargo run --release --example hyper_client -- http://127.0.0.1:8080/hello
//! ```
//!
//! The first argument is the URL (default `http://127.0.0.1:8080/`; `http` only: for TLS
//! see the `tls_echo` example).

use std::error::Error;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::Request;
use ringsteal::hyper::Io;
use ringsteal::net::TcpStream;
use ringsteal::Runtime;

fn main() {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "http://127.0.0.1:8080/".to_string());
    let rt = match Runtime::builder().shards(1).build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hyper_client: {e}");
            std::process::exit(1);
        }
    };
    match rt.block_on(fetch(&url)) {
        Ok((status, body)) => {
            println!("{status}");
            print!("{body}");
        }
        Err(e) => {
            eprintln!("hyper_client: {e}");
            std::process::exit(1);
        }
    }
}

/// GETs `url`; yields the status line's code and the body as text.
pub(crate) async fn fetch(url: &str) -> Result<(u16, String), Box<dyn Error + Send + Sync>> {
    let uri: hyper::Uri = url.parse()?;
    if uri.scheme_str() != Some("http") {
        return Err(format!("{url}: only http:// URLs are supported").into());
    }
    let host = uri.host().ok_or("the URL has no host")?;
    let port = uri.port_u16().unwrap_or(80);
    let stream = TcpStream::connect((host, port)).await?;
    // hyper's HTTP/1 client connection has no timeouts, so it takes no timer; its HTTP/2
    // builder and hyper-util's client do (`.timer(ringsteal::hyper::Timer::new())`).
    let (mut sender, conn) = hyper::client::conn::http1::handshake(Io::new(stream)).await?;
    // The connection is driven by its own task; the request and response go through it.
    let driver = ringsteal::spawn(conn);
    let authority = uri.authority().map_or(host.to_string(), |a| a.to_string());
    let req = Request::get(uri.path_and_query().map_or("/", |p| p.as_str()))
        .header(hyper::header::HOST, authority)
        .body(Empty::<Bytes>::new())?;
    let res = sender.send_request(req).await?;
    let status = res.status().as_u16();
    for (name, value) in res.headers() {
        eprintln!("{name}: {}", value.to_str().unwrap_or("<binary>"));
    }
    let body = res.into_body().collect().await?.to_bytes();
    drop(sender);
    driver.await??;
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}
