//! The HTTP side of the http groups, built on the library of `examples/http_server`
//! (`ringsteal_examples::http`: its parser, response type and head writer), so every server
//! compared answers with the same code:
//!
//! - [`app`]: the application ([`app::route`]: `GET /` is `examples/http_server`'s greeting,
//!   `GET /bytes/N` the larger responses) and, for the servers on other runtimes (tokio, std
//!   threads, raw io_uring), the per-read step [`app::Requests`], which does what
//!   `ringsteal_examples::http::serve` does with each read;
//! - [`server`]: the ringsteal server, `examples/http_server`'s accept loop as it is
//!   (`incoming()`, a plain `ringsteal::spawn` per connection), serving with `http::serve`,
//!   that is without the example's 30 s idle limit (no other server compared has one), and
//!   optionally reading through a receive stream ([`recv_stream_io`]).

pub mod app;
pub mod recv_stream_io;
pub mod server;
