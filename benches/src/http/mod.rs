//! The HTTP/1.1 server of `examples/http_server`, included here as it is (both files depend
//! on nothing but `std` and `ringsteal`), so the benchmarks load the example's own code:
//!
//! - [`parse`]: the hand-written request parser and the responses of the two routes,
//!   runtime-agnostic; the tokio, std and raw io_uring servers of the benchmarks answer with
//!   it too, so every server compared runs the same request handling (`handle_requests`);
//! - [`server`]: the ringsteal server, written the way the book's quick start writes one
//!   (`incoming()`, a `ringsteal::spawn` per connection).

#[path = "../../../examples/http_server/parse.rs"]
pub mod parse;
#[path = "../../../examples/http_server/server.rs"]
pub mod server;
