//! Networking operations: one file per opcode family. Each is the io_uring implementation of
//! its family; a readiness (epoll) backend would sit beside these files and keep their
//! signatures, so `ringsteal-net` above does not change.
//!
//! Addresses live in the op ([`SockAddr`]); sends always carry `MSG_NOSIGNAL`. Which opcodes
//! the kernel has is asked in one place, `support.rs`.

mod accept;
mod addr;
mod connect;
mod msg;
mod send_recv;
mod shutdown;
mod socket;
mod splice;
mod truncating;

pub use accept::{accept, Accept};
pub use addr::SockAddr;
pub use connect::{connect, Connect};
pub use msg::{recv_from, recvv, send_to, sendv, RecvFrom, RecvVectored, SendTo, SendVectored};
pub use send_recv::{recv, send, RecvOp, SendOp};
pub use shutdown::{shutdown, Shutdown};
pub use socket::{socket, socket_now, Socket};
pub use splice::{splice, Splice};
