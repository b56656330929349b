//! A small, correct HTTP/1.1 server core (and the client the tour and tests drive it with),
//! shared by the `http_server`, `file_server` and `graceful_shutdown` examples and the tour.
//!
//! * `request.rs`: [`parse_request`], the request-head parser, without I/O.
//! * `response.rs`: [`Response`] and [`Body`], and how a response head is written.
//! * `server.rs`: [`serve`], one connection from its first request to its close
//!   (keep-alive, pipelining, refusals, stopping).
//! * `client.rs`: [`parse_response_head`] and [`Client`].
//!
//! What it leaves out, on purpose: request bodies are discarded, not given to handlers, and
//! `Transfer-Encoding` (chunked request bodies) is answered with 501; no HTTP/2, no TLS.
//! Anything more (HTTP/2, TLS, streamed request bodies) wants a full HTTP stack.

mod client;
mod request;
mod response;
mod server;

pub use client::{parse_response_head, Client, ResponseHead};
pub use request::{parse_request, ParseError, Request, Version, MAX_HEAD};
pub use response::{reason, write_head, Body, Response};
pub use server::{serve, serve_with_idle_limit};
