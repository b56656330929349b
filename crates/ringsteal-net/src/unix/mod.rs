//! Unix-domain sockets: [`UnixListener`], [`UnixStream`] and its halves, [`UnixDatagram`],
//! and their [`SocketAddr`]. A path whose first byte is NUL names an abstract socket
//! (Linux; tokio refuses such a path, std names one with `SocketAddr::from_abstract_name`).

mod addr;
mod datagram;
mod listener;
mod split;
mod stream;
mod ucred;

pub use addr::SocketAddr;
pub use datagram::UnixDatagram;
pub use listener::UnixListener;
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, WriteHalf};
pub use stream::UnixStream;
pub use ucred::UCred;
