//! Helpers shared by the stream-of-completions tests (`op_stream*.rs`, `op_send_zc.rs`):
//! which path a runtime takes (native multishot, or a fallback the builder forces), loopback
//! socket pairs, a byte pattern that shows any lost, duplicated or reordered byte, and a
//! count of this process's open descriptors.

#![allow(dead_code, unreachable_pub)]

use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};

use ringsteal_rt::{Builder, Feature};

/// How a runtime serves streams of completions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Every feature the kernel has: multishot requests, provided buffers, zero-copy sends.
    Native,
    /// No multishot accept: single-shot accepts, one at a time.
    NoMultishotAccept,
    /// No multishot receive: single-shot receives into heap buffers.
    NoMultishotRecv,
    /// No provided-buffer rings: single-shot receives into heap buffers.
    NoBufferRing,
    /// No zero-copy send: plain sends.
    NoSendZc,
}

impl Path {
    /// The paths that change how connections are accepted.
    pub const ACCEPT: [Path; 2] = [Path::Native, Path::NoMultishotAccept];
    /// The paths that change how data is received.
    pub const RECV: [Path; 3] = [Path::Native, Path::NoMultishotRecv, Path::NoBufferRing];

    pub fn apply(self, b: Builder) -> Builder {
        match self {
            Path::Native => b,
            Path::NoMultishotAccept => b.without_feature(Feature::MultishotAccept),
            Path::NoMultishotRecv => b.without_feature(Feature::MultishotRecv),
            Path::NoBufferRing => b.without_feature(Feature::ProvidedBufferRing),
            Path::NoSendZc => b.without_feature(Feature::SendZc),
        }
    }

    /// True if receives on this path use provided buffers.
    pub fn provided_buffers(self) -> bool {
        !matches!(self, Path::NoMultishotRecv | Path::NoBufferRing)
    }
}

/// A listener on a free loopback port.
pub fn listener() -> (TcpListener, SocketAddr) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a loopback listener");
    let addr = l.local_addr().unwrap();
    (l, addr)
}

/// Two ends of one loopback TCP connection: (the accepted end, the connecting end).
pub fn tcp_pair() -> (TcpStream, TcpStream) {
    let (l, addr) = listener();
    let client = TcpStream::connect(addr).expect("connect over loopback");
    let (server, _) = l.accept().expect("accept over loopback");
    (server, client)
}

/// The byte at offset `i` of a test stream: neighbouring offsets, and offsets 256 apart,
/// differ, so a lost, repeated or swapped chunk of any length shows.
pub fn pattern(i: u64) -> u8 {
    let x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (x >> 56) as u8 ^ (i as u8)
}

/// `len` bytes of the pattern from offset `from`.
pub fn pattern_bytes(from: u64, len: usize) -> Vec<u8> {
    (from..from + len as u64).map(pattern).collect()
}

/// Writes `total` bytes of the pattern in chunks of `chunk`.
pub fn write_pattern(w: &mut impl Write, total: u64, chunk: usize) -> io::Result<()> {
    let mut at = 0;
    while at < total {
        let n = chunk.min((total - at) as usize);
        w.write_all(&pattern_bytes(at, n))?;
        at += n as u64;
    }
    Ok(())
}

/// Checks received bytes against the pattern, tracking the offset.
#[derive(Debug, Default)]
pub struct PatternCheck {
    pub offset: u64,
}

impl PatternCheck {
    /// Panics at the first byte that is not the pattern's.
    pub fn feed(&mut self, data: &[u8]) {
        for (k, &b) in data.iter().enumerate() {
            let at = self.offset + k as u64;
            assert_eq!(
                b,
                pattern(at),
                "byte {at} is not the stream's: data lost, repeated or reordered"
            );
        }
        self.offset += data.len() as u64;
    }
}

/// Descriptors this process has open now.
pub fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .expect("read /proc/self/fd")
        .count()
        // The directory handle read_dir itself holds.
        - 1
}
