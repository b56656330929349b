//! Owned buffers: every `IoBuf`/`IoBufMut` type ringsteal implements goes into an op and
//! comes back with the result, on success and on error alike. Reads fill a buffer from its
//! start up to its capacity and extend its initialised length; writes send its initialised
//! bytes. `.slice(range)` reads into and writes from the middle of a buffer and gives the
//! whole buffer back; the vectored forms fill and send a list of buffers in order.
//!
//! Files are real files in a fresh scratch directory, read back with std.

mod op_support;

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use ringsteal_rt::buf::{IoBuf, IoBufMut, Slice};
use ringsteal_rt::io::{InLane, Lane};
use ringsteal_rt::op::{self, SharedFd};

use op_support::*;

const TEXT: &[u8] = b"abcdefghijklmnopqrstuvwxyz";

/// A scratch file holding `contents`, and a descriptor open on it for reading and writing.
struct Scratch {
    _dir: TempDir,
    path: PathBuf,
    fd: SharedFd,
}

impl Scratch {
    fn new(contents: &[u8]) -> Self {
        let dir = TempDir::new("buffers");
        let path = dir.join("file");
        std::fs::write(&path, contents).unwrap();
        let f = File::options().read(true).write(true).open(&path).unwrap();
        Self {
            _dir: dir,
            path,
            fd: SharedFd::new(f.into()),
        }
    }

    fn contents(&self) -> Vec<u8> {
        std::fs::read(&self.path).unwrap()
    }

    /// The file opened read-only (writes fail with EBADF).
    fn read_only(&self) -> SharedFd {
        SharedFd::new(File::open(&self.path).unwrap().into())
    }

    /// The file opened write-only (reads fail with EBADF).
    fn write_only(&self) -> SharedFd {
        SharedFd::new(File::options().write(true).open(&self.path).unwrap().into())
    }

    /// The error std gives for a read through a write-only descriptor of this file.
    fn std_read_error(&self) -> io::Error {
        let f = File::options().write(true).open(&self.path).unwrap();
        f.read_at(&mut [0u8; 4], 0).unwrap_err()
    }

    /// The error std gives for a write through a read-only descriptor of this file.
    fn std_write_error(&self) -> io::Error {
        File::open(&self.path)
            .unwrap()
            .write_at(b"x", 0)
            .unwrap_err()
    }
}

fn same_error(ours: io::Error, std: &io::Error, what: &str) {
    assert_eq!(ours.kind(), std.kind(), "{what}: {ours} vs std's {std}");
    assert_eq!(ours.raw_os_error(), std.raw_os_error(), "{what}");
}

#[test]
fn a_vec_is_read_into_up_to_its_capacity_and_written_from_its_initialised_bytes() {
    for config in ALL_MODES {
        on_every_shard(config, |_| async {
            let s = Scratch::new(TEXT);
            let (res, buf) = op::read_at(&s.fd, Vec::with_capacity(10), 2).await;
            let n = res.unwrap();
            assert_eq!(n, buf.capacity().min(TEXT.len() - 2));
            assert_eq!(
                buf,
                &TEXT[2..2 + n],
                "the initialised length grew to what was read"
            );

            // Initialised bytes beyond what a read fills stay initialised (never shrinks).
            let mut long = vec![b'-'; 8];
            long.reserve_exact(0);
            let (res, buf) = op::read_at(&s.fd, long, 24).await;
            assert_eq!(res.unwrap(), 2);
            assert_eq!(buf, b"yz------");

            // A write sends the initialised bytes only, not the spare capacity.
            let mut v = Vec::with_capacity(100);
            v.extend_from_slice(b"1234");
            let (res, buf) = op::write_at(&s.fd, v, 0).await;
            assert_eq!(res.unwrap(), 4);
            assert_eq!(buf, b"1234");
            assert_eq!(&s.contents()[..6], b"1234ef");
        });
    }
}

#[test]
fn a_boxed_slice_and_an_array_are_read_into_and_written_whole() {
    for config in ALL_MODES {
        on_every_shard(config, |_| async {
            let s = Scratch::new(TEXT);
            let (res, buf) = op::read_at(&s.fd, vec![0u8; 5].into_boxed_slice(), 3).await;
            assert_eq!(res.unwrap(), 5);
            assert_eq!(&*buf, b"defgh");
            let (res, buf) = op::read_at(&s.fd, [0u8; 4], 20).await;
            assert_eq!(res.unwrap(), 4);
            assert_eq!(buf, *b"uvwx");
            // Past the end of the file: a short read leaves the rest as it was.
            let (res, buf) = op::read_at(&s.fd, [b'.'; 4], 24).await;
            assert_eq!(res.unwrap(), 2);
            assert_eq!(buf, *b"yz..");

            let (res, buf) = op::write_at(&s.fd, b"BOX".to_vec().into_boxed_slice(), 0).await;
            assert_eq!(res.unwrap(), 3);
            assert_eq!(&*buf, b"BOX");
            let (res, buf) = op::write_at(&s.fd, *b"ARR", 3).await;
            assert_eq!(res.unwrap(), 3);
            assert_eq!(buf, *b"ARR");
            assert_eq!(&s.contents()[..7], b"BOXARRg");
        });
    }
}

#[test]
fn strings_static_byte_slices_literals_and_static_strs_are_written_whole() {
    for config in ALL_MODES {
        on_every_shard(config, |_| async {
            let s = Scratch::new(b"");
            let mut string = String::with_capacity(64);
            string.push_str("string;");
            let (res, string) = op::write_at(&s.fd, string, 0).await;
            assert_eq!(
                res.unwrap(),
                7,
                "a String sends its bytes, not its capacity"
            );
            assert_eq!(string, "string;");
            let (res, bytes) = op::write_at(&s.fd, &b"bytes;"[..], 7).await;
            assert_eq!(res.unwrap(), 6);
            assert_eq!(bytes, b"bytes;");
            let (res, text) = op::write_at(&s.fd, "str", 13).await;
            assert_eq!(res.unwrap(), 3);
            assert_eq!(text, "str");
            // A byte-string literal as it is (`&'static [u8; N]`).
            let (res, literal) = op::write_at(&s.fd, b";lit", 16).await;
            assert_eq!(res.unwrap(), 4);
            assert_eq!(literal, b";lit");
            assert_eq!(s.contents(), b"string;bytes;str;lit");
        });
    }
}

#[test]
fn a_static_str_is_written_from_a_spawned_task() {
    // `spawn` needs the task to be Send for every lifetime the compiler erased in it: an op
    // that holds a `&'static str` is, since an op is Send when its data is.
    for config in ALL_MODES {
        on_every_shard(config, |_| async {
            let s = Scratch::new(b"");
            let fd = s.fd.clone();
            let written =
                ringsteal_rt::spawn(async move { op::write_at(&fd, "spawned", 0).await.0 })
                    .await
                    .unwrap();
            assert_eq!(written.unwrap(), 7);
            assert_eq!(s.contents(), b"spawned");
        });
    }
}

#[test]
fn a_slice_reads_into_the_middle_of_a_buffer_and_gives_the_whole_buffer_back() {
    for config in ALL_MODES {
        on_every_shard(config, |_| async {
            let s = Scratch::new(TEXT);
            let (res, slice) = op::read_at(&s.fd, vec![b'.'; 12].slice(4..8), 0).await;
            assert_eq!(res.unwrap(), 4);
            assert_eq!((slice.begin(), slice.end()), (4, 8));
            assert_eq!(slice.into_inner(), b"....abcd....");

            let boxed = vec![b'.'; 8].into_boxed_slice();
            let (res, slice) = op::read_at(&s.fd, boxed.slice(2..), 10).await;
            assert_eq!(res.unwrap(), 6);
            assert_eq!(&*slice.into_inner(), b"..klmnop");

            let (res, slice) = op::read_at(&s.fd, [b'.'; 8].slice(..=2), 23).await;
            assert_eq!(res.unwrap(), 3);
            assert_eq!(slice.into_inner(), *b"xyz.....");

            // A read into the middle of a partly initialised Vec: the initialised length
            // reaches the end of what was read.
            let mut v = Vec::with_capacity(16);
            v.extend_from_slice(b"12");
            let (res, slice) = op::read_at(&s.fd, v.slice(2..6), 0).await;
            assert_eq!(res.unwrap(), 4);
            assert_eq!(slice.into_inner(), b"12abcd");
        });
    }
}

#[test]
fn a_read_into_a_slice_past_a_vecs_initialised_bytes_never_exposes_uninitialised_memory() {
    for config in ALL_MODES {
        on_every_shard(config, |_| async {
            let s = Scratch::new(TEXT);
            // Capacity 16, nothing initialised; the memory holds stale bytes (0xAA).
            let mut v = vec![0xAAu8; 16];
            v.clear();
            let (res, slice) = op::read_at(&s.fd, v.slice(4..8), 0).await;
            assert_eq!(res.unwrap(), 4);
            let v = slice.into_inner();
            // The Vec may only claim bytes it really holds: the read bytes, and before them
            // the gap, which must read as zeros rather than whatever the memory held.
            assert_eq!(v.len(), 8);
            assert_eq!(v, b"\0\0\0\0abcd", "the gap before the slice was exposed");

            // A read of nothing into such a slice claims nothing.
            let (res, slice) = op::read_at(&s.fd, Vec::with_capacity(8).slice(4..8), 100).await;
            assert_eq!(res.unwrap(), 0);
            assert!(slice.into_inner().is_empty());
        });
    }
}

#[test]
fn a_slice_writes_from_the_middle_of_a_buffer_and_gives_the_whole_buffer_back() {
    for config in ALL_MODES {
        on_every_shard(config, |_| async {
            let s = Scratch::new(b"");
            let (res, slice) = op::write_at(&s.fd, b"0123456789".to_vec().slice(3..7), 0).await;
            assert_eq!(res.unwrap(), 4);
            assert_eq!(slice.into_inner(), b"0123456789");
            let (res, slice) = op::write_at(&s.fd, "static str".slice(7..), 4).await;
            assert_eq!(res.unwrap(), 3);
            assert_eq!(slice.into_inner(), "static str");
            let (res, slice) = op::write_at(&s.fd, String::from("a String").slice(..1), 7).await;
            assert_eq!(res.unwrap(), 1);
            assert_eq!(slice.into_inner(), "a String");
            // A slice reaching past the initialised bytes sends only initialised ones.
            let mut v = Vec::with_capacity(32);
            v.extend_from_slice(b"xyz");
            let (res, slice) = op::write_at(&s.fd, v.slice(1..20), 8).await;
            assert_eq!(res.unwrap(), 2);
            assert_eq!(slice.into_inner(), b"xyz");
            assert_eq!(s.contents(), b"3456strayz");
        });
    }
}

#[test]
fn every_buffer_comes_back_unchanged_when_its_read_fails() {
    for config in ALL_MODES {
        on_every_shard(config, |_| async {
            let s = Scratch::new(TEXT);
            let wo = s.write_only();
            let std_err = s.std_read_error();

            let (res, buf) = op::read_at(&wo, vec![1u8, 2], 0).await;
            same_error(res.unwrap_err(), &std_err, "Vec");
            assert_eq!(buf, [1, 2]);
            let (res, buf) = op::read_at(&wo, vec![3u8; 3].into_boxed_slice(), 0).await;
            same_error(res.unwrap_err(), &std_err, "Box<[u8]>");
            assert_eq!(&*buf, [3, 3, 3]);
            let (res, buf) = op::read_at(&wo, [4u8; 5], 0).await;
            same_error(res.unwrap_err(), &std_err, "[u8; 5]");
            assert_eq!(buf, [4; 5]);
            let (res, slice) = op::read_at(&wo, vec![5u8; 6].slice(1..3), 0).await;
            same_error(res.unwrap_err(), &std_err, "Slice<Vec<u8>>");
            assert_eq!(slice.into_inner(), [5; 6]);
            let (res, bufs) = op::readv_at(&wo, vec![vec![6u8], Vec::with_capacity(3)], 0).await;
            same_error(res.unwrap_err(), &std_err, "Vec<Vec<u8>>");
            assert_eq!(bufs, [vec![6u8], vec![]]);
            assert_eq!(bufs[1].capacity(), 3);
        });
    }
}

#[test]
fn every_buffer_comes_back_unchanged_when_its_write_fails() {
    for config in ALL_MODES {
        on_every_shard(config, |_| async {
            let s = Scratch::new(TEXT);
            let ro = s.read_only();
            let std_err = s.std_write_error();

            let (res, buf) = op::write_at(&ro, b"vec".to_vec(), 0).await;
            same_error(res.unwrap_err(), &std_err, "Vec");
            assert_eq!(buf, b"vec");
            let (res, buf) = op::write_at(&ro, b"box".to_vec().into_boxed_slice(), 0).await;
            same_error(res.unwrap_err(), &std_err, "Box<[u8]>");
            assert_eq!(&*buf, b"box");
            let (res, buf) = op::write_at(&ro, String::from("string"), 0).await;
            same_error(res.unwrap_err(), &std_err, "String");
            assert_eq!(buf, "string");
            let (res, buf) = op::write_at(&ro, &b"static"[..], 0).await;
            same_error(res.unwrap_err(), &std_err, "&'static [u8]");
            assert_eq!(buf, b"static");
            let (res, buf) = op::write_at(&ro, "str", 0).await;
            same_error(res.unwrap_err(), &std_err, "&'static str");
            assert_eq!(buf, "str");
            let (res, buf) = op::write_at(&ro, *b"arr", 0).await;
            same_error(res.unwrap_err(), &std_err, "[u8; 3]");
            assert_eq!(buf, *b"arr");
            let (res, slice) = op::write_at(&ro, b"sliced".to_vec().slice(1..4), 0).await;
            same_error(res.unwrap_err(), &std_err, "Slice<Vec<u8>>");
            assert_eq!(slice.into_inner(), b"sliced");
            let (res, bufs) = op::writev_at(&ro, vec!["a", "b"], 0).await;
            same_error(res.unwrap_err(), &std_err, "Vec<&str>");
            assert_eq!(bufs, ["a", "b"]);
            assert_eq!(s.contents(), TEXT, "nothing was written");
        });
    }
}

#[test]
fn vectored_writes_send_the_buffers_in_order() {
    for config in ALL_MODES {
        on_every_shard(config, |_| async {
            let s = Scratch::new(b"");
            let bufs = vec![b"ab".to_vec(), Vec::new(), b"cde".to_vec(), b"f".to_vec()];
            let (res, bufs) = op::writev_at(&s.fd, bufs, 0).await;
            assert_eq!(res.unwrap(), 6);
            assert_eq!(bufs.concat(), b"abcdef");
            let (res, _) = op::writev_at(&s.fd, vec![*b"gh", *b"ij"], 6).await;
            assert_eq!(res.unwrap(), 4);
            let (res, _) = op::writev_at(&s.fd, vec!["kl", "m"], 10).await;
            assert_eq!(res.unwrap(), 3);
            let slices = vec![b"XnX".to_vec().slice(1..2), b"XXop".to_vec().slice(2..)];
            let (res, slices) = op::writev_at(&s.fd, slices, 13).await;
            assert_eq!(res.unwrap(), 3);
            let whole: Vec<Vec<u8>> = slices.into_iter().map(Slice::into_inner).collect();
            assert_eq!(whole, [b"XnX".to_vec(), b"XXop".to_vec()]);
            assert_eq!(s.contents(), b"abcdefghijklmnop");
        });
    }
}

#[test]
fn vectored_reads_fill_the_buffers_in_order() {
    for config in ALL_MODES {
        on_every_shard(config, |_| async {
            let s = Scratch::new(TEXT);
            let bufs = vec![
                Vec::with_capacity(2),
                Vec::with_capacity(3),
                Vec::with_capacity(64),
            ];
            let (res, bufs) = op::readv_at(&s.fd, bufs, 20).await;
            assert_eq!(res.unwrap(), 6);
            assert_eq!(bufs[0], b"uv");
            assert_eq!(bufs[1], b"wxy");
            assert_eq!(bufs[2], b"z", "the short read ends in the last buffer");

            let (res, bufs) = op::readv_at(&s.fd, vec![[0u8; 2], [0u8; 2]], 0).await;
            assert_eq!(res.unwrap(), 4);
            assert_eq!(bufs, [*b"ab", *b"cd"]);

            let boxes = vec![
                vec![0u8; 1].into_boxed_slice(),
                vec![0u8; 2].into_boxed_slice(),
            ];
            let (res, boxes) = op::readv_at(&s.fd, boxes, 4).await;
            assert_eq!(res.unwrap(), 3);
            assert_eq!((&*boxes[0], &*boxes[1]), (&b"e"[..], &b"fg"[..]));

            let slices = vec![vec![b'.'; 4].slice(1..3), vec![b'.'; 3].slice(2..)];
            let (res, slices) = op::readv_at(&s.fd, slices, 7).await;
            assert_eq!(res.unwrap(), 3);
            let whole: Vec<Vec<u8>> = slices.into_iter().map(Slice::into_inner).collect();
            assert_eq!(whole, [b".hi.".to_vec(), b"..j".to_vec()]);

            // At the end of the file nothing is read and nothing is marked initialised.
            let (res, bufs) = op::readv_at(&s.fd, vec![Vec::<u8>::with_capacity(4)], 26).await;
            assert_eq!(res.unwrap(), 0);
            assert!(bufs[0].is_empty());
        });
    }
}

#[test]
fn empty_buffers_read_and_write_nothing() {
    for config in ALL_MODES {
        on_every_shard(config, |_| async {
            let s = Scratch::new(TEXT);
            let (res, buf) = op::read_at(&s.fd, Vec::new(), 0).await;
            assert_eq!(res.unwrap(), 0);
            assert!(buf.is_empty());
            let (res, _) = op::read_at(&s.fd, [0u8; 0], 0).await;
            assert_eq!(res.unwrap(), 0);
            let (res, _) = op::write_at(&s.fd, Vec::new(), 0).await;
            assert_eq!(res.unwrap(), 0);
            let (res, _) = op::write_at(&s.fd, "", 0).await;
            assert_eq!(res.unwrap(), 0);
            let (res, _) = op::readv_at(&s.fd, Vec::<Vec<u8>>::new(), 0).await;
            assert_eq!(res.unwrap(), 0);
            let (res, _) = op::writev_at(&s.fd, Vec::<Vec<u8>>::new(), 0).await;
            assert_eq!(res.unwrap(), 0);
            assert_eq!(s.contents(), TEXT);
        });
    }
}

/// `IoBufMut::set_init` never shrinks, and the traits are usable by user code.
#[test]
fn set_init_only_grows_the_initialised_length() {
    let mut v = b"abc".to_vec();
    // SAFETY: 2 <= 3 bytes are initialised.
    unsafe { v.set_init(2) };
    assert_eq!(v.bytes_init(), 3);
    assert_eq!(v.bytes_total(), v.capacity());
}

#[test]
fn a_truncating_receive_reports_the_datagram_length_and_fills_only_the_buffer() {
    for config in ALL_MODES {
        on_every_shard(config, |_| async {
            let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            tx.send_to(TEXT, rx.local_addr().unwrap()).unwrap();
            let rx = SharedFd::new(rx.into());
            // `MSG_TRUNC`: the kernel answers with the datagram's length, 26, for 8 bytes of
            // room; the buffer must end up with 8 initialised bytes, not 26.
            let (res, buf) = op::recv(&rx, Vec::with_capacity(8), libc::MSG_TRUNC).await;
            assert_eq!(res.unwrap(), TEXT.len());
            assert!(
                buf.len() <= buf.capacity(),
                "{} > {}",
                buf.len(),
                buf.capacity()
            );
            assert_eq!(buf, &TEXT[..buf.capacity()]);
            // Vectored: the same, across the buffers.
            tx.send_to(TEXT, local_addr(&rx)).unwrap();
            let bufs = vec![Vec::with_capacity(4), Vec::with_capacity(4)];
            let (res, bufs) = op::recvv(&rx, bufs, libc::MSG_TRUNC).await;
            assert_eq!(res.unwrap(), TEXT.len());
            assert_eq!(
                bufs.concat(),
                &TEXT[..bufs[0].capacity() + bufs[1].capacity()]
            );
            // Dropped after it received, in a lane: what the lane keeps is what the buffer
            // holds, not the datagram's whole length.
            tx.send_to(TEXT, local_addr(&rx)).unwrap();
            let lane = Lane::new();
            let read = InLane::read(
                op::RecvOp::new(&rx, Vec::with_capacity(8), libc::MSG_TRUNC),
                lane.acquire().await,
            );
            let mut read = Box::pin(read);
            let polled = std::future::poll_fn(|cx| {
                std::task::Poll::Ready(std::future::Future::poll(read.as_mut(), cx).is_ready())
            })
            .await;
            assert!(!polled, "completed in its first poll");
            op::nop().await.unwrap(); // the receive's completion is reaped before the NOP's
            drop(read);
            let mut guard = lane.acquire().await;
            let (n, kept) = guard.take_leftover(Vec::with_capacity(64));
            assert_eq!(&kept[..n], &TEXT[..8], "kept bytes of a truncated datagram");
        });
    }
}

#[test]
fn a_truncating_receive_on_a_stream_marks_only_zeroed_bytes() {
    for config in ALL_MODES {
        on_every_shard(config, |_| async {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let mut tx = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let (rx, _) = listener.accept().unwrap();
            std::io::Write::write_all(&mut tx, b"discarded").unwrap();
            let rx = SharedFd::new(rx.into());
            // A buffer whose spare room holds old bytes: TCP discards what `MSG_TRUNC`
            // receives without writing it, so what the buffer then shows as received must
            // be bytes the runtime wrote (zeros), not the old ones.
            let mut old = vec![0xAAu8; 16];
            old.clear();
            let (res, buf) = op::recv(&rx, old, libc::MSG_TRUNC).await;
            let n = res.unwrap();
            assert!(n > 0 && n <= 9, "{n}");
            assert_eq!(buf, vec![0u8; n], "bytes never written shown as received");
        });
    }
}

/// The local address of the socket `fd` (a bound UDP socket here).
fn local_addr(fd: &SharedFd) -> std::net::SocketAddr {
    use std::os::fd::AsRawFd;
    // SAFETY: borrowed for the call only; `ManuallyDrop` keeps it from closing `fd`.
    let s = std::mem::ManuallyDrop::new(unsafe {
        <std::net::UdpSocket as std::os::fd::FromRawFd>::from_raw_fd(fd.as_raw_fd())
    });
    s.local_addr().unwrap()
}
