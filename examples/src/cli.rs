//! What every example does with its command line: read its arguments, and on a bad one (a
//! missing file, a port in use, a number that is not one) print what went wrong and a usage
//! line, then exit with a non-zero status instead of panicking; and how a server that stops
//! on a signal ends ([`serve_until`]).
//!
//! Owns: argument reading, the error exit and a server's end. May not: run a runtime.

use std::fmt::Display;
use std::future::Future;
use std::str::FromStr;
use std::time::Duration;

use ringsteal::fs::File;
use ringsteal::net::TcpListener;

use crate::future::{race, Either};

/// Where a server example listens when given no address.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";

/// Status for a bad command line (what shells and most tools use for usage errors).
pub const EXIT_USAGE: i32 = 2;

/// Status for a failure at run time (cannot listen, cannot read a file).
pub const EXIT_FAILURE: i32 = 1;

/// The program's arguments (without the program name), as UTF-8 strings; more than `most`
/// of them, or one that is not UTF-8, ends the program with a usage error.
pub fn args(usage: &str, most: usize) -> Vec<String> {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| {
            a.into_string()
                .unwrap_or_else(|a| usage_error(usage, format!("{a:?} is not UTF-8")))
        })
        .collect();
    if args.len() > most {
        usage_error(usage, "too many arguments");
    }
    args
}

/// Argument `i` parsed as a `T`, or `default` when there are fewer arguments.
pub fn arg_or<T: FromStr>(args: &[String], i: usize, default: T, usage: &str) -> T
where
    T::Err: Display,
{
    match args.get(i) {
        None => default,
        Some(text) => text
            .parse()
            .unwrap_or_else(|e| usage_error(usage, format!("{text:?}: {e}"))),
    }
}

/// Argument `i`, which must be there.
pub fn required<'a>(args: &'a [String], i: usize, what: &str, usage: &str) -> &'a str {
    args.get(i)
        .map(String::as_str)
        .unwrap_or_else(|| usage_error(usage, format!("missing {what}")))
}

/// The listen address of a server example: its first argument, or [`DEFAULT_ADDR`].
pub fn listen_addr(args: &[String]) -> &str {
    args.first().map_or(DEFAULT_ADDR, String::as_str)
}

/// Listens on `addr` and prints `listening on ADDR` with the address actually bound (so
/// that port 0 shows the port it got); an address that cannot be had (in use, not local,
/// not an address) ends the program with [`fail`].
pub async fn listen(addr: &str, usage: &str) -> TcpListener {
    let listener = match TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(e) => fail(usage, format_args!("cannot listen on {addr}: {e}")),
    };
    match listener.local_addr() {
        Ok(bound) => println!("listening on {bound}"),
        Err(e) => fail(usage, e),
    }
    listener
}

/// Runs a server's accept loop `serve` until `stop` (a shutdown signal, created before the
/// server said it listens, so that an early signal is heard) completes, then prints
/// `stopped by SIGNAL` and returns. An accept loop that ends (the listener stopped
/// accepting) or signals that cannot be listened for end the program with [`fail`].
pub async fn serve_until<S: Display>(
    stop: impl Future<Output = std::io::Result<S>>,
    serve: impl Future<Output = ()>,
    usage: &str,
) {
    match race(stop, serve).await {
        Either::Left(Ok(signal)) => println!("stopped by {signal}"),
        Either::Left(Err(e)) => fail(usage, format_args!("cannot listen for signals: {e}")),
        Either::Right(()) => fail(usage, "the listener stopped accepting connections"),
    }
}

/// What an accept loop does when `accept` fails (out of descriptors, say): report it and
/// pause briefly, rather than spin on the same error.
pub async fn accept_failed(e: std::io::Error) {
    eprintln!("accept failed: {e}");
    ringsteal::time::sleep(Duration::from_millis(10)).await;
}

/// Opens the file an argument names, or ends the program with [`fail`].
pub async fn open(path: &str, usage: &str) -> File {
    File::open(path)
        .await
        .unwrap_or_else(|e| fail(usage, format_args!("cannot open {path}: {e}")))
}

/// Prints `error: {what}` and the usage line to stderr, and exits with [`EXIT_USAGE`].
pub fn usage_error(usage: &str, what: impl Display) -> ! {
    eprintln!("error: {what}");
    eprintln!("usage: {usage}");
    std::process::exit(EXIT_USAGE)
}

/// Prints `error: {what}` and the usage line to stderr, and exits with [`EXIT_FAILURE`]:
/// for an argument that was well formed but did not work (a file that does not exist, an
/// address already in use).
pub fn fail(usage: &str, what: impl Display) -> ! {
    eprintln!("error: {what}");
    eprintln!("usage: {usage}");
    std::process::exit(EXIT_FAILURE)
}
