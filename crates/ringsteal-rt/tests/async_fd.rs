//! `AsyncFd`: tokio's readiness for a descriptor the program owns, over real pipes and
//! eventfds, under every runtime configuration: data moved through `try_io` arrives whole
//! and in order across shards, a `WouldBlock` clears the readiness and the next wait asks the
//! kernel, a dropped wait consumes nothing, and dropping an `AsyncFd` with a poll armed
//! closes its descriptor.

mod common;

use std::future::poll_fn;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use common::*;
use ringsteal_rt::io::{AsyncFd, Interest, Ready};
use ringsteal_rt::{spawn_with, Placement};

/// A non-blocking pipe: (read end, write end).
fn pipe() -> (std::fs::File, std::fs::File) {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    let res = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) };
    assert_eq!(res, 0);
    // SAFETY: both descriptors are new and owned by nothing else.
    unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    }
}

fn byte(i: usize) -> u8 {
    (i * 7 + i / 251) as u8
}

#[test]
fn bytes_written_and_read_through_try_io_arrive_whole_across_shards() {
    const TOTAL: usize = 1 << 20;
    with_every_runtime("async_fd pipe", 2, |_, rt| {
        rt.block_on(async {
            let (rd, wr) = pipe();
            let writer = spawn_with(Placement::Pinned(1), async move {
                let wr = AsyncFd::new(wr).unwrap();
                let data: Vec<u8> = (0..TOTAL).map(byte).collect();
                let (mut done, mut waits) = (0, 0u64);
                while done < TOTAL {
                    let mut guard = wr.writable().await.unwrap();
                    waits += 1;
                    let end = (done + 16 * 1024).min(TOTAL);
                    if let Ok(n) = guard.try_io(|f| f.get_ref().write(&data[done..end])) {
                        done += n.unwrap();
                    }
                }
                waits
            });
            let rd = AsyncFd::new(rd).unwrap();
            let mut got = Vec::with_capacity(TOTAL);
            let mut buf = vec![0; 8192];
            loop {
                let mut guard = rd.readable().await.unwrap();
                match guard.try_io(|f| f.get_ref().read(&mut buf)) {
                    Ok(Ok(0)) => {
                        // The end: what was cached said readable; ask the kernel again.
                        guard.clear_ready();
                        break;
                    }
                    Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
                    Ok(Err(e)) => panic!("read: {e}"),
                    Err(_would_block) => assert!(guard.ready().is_empty()),
                }
            }
            assert_eq!(got.len(), TOTAL);
            assert!(got.iter().enumerate().all(|(i, b)| *b == byte(i)));
            // The writer filled the 64 KiB pipe many times over, so it waited for room.
            assert!(writer.await.unwrap() > 16);
            // The write end is closed: the read end reports its closed side for good.
            let guard = rd.readable().await.unwrap();
            assert!(guard.ready().is_read_closed(), "{:?}", guard.ready());
        })
    });
}

#[test]
fn a_would_block_clears_the_readiness_and_the_next_wait_asks_the_kernel() {
    with_every_runtime("async_fd clear", 1, |_, rt| {
        rt.block_on(async {
            let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
            a.set_nonblocking(true).unwrap();
            let a = AsyncFd::new(a).unwrap();
            (&b).write_all(b"x").unwrap();
            let mut guard = a.readable().await.unwrap();
            assert!(guard.ready().is_readable());
            let mut one = [0; 1];
            assert_eq!(
                guard
                    .try_io(|s| s.get_ref().read(&mut one))
                    .unwrap()
                    .unwrap(),
                1
            );
            // The guard was not cleared, so the readiness stays: the next wait ends at
            // once, and the read says WouldBlock.
            let mut guard = a.readable().await.unwrap();
            assert!(guard.try_io(|s| s.get_ref().read(&mut one)).is_err());
            // Cleared: now a wait waits for the kernel, which reports the next byte.
            let wait = ringsteal_rt::time::timeout(Duration::from_millis(20), a.readable());
            assert!(wait.await.is_err(), "nothing to read, so the wait waits");
            (&b).write_all(b"y").unwrap();
            let mut guard = a.readable().await.unwrap();
            guard
                .try_io(|s| s.get_ref().read(&mut one))
                .unwrap()
                .unwrap();
            assert_eq!(&one, b"y");
            // Both directions (readable is still cached: that read was not cleared): a
            // read's WouldBlock clears only the reading states.
            assert!(a.writable().await.unwrap().ready().is_writable());
            let mut both = a
                .ready(Interest::READABLE | Interest::WRITABLE)
                .await
                .unwrap();
            assert!(both.ready().is_writable() && both.ready().is_readable());
            both.clear_ready_matching(Ready::READABLE);
            assert!(both.ready().is_writable() && !both.ready().is_readable());
            let wait = ringsteal_rt::time::timeout(Duration::from_millis(20), a.readable());
            assert!(wait.await.is_err(), "readable was cleared and nothing came");
            assert!(a.writable().await.unwrap().ready().is_writable());
        })
    });
}

#[test]
fn the_poll_methods_wait_for_the_kernel_and_a_dropped_async_fd_closes_its_descriptor() {
    with_every_runtime("async_fd poll methods", 2, |_, rt| {
        rt.block_on(async {
            // SAFETY: eventfd takes no pointers; the descriptor is new and ours.
            let efd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
            assert!(efd >= 0);
            // SAFETY: as above.
            let efd = AsyncFd::new(unsafe { OwnedFd::from_raw_fd(efd) }).unwrap();
            let raw = efd.as_raw_fd();
            // A write from another thread wakes the waiting task.
            let ring = std::thread::spawn(move || {
                // SAFETY: writes 8 bytes from a live u64 to the eventfd.
                let n = unsafe { libc::write(raw, (&1u64 as *const u64).cast(), 8) };
                assert_eq!(n, 8);
            });
            let ready = poll_fn(|cx| efd.poll_read_ready(cx).map(|g| g.map(|g| g.ready())))
                .await
                .unwrap();
            assert!(ready.is_readable());
            ring.join().unwrap();
            // Nothing more to read, once the counter is taken: the kept poll stays armed
            // across polls until the AsyncFd goes.
            let mut guard = poll_fn(|cx| efd.poll_read_ready(cx)).await.unwrap();
            let mut counter = [0u8; 8];
            guard
                .try_io(|fd| {
                    // SAFETY: reads 8 bytes into a live 8-byte array.
                    let n = unsafe { libc::read(fd.as_raw_fd(), counter.as_mut_ptr().cast(), 8) };
                    if n < 0 {
                        Err(io::Error::last_os_error())
                    } else {
                        Ok(n)
                    }
                })
                .unwrap()
                .unwrap();
            assert_eq!(u64::from_ne_bytes(counter), 1);
            let mut guard = poll_fn(|cx| efd.poll_read_ready(cx)).await.unwrap();
            guard.clear_ready();
            let mut polls = 0;
            poll_fn(|cx| {
                polls += 1;
                assert!(efd.poll_read_ready(cx).is_pending());
                std::task::Poll::Ready(())
            })
            .await;
            assert_eq!(polls, 1);
            // Dropped with its poll armed but not yet submitted, an AsyncFd closes its
            // descriptor at once: the pipe's write end has no reader.
            let (rd, wr) = pipe();
            let rd = AsyncFd::new(rd).unwrap();
            poll_fn(|cx| {
                assert!(rd.poll_read_ready(cx).is_pending());
                std::task::Poll::Ready(())
            })
            .await;
            drop(rd);
            let err = (&wr).write(b"x").unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
            // Dropped with its poll in the kernel, it closes the file once the poll's
            // cancel lands (the kernel holds the file until then): within ticks.
            let (rd, wr) = pipe();
            let rd = AsyncFd::new(rd).unwrap();
            let waiting = async {
                let _ = rd.readable().await;
                unreachable!("nothing is written");
            };
            let waited = ringsteal_rt::time::timeout(Duration::from_millis(5), waiting).await;
            assert!(
                waited.is_err(),
                "the wait was in the kernel until the timeout"
            );
            drop(rd);
            let deadline = std::time::Instant::now() + Duration::from_secs(20);
            loop {
                match (&wr).write(b"x") {
                    Err(e) if e.kind() == io::ErrorKind::BrokenPipe => break,
                    _ => {}
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "the pipe never closed"
                );
                ringsteal_rt::yield_now().await;
            }
            drop(efd);
        })
    });
}

#[test]
fn bad_descriptors_and_interests_are_clear_errors() {
    with_every_runtime("async_fd errors", 1, |_, rt| {
        rt.block_on(async {
            let (a, b) = pipe();
            drop(a);
            // A number no descriptor has: EBADF at once.
            #[derive(Debug)]
            struct Raw(i32);
            impl AsRawFd for Raw {
                fn as_raw_fd(&self) -> i32 {
                    self.0
                }
            }
            let err = AsyncFd::new(Raw(1 << 30)).unwrap_err();
            assert_eq!(err.raw_os_error(), Some(libc::EBADF));
            let b = AsyncFd::with_interest(b, Interest::WRITABLE).unwrap();
            let err = b.readable().await.unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
            // The write end of a pipe whose read end closed: writable, with an error.
            let guard = b.writable().await.unwrap();
            assert!(guard.ready().is_writable(), "{:?}", guard.ready());
            let mut guard = guard;
            let res = guard.try_io(|f| f.get_ref().write(b"x")).unwrap();
            assert_eq!(res.unwrap_err().kind(), io::ErrorKind::BrokenPipe);
            let inner: std::fs::File = b.into_inner();
            drop(inner);
        })
    });
}
