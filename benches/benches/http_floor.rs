//! The floor of the http groups: an HTTP/1.1 server on raw io_uring with no runtime.
//!
//! `threads` threads, each with its own ring (`SINGLE_ISSUER | DEFER_TASKRUN` where the
//! kernel takes them) and its own listening socket on one shared port (`SO_REUSEPORT`: the
//! kernel spreads the connections over the listeners; backlog 1,024 like every server).
//! Each thread keeps one single-shot `ACCEPT` armed and, per connection, one request at a
//! time: a `RECV` into the connection's buffer, then after answering with the shared request
//! step (`app::Requests`: the parser, routes and head writer of `examples/http_server`, as
//! every server of the groups) a `SEND` of the answers, then the next `RECV`. No multishot, no provided buffers, no registered files: the plainest
//! io_uring server, and the figure a runtime's overhead is measured against. It reaps every
//! completion of an `io_uring_enter` before submitting the requests they lead to, so one
//! enter submits a batch.
//!
//! The `io-uring` crate is a dev-dependency of this package for the floors only (never a
//! peer). Stopping: an eventfd read is armed on every ring; [`Server::stop`] writes it, and
//! the thread cancels everything still in flight and waits for every completion before it
//! frees a buffer or closes a descriptor.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::thread::{self, JoinHandle};

use io_uring::{opcode, squeue, types, IoUring};
use ringsteal_benches::http::app::Requests;
use ringsteal_benches::net::listen_loopback;
use ringsteal_examples::http::MAX_HEAD;

const ACCEPT: u64 = 1 << 32;
const RECV: u64 = 2 << 32;
const SEND: u64 = 3 << 32;
const STOP: u64 = 4 << 32;
const CANCEL: u64 = 5 << 32;
const KIND: u64 = 0xFFFF_FFFF << 32;

/// A running floor server; [`Server::stop`] (or drop) stops it.
pub(crate) struct Server {
    addr: SocketAddr,
    stops: Vec<OwnedFd>,
    threads: Vec<JoinHandle<()>>,
}

impl Server {
    /// Starts `threads` server threads on one loopback port.
    pub(crate) fn start(threads: usize) -> io::Result<Self> {
        let first = listen_loopback(0, true)?;
        let port = first.local_addr()?.port();
        let mut listeners = vec![OwnedFd::from(first)];
        for _ in 1..threads {
            listeners.push(OwnedFd::from(listen_loopback(port, true)?));
        }
        let mut stops = Vec::new();
        let mut joins = Vec::new();
        for (t, l) in listeners.into_iter().enumerate() {
            // SAFETY: eventfd has no memory preconditions; the result is checked below.
            let efd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
            if efd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `efd` is a new descriptor that nothing else owns.
            let efd = unsafe { OwnedFd::from_raw_fd(efd) };
            let stop_fd = efd.as_raw_fd();
            stops.push(efd);
            joins.push(
                thread::Builder::new()
                    .name(format!("uring-http-{t}"))
                    .spawn(move || serve(l, stop_fd).expect("io_uring floor server"))?,
            );
        }
        Ok(Self {
            addr: SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)),
            stops,
            threads: joins,
        })
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops every thread and waits for it.
    pub(crate) fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        for s in &self.stops {
            let one = 1u64;
            // SAFETY: writes 8 bytes from `one` to an eventfd this server owns.
            unsafe { libc::write(s.as_raw_fd(), (&one as *const u64).cast(), 8) };
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// One connection: its socket, the bytes of a partial request, and the answers being sent.
struct Conn {
    fd: OwnedFd,
    input: Vec<u8>,
    requests: Requests,
    out: Vec<u8>,
    sent: usize,
    close_after: bool,
    /// The answers being sent stopped at the gather limit: answer the rest of `input`
    /// before receiving again.
    more: bool,
}

/// One thread's server loop (see the module docs). `stop_fd` outlives it (the [`Server`]
/// joins the thread before dropping it).
fn serve(listener: OwnedFd, stop_fd: RawFd) -> io::Result<()> {
    let mut ring = new_ring(1024)?;
    let mut conns: Vec<Option<Conn>> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    let mut stop_buf = 0u64;
    let mut in_flight = 0usize;
    let lfd = types::Fd(listener.as_raw_fd());
    let accept = opcode::Accept::new(lfd, std::ptr::null_mut(), std::ptr::null_mut())
        .flags(libc::SOCK_CLOEXEC)
        .build()
        .user_data(ACCEPT);
    // SAFETY: no buffer; the listener outlives the ring's requests (cancelled and reaped below).
    unsafe { push(&mut ring, &accept)? };
    let stop_read = opcode::Read::new(types::Fd(stop_fd), (&mut stop_buf as *mut u64).cast(), 8)
        .build()
        .user_data(STOP);
    // SAFETY: `stop_buf` lives on this frame until the loop below has reaped every completion.
    unsafe { push(&mut ring, &stop_read)? };
    in_flight += 2;
    let mut stopping = false;
    let mut cqes = Vec::with_capacity(1024);
    while in_flight > 0 {
        ring.submit_and_wait(1)?;
        cqes.clear();
        cqes.extend(ring.completion().map(|c| (c.user_data(), c.result())));
        for &(data, res) in &cqes {
            in_flight -= 1;
            let idx = (data & !KIND) as usize;
            match data & KIND {
                ACCEPT => {
                    if res >= 0 {
                        // SAFETY: the kernel created this descriptor for us.
                        let fd = unsafe { OwnedFd::from_raw_fd(res) };
                        if stopping {
                            continue; // closed by the drop
                        }
                        set_nodelay(fd.as_raw_fd());
                        let conn = Conn {
                            fd,
                            input: Vec::with_capacity(MAX_HEAD),
                            requests: Requests::default(),
                            out: Vec::with_capacity(1024),
                            sent: 0,
                            close_after: false,
                            more: false,
                        };
                        let i = match free.pop() {
                            Some(i) => {
                                conns[i] = Some(conn);
                                i
                            }
                            None => {
                                conns.push(Some(conn));
                                conns.len() - 1
                            }
                        };
                        submit_recv(&mut ring, &mut conns, i)?;
                        in_flight += 1;
                    }
                    if !stopping {
                        // SAFETY: as for the first accept.
                        unsafe { push(&mut ring, &accept)? };
                        in_flight += 1;
                    }
                }
                RECV => {
                    let c = conns[idx].as_mut().expect("recv on a live connection");
                    if res <= 0 || stopping {
                        close(&mut conns, &mut free, idx);
                        continue;
                    }
                    // SAFETY: the kernel wrote `res` bytes after the initialised ones.
                    unsafe { c.input.set_len(c.input.len() + res as usize) };
                    if answer(&mut ring, &mut conns, &mut free, idx)? {
                        in_flight += 1;
                    }
                }
                SEND => {
                    let c = conns[idx].as_mut().expect("send on a live connection");
                    if res < 0 || stopping {
                        close(&mut conns, &mut free, idx);
                        continue;
                    }
                    c.sent += res as usize;
                    if c.sent < c.out.len() {
                        submit_send(&mut ring, &mut conns, idx)?;
                    } else {
                        c.out.clear();
                        c.sent = 0;
                        if c.close_after {
                            close(&mut conns, &mut free, idx);
                            continue;
                        }
                        if c.more {
                            if answer(&mut ring, &mut conns, &mut free, idx)? {
                                in_flight += 1;
                            }
                            continue;
                        }
                        submit_recv(&mut ring, &mut conns, idx)?;
                    }
                    in_flight += 1;
                }
                STOP if !stopping => {
                    stopping = true;
                    let cancel = opcode::AsyncCancel2::new(types::CancelBuilder::any())
                        .build()
                        .user_data(CANCEL);
                    // SAFETY: a cancel request names no memory.
                    unsafe { push(&mut ring, &cancel)? };
                    in_flight += 1;
                }
                _ => {} // the stop read or a cancel, once stopping
            }
        }
    }
    Ok(())
}

/// Answers the complete requests in connection `i`'s input (up to the gather limit) and arms
/// what comes next: a send of the answers, else a receive. `false`: the connection was closed
/// instead, and nothing is armed.
fn answer(
    ring: &mut IoUring,
    conns: &mut [Option<Conn>],
    free: &mut Vec<usize>,
    i: usize,
) -> io::Result<bool> {
    let c = conns[i].as_mut().expect("live connection");
    let handled = c.requests.handle(&c.input, &mut c.out);
    c.input.drain(..handled.consumed);
    c.close_after = handled.close;
    c.more = handled.full;
    if !c.out.is_empty() {
        submit_send(ring, conns, i)?;
    } else if handled.close {
        close(conns, free, i);
        return Ok(false);
    } else {
        submit_recv(ring, conns, i)?;
    }
    Ok(true)
}

/// Arms a receive into the spare capacity of connection `i`'s input buffer.
fn submit_recv(ring: &mut IoUring, conns: &mut [Option<Conn>], i: usize) -> io::Result<()> {
    let c = conns[i].as_mut().expect("live connection");
    if c.input.capacity() == c.input.len() {
        c.input.reserve(MAX_HEAD);
    }
    let spare = c.input.capacity() - c.input.len();
    let sqe = opcode::Recv::new(
        types::Fd(c.fd.as_raw_fd()),
        // SAFETY: in bounds: `len` is at most the capacity.
        unsafe { c.input.as_mut_ptr().add(c.input.len()) },
        spare as u32,
    )
    .build()
    .user_data(RECV | i as u64);
    // SAFETY: the buffer and descriptor stay untouched and alive until this request's
    // completion: a connection is closed (and its buffers freed) only from one of its own
    // completions, and it has one request in flight at a time.
    unsafe { push(ring, &sqe) }
}

/// Arms a send of the unsent answers of connection `i`.
fn submit_send(ring: &mut IoUring, conns: &mut [Option<Conn>], i: usize) -> io::Result<()> {
    let c = conns[i].as_mut().expect("live connection");
    let sqe = opcode::Send::new(
        types::Fd(c.fd.as_raw_fd()),
        // SAFETY: `sent` < `out.len()`.
        unsafe { c.out.as_ptr().add(c.sent) },
        (c.out.len() - c.sent) as u32,
    )
    .flags(libc::MSG_NOSIGNAL)
    .build()
    .user_data(SEND | i as u64);
    // SAFETY: as in `submit_recv`.
    unsafe { push(ring, &sqe) }
}

/// Frees connection `i` (closing its socket); only called from its request's completion,
/// so nothing in flight names it.
fn close(conns: &mut [Option<Conn>], free: &mut Vec<usize>, i: usize) {
    conns[i] = None;
    free.push(i);
}

/// Pushes `sqe`, submitting first if the submission queue is full.
///
/// # Safety
/// Whatever `sqe` points at must stay valid until its completion is reaped.
unsafe fn push(ring: &mut IoUring, sqe: &squeue::Entry) -> io::Result<()> {
    loop {
        // SAFETY: the caller's contract.
        if unsafe { ring.submission().push(sqe) }.is_ok() {
            return Ok(());
        }
        ring.submit()?;
    }
}

/// A ring with `SINGLE_ISSUER | DEFER_TASKRUN` (what ringsteal uses where it can), or a plain
/// one where the kernel refuses them.
fn new_ring(entries: u32) -> io::Result<IoUring> {
    IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
        .or_else(|_| IoUring::new(entries))
}

fn set_nodelay(fd: RawFd) {
    let one: libc::c_int = 1;
    // SAFETY: passes a c_int of the size given.
    unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
}
