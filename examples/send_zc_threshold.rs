//! A measuring harness, not a tutorial: plain sends against zero-copy sends
//! (`IORING_OP_SEND_ZC`) by message size over TCP, for the threshold of
//! `ringsteal::net::SEND_ZC_MIN` (ADR-0008 has the figures).
//!
//! ```text
//! send_zc_threshold [ADDRESS|loopback] [MIB_PER_POINT]
//! ```
//!
//! With `loopback` (the default) it sends over loopback to a reader thread of its own; with one it
//! connects there (run `nc -lk PORT > /dev/null`, or any sink, on another host to measure
//! a real NIC). For each size, two shapes, each with plain and zero-copy sends, on a
//! one-shard runtime: **stream** (messages back to back; MB/s and the sending thread's CPU
//! per MiB) and, over loopback only, **ping-pong** (one message, then a one-byte reply:
//! microseconds per round trip).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use ringsteal::buf::IoBuf;
use ringsteal::op::{self, SharedFd};
use ringsteal_examples::cli;

const SIZES: [usize; 10] = [
    1 << 10,
    2 << 10,
    4 << 10,
    8 << 10,
    16 << 10,
    32 << 10,
    64 << 10,
    128 << 10,
    256 << 10,
    1 << 20,
];

/// CPU time (user + system) of the calling thread.
fn thread_cpu() -> Duration {
    // SAFETY: an all-zero rusage is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes the local struct.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Sends all of `buf`, zero-copy or not.
async fn send_all(fd: &SharedFd, buf: Vec<u8>, zero_copy: bool) -> Vec<u8> {
    let len = buf.len();
    let mut buf = buf;
    let mut done = 0;
    while done < len {
        let (res, slice) = if zero_copy {
            op::send_zc(fd, buf.slice(done..)).await
        } else {
            op::send(fd, buf.slice(done..), 0).await
        };
        buf = slice.into_inner();
        done += res.expect("send");
    }
    buf
}

fn connect_to(addr: SocketAddr) -> std::net::TcpStream {
    let s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_nodelay(true).unwrap();
    s
}

/// A loopback connection whose far end drains everything (or, in ping-pong, answers each
/// `size`-byte message with one byte) on a thread of its own.
fn loopback(ping_pong: Option<usize>) -> std::net::TcpStream {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let tx = connect_to(l.local_addr().unwrap());
    let (mut rx, _) = l.accept().unwrap();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; ping_pong.unwrap_or(1 << 20)];
        loop {
            let got = match ping_pong {
                Some(_) => rx.read_exact(&mut buf).map(|()| buf.len()),
                None => rx.read(&mut buf),
            };
            match got {
                Ok(0) | Err(_) => return,
                Ok(_) if ping_pong.is_some() => {
                    if rx.write_all(b"k").is_err() {
                        return;
                    }
                }
                Ok(_) => {}
            }
        }
    });
    tx
}

const USAGE: &str =
    "send_zc_threshold [ADDRESS|loopback] [MIB_PER_POINT]    (defaults: loopback, 256)";

fn main() {
    let args = cli::args(USAGE, 2);
    let remote: Option<SocketAddr> = args.first().filter(|a| *a != "loopback").map(|a| {
        a.parse()
            .unwrap_or_else(|e| cli::usage_error(USAGE, format_args!("{a:?}: {e}")))
    });
    let mib: usize = cli::arg_or(&args, 1, 256, USAGE);
    if mib == 0 {
        cli::usage_error(USAGE, "MIB_PER_POINT: at least 1");
    }
    let rt = ringsteal::Runtime::builder()
        .shards(1)
        .build()
        .unwrap_or_else(|e| cli::fail(USAGE, e));
    if !rt.features().supports(ringsteal::Feature::SendZc) {
        eprintln!("this kernel has no IORING_OP_SEND_ZC");
        std::process::exit(1);
    }
    println!("size, shape, plain, zero-copy, plain CPU/MiB, zero-copy CPU/MiB");
    for size in SIZES {
        let mut row = Vec::new();
        for zero_copy in [false, true] {
            let tx = match remote {
                Some(a) => connect_to(a),
                None => loopback(None),
            };
            let fd = SharedFd::new(tx.into());
            let messages = (mib << 20) / size;
            let (wall, cpu) = rt.block_on(async {
                let mut buf = vec![0x5au8; size];
                let (t0, c0) = (Instant::now(), thread_cpu());
                for _ in 0..messages {
                    buf = send_all(&fd, buf, zero_copy).await;
                }
                (t0.elapsed(), thread_cpu() - c0)
            });
            let bytes = (messages * size) as f64;
            row.push((
                bytes / wall.as_secs_f64() / 1e6,
                cpu.as_secs_f64() * 1e3 / (bytes / (1 << 20) as f64),
            ));
        }
        println!(
            "{size}, stream, {:.0} MB/s, {:.0} MB/s, {:.3} ms, {:.3} ms",
            row[0].0, row[1].0, row[0].1, row[1].1
        );
        if remote.is_some() {
            continue;
        }
        let mut rtt = Vec::new();
        for zero_copy in [false, true] {
            let tx = loopback(Some(size));
            let fd = SharedFd::new(tx.into());
            let rounds = ((mib << 20) / size / 8).clamp(200, 20_000);
            let per = rt.block_on(async {
                let mut buf = vec![0x5au8; size];
                let t0 = Instant::now();
                for _ in 0..rounds {
                    buf = send_all(&fd, buf, zero_copy).await;
                    let (res, _) = op::recv(&fd, Vec::with_capacity(1), 0).await;
                    assert_eq!(res.expect("reply"), 1);
                }
                t0.elapsed() / rounds as u32
            });
            rtt.push(per.as_secs_f64() * 1e6);
        }
        println!(
            "{size}, ping-pong, {:.1} us, {:.1} us, -, -",
            rtt[0], rtt[1]
        );
    }
}
