//! TCP: [`TcpListener`], [`TcpStream`] and its halves, [`TcpSocket`] for options set before
//! `bind`/`connect`/`listen`.

mod listener;
mod socket;
mod split;
mod stream;

pub use listener::TcpListener;
pub use socket::TcpSocket;
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, WriteHalf};
pub use stream::TcpStream;
