//! A small HTTP/1.1 server on ringsteal (`server`) and its request parser (`parse`, also used
//! by the tokio, std and raw io_uring servers of the benchmarks).

pub mod parse;
pub mod server;
