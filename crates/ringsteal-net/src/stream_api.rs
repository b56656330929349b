//! The owned-buffer methods and I/O trait impls every stream type shares (TCP and Unix
//! streams, their owned and borrowed halves), written once as macros over a `core()`
//! accessor that returns the type's [`StreamCore`](crate::stream::StreamCore).
//!
//! May not: hold logic; each method forwards to the core.

/// `AsRawFd` and `AsFd` for `$t`, whose descriptor `$raw` (a `fn(&$t) -> RawFd`) names.
macro_rules! impl_as_fd {
    ($t:ty, $raw:expr) => {
        impl ::std::os::fd::AsRawFd for $t {
            fn as_raw_fd(&self) -> ::std::os::fd::RawFd {
                let raw: fn(&$t) -> ::std::os::fd::RawFd = $raw;
                raw(self)
            }
        }

        impl ::std::os::fd::AsFd for $t {
            fn as_fd(&self) -> ::std::os::fd::BorrowedFd<'_> {
                // SAFETY: the descriptor stays open while this value, which holds it, lives.
                unsafe {
                    ::std::os::fd::BorrowedFd::borrow_raw(::std::os::fd::AsRawFd::as_raw_fd(self))
                }
            }
        }
    };
}

/// `take_error` for a socket type `$t` (`SO_ERROR`), as tokio's.
macro_rules! take_error_method {
    ($t:ty) => {
        impl $t {
            /// Takes the socket's pending error (`SO_ERROR`), clearing it, as tokio's
            /// `take_error`: `None` if there is none. An ICMP error a connected datagram
            /// socket received, say, or a failed non-blocking connect.
            pub fn take_error(&self) -> ::std::io::Result<Option<::std::io::Error>> {
                $crate::sockopt::take_error(self)
            }
        }
    };
}

/// tokio's IP-level options of a socket type `$t` not yet connected or datagram-based
/// (`TcpSocket`, `UdpSocket`): `set_tos_v4`/`tos_v4` (and their older names `set_tos`/`tos`),
/// `set_tclass_v6`/`tclass_v6` and `bind_device`/`device`. `$make` is doc example code,
/// inside a function that returns `io::Result<()>`, that makes an IPv4 `socket`; `$make_v6`
/// the same for an IPv6 one.
macro_rules! ip_socket_options {
    ($t:ty, $make:expr, $make_v6:expr) => {
        impl $t {
            /// Sets `IP_TOS`, the type-of-service byte (DSCP and ECN bits) of the IPv4
            /// packets it sends, as tokio's `set_tos_v4`.
            ///
            #[doc = concat!(
                "```\nfn main() -> std::io::Result<()> {\n", $make,
                "    socket.set_tos_v4(0x10)?; // IPTOS_LOWDELAY\n",
                "    assert_eq!(socket.tos_v4()?, 0x10);\n",
                "    Ok(())\n}\n```"
            )]
            pub fn set_tos_v4(&self, tos: u32) -> ::std::io::Result<()> {
                $crate::sockopt::set(self, libc::IPPROTO_IP, libc::IP_TOS, tos as libc::c_int)
            }

            /// `IP_TOS`, as tokio's `tos_v4`.
            pub fn tos_v4(&self) -> ::std::io::Result<u32> {
                $crate::sockopt::get::<libc::c_int>(self, libc::IPPROTO_IP, libc::IP_TOS)
                    .map(|v| v as u32)
            }

            /// [`set_tos_v4`](Self::set_tos_v4) under its older name, which tokio 1.54
            /// deprecated for the newer one (code written against either compiles).
            pub fn set_tos(&self, tos: u32) -> ::std::io::Result<()> {
                self.set_tos_v4(tos)
            }

            /// [`tos_v4`](Self::tos_v4) under its older name (see [`set_tos`](Self::set_tos)).
            pub fn tos(&self) -> ::std::io::Result<u32> {
                self.tos_v4()
            }

            /// Sets `IPV6_TCLASS`, the traffic class (DSCP and ECN bits) of the IPv6 packets
            /// it sends, as tokio's `set_tclass_v6`.
            ///
            /// # Errors
            /// The kernel's: on an IPv4 socket, `ENOPROTOOPT` (tokio's says only that it
            /// "may not have any effect" there).
            ///
            #[doc = concat!(
                "```\nfn main() -> std::io::Result<()> {\n", $make_v6,
                "    socket.set_tclass_v6(0x28)?; // DSCP AF11\n",
                "    assert_eq!(socket.tclass_v6()?, 0x28);\n",
                "    Ok(())\n}\n```"
            )]
            pub fn set_tclass_v6(&self, tclass: u32) -> ::std::io::Result<()> {
                $crate::sockopt::set(
                    self,
                    libc::IPPROTO_IPV6,
                    libc::IPV6_TCLASS,
                    tclass as libc::c_int,
                )
            }

            /// `IPV6_TCLASS`, as tokio's `tclass_v6`.
            pub fn tclass_v6(&self) -> ::std::io::Result<u32> {
                $crate::sockopt::get::<libc::c_int>(self, libc::IPPROTO_IPV6, libc::IPV6_TCLASS)
                    .map(|v| v as u32)
            }

            /// Binds the socket to the network interface named `interface`
            /// (`SO_BINDTODEVICE`), as tokio's `bind_device`: it then receives only packets
            /// that arrived on that interface and sends through it. `None` (or an empty
            /// name) removes the binding. Changing an existing binding needs `CAP_NET_RAW`,
            /// and so did any binding before Linux 5.7.
            ///
            /// # Errors
            /// `ENODEV` (the OS error) for an interface that does not exist;
            /// `PermissionDenied` without the privilege above; `InvalidInput` for a name of
            /// 16 bytes or more, longer than any interface's.
            ///
            #[doc = concat!(
                "```\nfn main() -> std::io::Result<()> {\n", $make,
                "    match socket.bind_device(Some(b\"lo\")) {\n",
                "        Ok(()) => assert_eq!(socket.device()?.as_deref(), Some(&b\"lo\"[..])),\n",
                "        // An older kernel, and no CAP_NET_RAW.\n",
                "        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {}\n",
                "        Err(e) => return Err(e),\n",
                "    }\n",
                "    assert!(socket.bind_device(Some(b\"no-such-if0\")).is_err());\n",
                "    Ok(())\n}\n```"
            )]
            pub fn bind_device(&self, interface: Option<&[u8]>) -> ::std::io::Result<()> {
                $crate::sockopt::bind_device(self, interface.unwrap_or(&[]))
            }

            /// The name of the interface the socket is bound to (`SO_BINDTODEVICE`), `None`
            /// if it is bound to none, as tokio's `device`.
            pub fn device(&self) -> ::std::io::Result<Option<Vec<u8>>> {
                $crate::sockopt::device(self)
            }
        }
    };
}

/// `local_addr` and `peer_addr` for an owned half `$half`, as tokio's halves have them: those
/// of the stream it belongs to, as `$addr` (`$from` turns the kernel's address into one).
macro_rules! half_addrs {
    ($half:ty, $addr:ty, $from:expr) => {
        impl $half {
            /// The local address of the stream this half belongs to.
            pub fn local_addr(&self) -> ::std::io::Result<$addr> {
                let from: fn(ringsteal_rt::op::SockAddr) -> ::std::io::Result<$addr> = $from;
                from($crate::sockopt::local(self)?)
            }

            /// The peer's address.
            pub fn peer_addr(&self) -> ::std::io::Result<$addr> {
                let from: fn(ringsteal_rt::op::SockAddr) -> ::std::io::Result<$addr> = $from;
                from($crate::sockopt::peer(self)?)
            }
        }
    };
}

/// What TCP and Unix streams share besides reads and writes: `shutdown`, `into_split`,
/// `split`, `shared_fd`.
macro_rules! stream_common_methods {
    () => {
        /// Shuts down the read side, the write side (the peer reads end of stream, after
        /// every byte of earlier writes) or both, with `shutdown(2)` (which never blocks;
        /// `IORING_OP_SHUTDOWN` would run on a kernel worker thread, 16 times slower). `Both` does not
        /// wait for writes in progress: a write waiting for a peer that stopped reading
        /// fails (`BrokenPipe`), so another task can end such a connection. Not a
        /// zero-copy write (`write_all_zc`, `send_zc`), whose buffer stays in the kernel's
        /// send queue until the peer acknowledges it: to end that one, drop its future
        /// (abort its task), then drop the stream after `set_zero_linger()`, which resets
        /// the connection and makes the kernel let go of the buffer. Shutting down
        /// the write side of a connection the peer already reset succeeds, as tokio's
        /// `shutdown` does (`Read` and `Both` report `NotConnected` there, as std's).
        pub async fn shutdown(&self, how: ::std::net::Shutdown) -> ::std::io::Result<()> {
            self.core.shutdown(how).await
        }

        /// Splits into owned halves, each usable from its own task on any shard.
        pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
            split_owned(self.core)
        }

        /// Borrowed halves (the methods take `&self` anyway; this mirrors tokio's API).
        pub fn split(&self) -> (ReadHalf<'_>, WriteHalf<'_>) {
            split_borrowed(&self.core)
        }

        /// The shared descriptor, for the low-level op API (`ringsteal_rt::op`).
        pub fn shared_fd(&self) -> &::ringsteal_rt::op::SharedFd {
            self.core.fd()
        }
    };
}

/// tokio's `ready(interest)`, on streams and on both kinds of halves (a half may ask for
/// either direction, as tokio's may).
macro_rules! stream_ready_method {
    () => {
        /// Waits until the stream is ready for what `interest` names, as tokio's `ready`,
        /// and says for what: at once from the stream's cached readiness, as tokio's, until
        /// a `try_` call's `WouldBlock` clears it; else one one-shot `IORING_OP_POLL_ADD`,
        /// for both directions at once if both are asked for, whose answer is cached; at
        /// once if reads are asked for and an abandoned read kept bytes. Then `try_read` and `try_write` (on the stream or its halves) take
        /// or send what they can; they may still say `WouldBlock`, as tokio's may.
        /// Owned-buffer reads and writes need none of this.
        ///
        /// ```
        /// use ringsteal_rt::io::Interest;
        ///
        /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
        /// rt.block_on(async {
        ///     let (a, b) = ringsteal_net::UnixStream::pair()?;
        ///     let ready = a.ready(Interest::READABLE | Interest::WRITABLE).await?;
        ///     assert!(ready.is_writable() && !ready.is_readable()); // room, nothing to read
        ///     assert_eq!(a.try_write(b"ping")?, 4);
        ///     let ready = b.ready(Interest::READABLE).await?;
        ///     assert!(ready.is_readable());
        ///     let mut buf = [0; 8];
        ///     assert_eq!(b.try_read(&mut buf)?, 4);
        ///     Ok::<(), std::io::Error>(())
        /// })
        /// .unwrap();
        /// ```
        pub async fn ready(
            &self,
            interest: ::ringsteal_rt::io::Interest,
        ) -> ::std::io::Result<::ringsteal_rt::io::Ready> {
            self.core().ready(interest).await
        }
    };
}

/// tokio's `try_io`, `async_io`, `poll_read_ready` and `poll_write_ready`, on the streams
/// (not their halves, as in tokio).
macro_rules! stream_try_io_methods {
    () => {
        /// Runs `f`, a non-blocking system call of yours on this stream (`sendfile`,
        /// `splice`, a `sendmsg` with control data; take the descriptor with
        /// `as_raw_fd`), as tokio's `try_io`, holding the stream's lane of each direction
        /// in `interest` so that it neither overtakes nor splits an owned-buffer read or
        /// write. `WouldBlock` without calling `f` while such a request holds a lane (as
        /// `try_read` says); for reading, `Other` while bytes an abandoned read kept are
        /// waiting (`f` would read past them: take them with `try_read`). `f` is always
        /// called otherwise (tokio's skips it when its cache says not ready). Unlike
        /// tokio's, the descriptor is in blocking mode (io_uring needs no `O_NONBLOCK`):
        /// pass `MSG_DONTWAIT` to your call, or make the stream non-blocking first
        /// (`socket2::SockRef::from(&stream).set_nonblocking(true)`; ringsteal's own
        /// requests work either way), or `f` blocks the shard's thread.
        ///
        /// # Errors
        /// `f`'s, or those above.
        ///
        /// ```
        /// use std::os::fd::AsRawFd;
        /// use ringsteal_rt::io::Interest;
        ///
        /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
        /// rt.block_on(async {
        ///     let (a, b) = ringsteal_net::UnixStream::pair()?;
        ///     a.writable().await?;
        ///     let sent = a.try_io(Interest::WRITABLE, || {
        ///         // SAFETY: the slice is valid for reads of its length.
        ///         let n = unsafe { libc::send(a.as_raw_fd(), b"own".as_ptr().cast(), 3, libc::MSG_DONTWAIT) };
        ///         if n < 0 { Err(std::io::Error::last_os_error()) } else { Ok(n as usize) }
        ///     })?;
        ///     assert_eq!(sent, 3);
        ///     assert_eq!(b.read_exact(vec![0; 3]).await.1, b"own");
        ///     Ok::<(), std::io::Error>(())
        /// })
        /// .unwrap();
        /// ```
        pub fn try_io<R>(
            &self,
            interest: ::ringsteal_rt::io::Interest,
            f: impl FnOnce() -> ::std::io::Result<R>,
        ) -> ::std::io::Result<R> {
            self.core.try_io(interest, f)
        }

        /// Polls until a read would not wait, as tokio's `poll_read_ready`: no owned-buffer
        /// request holds the read lane, and bytes a cancelled read kept are waiting or the
        /// stream's cached readiness says readable (else a one-shot `POLL_ADD`, kept across
        /// calls: only the task of the latest call is woken, as in tokio). For poll-based
        /// code that then calls [`try_read`](Self::try_read), whose `WouldBlock` makes the
        /// next call wait for the kernel.
        ///
        /// ```
        /// use std::future::poll_fn;
        ///
        /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
        /// rt.block_on(async {
        ///     let (a, b) = ringsteal_net::UnixStream::pair()?;
        ///     poll_fn(|cx| a.poll_write_ready(cx)).await?;
        ///     a.try_write(b"poll")?;
        ///     poll_fn(|cx| b.poll_read_ready(cx)).await?;
        ///     let mut buf = [0; 8];
        ///     assert_eq!(b.try_read(&mut buf)?, 4);
        ///     Ok::<(), std::io::Error>(())
        /// })
        /// .unwrap();
        /// ```
        ///
        /// # Errors
        /// The poll's (a refused opcode, a runtime shutting down under the wait).
        pub fn poll_read_ready(
            &self,
            cx: &mut ::std::task::Context<'_>,
        ) -> ::std::task::Poll<::std::io::Result<()>> {
            self.core.poll_read_ready(cx)
        }

        /// Polls until a write would not wait, as tokio's `poll_write_ready` (see
        /// [`poll_read_ready`](Self::poll_read_ready)).
        ///
        /// # Errors
        /// As for [`poll_read_ready`](Self::poll_read_ready).
        pub fn poll_write_ready(
            &self,
            cx: &mut ::std::task::Context<'_>,
        ) -> ::std::task::Poll<::std::io::Result<()>> {
            self.core.poll_write_ready(cx)
        }

        /// Runs `f` each time the stream is ready for `interest` (see
        /// [`ready`](Self::ready)) until it returns something other than `WouldBlock`, as
        /// tokio's `async_io`; `f` as for [`try_io`](Self::try_io).
        ///
        /// # Errors
        /// `f`'s, the wait's, or [`try_io`](Self::try_io)'s.
        pub async fn async_io<R>(
            &self,
            interest: ::ringsteal_rt::io::Interest,
            f: impl FnMut() -> ::std::io::Result<R>,
        ) -> ::std::io::Result<R> {
            self.core.async_io(interest, f).await
        }
    };
}

/// Inherent read methods: `read`, `read_exact`, `readv`, `peek`.
macro_rules! stream_read_methods {
    () => {
        /// Reads into `buf` (from its start, up to its capacity): one `IORING_OP_RECV`, or
        /// the bytes a cancelled read left behind. Yields the byte count (0: the peer shut
        /// down its sending side) and the buffer, on success and on error alike. If the
        /// kernel said the socket still had bytes queued after the stream's last read, they
        /// are taken with one non-blocking `recv(2)` in the poll that made the read (a
        /// `RECV` only if none are left).
        ///
        /// Cancel-safe: if the future is dropped and the kernel still delivers bytes to
        /// this read, the next read returns them, in order.
        pub async fn read<B: ::ringsteal_rt::buf::IoBufMut>(
            &self,
            buf: B,
        ) -> ::ringsteal_rt::buf::BufResult<usize, B> {
            self.core().read(buf).await
        }

        /// Reads once and appends what it read to `buf` (a `Vec<u8>`, or a `BytesMut` with
        /// the `bytes` feature), which stays with the caller, as tokio's `read_buf`: `0`
        /// only at the end of the stream. Cancel-safe, even for a buffer that holds a
        /// partial frame: dropped, it leaves `buf` as it was, and the next read returns what
        /// this one received ([`AsyncReadOwned::read_buf`](::ringsteal_rt::io::AsyncReadOwned::read_buf)).
        pub async fn read_buf<B: ::ringsteal_rt::io::AppendBuf + ?Sized>(
            &self,
            buf: &mut B,
        ) -> ::std::io::Result<usize> {
            self.core().read_buf(buf).await
        }

        /// Fills `buf` to its capacity, or fails with `UnexpectedEof` if the stream ends
        /// first. Other reads of this stream wait until it is done. Bytes already queued
        /// are taken as [`read`](Self::read) takes them.
        pub async fn read_exact<B: ::ringsteal_rt::buf::IoBufMut>(
            &self,
            buf: B,
        ) -> ::ringsteal_rt::buf::BufResult<(), B> {
            self.core().read_exact(buf).await
        }

        /// Reads into several buffers in order (`IORING_OP_RECVMSG`): each is filled to its
        /// capacity before the next gets a byte.
        ///
        /// ```
        /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
        /// rt.block_on(async {
        ///     let (a, b) = ringsteal_net::UnixStream::pair()?;
        ///     a.write_all(b"headbody".to_vec()).await.0?;
        ///     let (res, bufs) = b.readv(vec![Vec::with_capacity(4), Vec::with_capacity(16)]).await;
        ///     assert_eq!(res?, 8);
        ///     assert_eq!((&bufs[0][..], &bufs[1][..]), (&b"head"[..], &b"body"[..]));
        ///     Ok::<(), std::io::Error>(())
        /// })
        /// .unwrap();
        /// ```
        pub async fn readv<B: ::ringsteal_rt::buf::IoVecBufMut>(
            &self,
            bufs: B,
        ) -> ::ringsteal_rt::buf::BufResult<usize, B> {
            self.core().readv(bufs).await
        }

        /// Reads into `buf` without consuming: the next read returns the same bytes
        /// (`MSG_PEEK`).
        ///
        /// ```
        /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
        /// rt.block_on(async {
        ///     let (a, b) = ringsteal_net::UnixStream::pair()?;
        ///     a.write_all(b"GET /".to_vec()).await.0?;
        ///     let (res, seen) = b.peek(Vec::with_capacity(3)).await;
        ///     assert_eq!(&seen[..res?], b"GET");
        ///     let (res, read) = b.read_exact(vec![0; 5]).await; // the same bytes, and more
        ///     res?;
        ///     assert_eq!(read, b"GET /");
        ///     Ok::<(), std::io::Error>(())
        /// })
        /// .unwrap();
        /// ```
        pub async fn peek<B: ::ringsteal_rt::buf::IoBufMut>(
            &self,
            buf: B,
        ) -> ::ringsteal_rt::buf::BufResult<usize, B> {
            self.core().peek(buf).await
        }

        /// The incoming data as owned buffers, from one multishot receive (see
        /// [`RecvStream`](crate::RecvStream)): no request per read, and buffers from the
        /// shard's provided-buffer ring. While it lives, other reads of this stream wait;
        /// dropping it gives back every byte it received and nobody took, for the next
        /// read.
        ///
        /// ```
        /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
        /// rt.block_on(async {
        ///     let (a, b) = ringsteal_net::UnixStream::pair()?;
        ///     a.write_all(b"data".to_vec()).await.0?;
        ///     drop(a);
        ///     let mut data = b.recv_stream();
        ///     let mut got = Vec::new();
        ///     while let Some(buf) = data.next().await {
        ///         got.extend_from_slice(&buf?);
        ///     }
        ///     assert_eq!(got, b"data");
        ///     Ok::<(), std::io::Error>(())
        /// })
        /// .unwrap();
        /// ```
        pub fn recv_stream(&self) -> crate::RecvStream {
            self.core().recv_stream()
        }

        /// Waits until a read would not wait, as tokio's `readable`: the socket has bytes,
        /// the peer ended the stream, or an error is pending (at once while the cached
        /// readiness says so, else one one-shot `IORING_OP_POLL_ADD`: see
        /// [`ready`](Self::ready); at once if an abandoned read kept bytes). Then
        /// [`try_read`](Self::try_read) takes them. Like tokio's, it may wake when another
        /// reader has taken the bytes meanwhile: `try_read` then says `WouldBlock`.
        ///
        /// Owned-buffer reads ([`read`](Self::read)) need none of this: they wait by
        /// themselves. This is for code written against tokio's readiness API.
        ///
        /// ```
        /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
        /// rt.block_on(async {
        ///     let (a, b) = ringsteal_net::UnixStream::pair()?;
        ///     a.write_all(b"ping".to_vec()).await.0?;
        ///     let mut buf = [0; 16];
        ///     let n = loop {
        ///         b.readable().await?;
        ///         match b.try_read(&mut buf) {
        ///             Ok(n) => break n,
        ///             Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
        ///             Err(e) => return Err(e),
        ///         }
        ///     };
        ///     assert_eq!(&buf[..n], b"ping");
        ///     Ok::<(), std::io::Error>(())
        /// })
        /// .unwrap();
        /// ```
        pub async fn readable(&self) -> ::std::io::Result<()> {
            self.core().readable().await
        }

        /// Reads into `buf` without waiting, as tokio's `try_read`: the bytes the socket has
        /// queued (after those an abandoned read kept), `Ok(0)` at the end of the stream.
        /// `WouldBlock` if there are none, or while an owned-buffer read of this stream
        /// (or its [receive stream](Self::recv_stream)) is in flight, so it never takes
        /// bytes out of order. One non-blocking `recv(2)`, no ring request.
        ///
        /// ```
        /// let (a, b) = ringsteal_net::UnixStream::pair().unwrap();
        /// let mut buf = [0; 4];
        /// let err = b.try_read(&mut buf).unwrap_err();
        /// assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock);
        /// assert_eq!(a.try_write(b"hey").unwrap(), 3);
        /// assert_eq!(b.try_read(&mut buf).unwrap(), 3);
        /// ```
        pub fn try_read(&self, buf: &mut [u8]) -> ::std::io::Result<usize> {
            self.core().try_read(buf)
        }

        /// Polls for the bytes a read would return next and copies them into `buf`
        /// without taking them, as tokio's `poll_peek`: the next read returns them again.
        /// Waits as [`readable`](Self::readable) does (no owned-buffer read in flight, then
        /// the kernel's readiness, kept across calls: only the task of the latest call is
        /// woken); bytes a cancelled read kept come first. `Ok(0)`: the end of the stream
        /// (or an empty `buf`). tokio's takes a `ReadBuf`: pass
        /// `read_buf.initialize_unfilled()`, and `read_buf.advance(n)` after.
        ///
        /// ```
        /// use std::future::poll_fn;
        ///
        /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
        /// rt.block_on(async {
        ///     let (a, b) = ringsteal_net::UnixStream::pair()?;
        ///     a.write_all(b"GET /".to_vec()).await.0?;
        ///     let mut first = [0; 3];
        ///     let n = poll_fn(|cx| b.poll_peek(cx, &mut first)).await?;
        ///     assert_eq!(&first[..n], b"GET");
        ///     let (res, all) = b.read(Vec::with_capacity(8)).await;
        ///     assert_eq!((res?, &all[..]), (5, &b"GET /"[..]), "peeked bytes are read again");
        ///     Ok::<(), std::io::Error>(())
        /// })
        /// .unwrap();
        /// ```
        ///
        /// # Errors
        /// The socket's (`recv(2)`), or the wait's (a refused opcode, a runtime shutting
        /// down under the wait).
        pub fn poll_peek(
            &self,
            cx: &mut ::std::task::Context<'_>,
            buf: &mut [u8],
        ) -> ::std::task::Poll<::std::io::Result<usize>> {
            self.core().poll_peek(cx, buf)
        }

        /// As [`try_read`](Self::try_read), into several buffers in order, as tokio's
        /// `try_read_vectored`: one non-blocking `recvmsg(2)`.
        ///
        /// ```
        /// use std::io::IoSliceMut;
        ///
        /// let (a, b) = ringsteal_net::UnixStream::pair().unwrap();
        /// assert_eq!(a.try_write(b"length:5hello").unwrap(), 13);
        /// let (mut head, mut body) = ([0; 8], [0; 5]);
        /// let mut bufs = [IoSliceMut::new(&mut head), IoSliceMut::new(&mut body)];
        /// assert_eq!(b.try_read_vectored(&mut bufs).unwrap(), 13);
        /// assert_eq!((&head, &body), (b"length:5", b"hello"));
        /// ```
        pub fn try_read_vectored(
            &self,
            bufs: &mut [::std::io::IoSliceMut<'_>],
        ) -> ::std::io::Result<usize> {
            self.core().try_read_vectored(bufs)
        }

        /// As [`try_read`](Self::try_read), into the next chunk of `buf`, which it then
        /// advances, as tokio's `try_read_buf` (feature `bytes`): a `Vec<u8>` or `BytesMut`
        /// with no room left grows first, and nothing is zeroed beforehand.
        ///
        /// ```
        /// let (a, b) = ringsteal_net::UnixStream::pair().unwrap();
        /// let mut buf = Vec::with_capacity(16);
        /// let err = b.try_read_buf(&mut buf).unwrap_err();
        /// assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock);
        /// a.try_write(b"hello").unwrap();
        /// assert_eq!(b.try_read_buf(&mut buf).unwrap(), 5);
        /// a.try_write(b" there").unwrap();
        /// assert_eq!(b.try_read_buf(&mut buf).unwrap(), 6, "appended");
        /// assert_eq!(buf, b"hello there");
        /// ```
        #[cfg(feature = "bytes")]
        pub fn try_read_buf<B: ::bytes::BufMut>(&self, buf: &mut B) -> ::std::io::Result<usize> {
            self.core().try_read_buf(buf)
        }
    };
}

/// Zero-copy writes (TCP only: Unix sockets have no zero-copy send).
macro_rules! stream_zc_methods {
    () => {
        /// Writes the initialised bytes of `buf` as [`write`](Self::write) does, but without
        /// copying them into the socket when there are [`SEND_ZC_MIN`](crate::SEND_ZC_MIN)
        /// or more (`IORING_OP_SEND_ZC`; a plain send below that, or where the runtime has
        /// no zero-copy send). The buffer comes back, and the stream's next write may start,
        /// only once the kernel has let go of its pages: after the peer acknowledged the
        /// data, not merely after it was queued. May be short.
        ///
        /// A peer that stops reading holds the buffer until it reads or the connection
        /// dies; dropping the future does not hurry that (the kernel keeps the pages).
        ///
        /// ```
        /// use ringsteal_net::{TcpListener, TcpStream};
        ///
        /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
        /// rt.block_on(async {
        ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
        ///     let client = TcpStream::connect(listener.local_addr()?).await?;
        ///     let (server, _) = listener.accept().await?;
        ///     // The peer reads while the send is in flight: bytes beyond its receive window
        ///     // leave (and the buffer comes back) only once it has read some.
        ///     let reader = ringsteal_rt::spawn(async move {
        ///         let mut got = Vec::new();
        ///         loop {
        ///             let (res, chunk) = server.read(Vec::with_capacity(64 * 1024)).await;
        ///             if res? == 0 {
        ///                 return Ok::<_, std::io::Error>(got);
        ///             }
        ///             got.extend_from_slice(&chunk);
        ///         }
        ///     });
        ///     let (res, body) = client.send_zc(vec![1u8; 100_000]).await;
        ///     let sent = res?; // possibly short, as a plain send
        ///     drop(client); // end of stream: the reader stops
        ///     let got = reader.await.unwrap()?;
        ///     assert_eq!(got, body[..sent]);
        ///     Ok::<(), std::io::Error>(())
        /// })
        /// .unwrap();
        /// ```
        pub async fn send_zc<B: ::ringsteal_rt::buf::IoBuf>(
            &self,
            buf: B,
        ) -> ::ringsteal_rt::buf::BufResult<usize, B> {
            self.core().send_zc(buf).await
        }

        /// Writes every initialised byte of `buf`, as [`write_all`](Self::write_all) does,
        /// with zero-copy sends for the parts of [`SEND_ZC_MIN`](crate::SEND_ZC_MIN) bytes
        /// or more (see [`send_zc`](Self::send_zc)). Pays for large buffers (a file's
        /// contents, a big response body): it saves a copy per byte at the cost of waiting
        /// for the peer's acknowledgement before the buffer comes back.
        ///
        /// ```
        /// use ringsteal_net::{TcpListener, TcpStream};
        ///
        /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
        /// rt.block_on(async {
        ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
        ///     let client = TcpStream::connect(listener.local_addr()?).await?;
        ///     let (server, _) = listener.accept().await?;
        ///     let reader = ringsteal_rt::spawn(async move { server.read_exact(vec![0; 1 << 20]).await });
        ///     client.write_all_zc(vec![9u8; 1 << 20]).await.0?;
        ///     let (res, got) = reader.await.unwrap();
        ///     res?;
        ///     assert!(got.iter().all(|&b| b == 9));
        ///     Ok::<(), std::io::Error>(())
        /// })
        /// .unwrap();
        /// ```
        pub async fn write_all_zc<B: ::ringsteal_rt::buf::IoBuf>(
            &self,
            buf: B,
        ) -> ::ringsteal_rt::buf::BufResult<(), B> {
            self.core().write_all_zc(buf).await
        }
    };
}

/// Inherent write methods: `write`, `write_all`, `writev`, `write_all_vectored`.
macro_rules! stream_write_methods {
    () => {
        /// Writes the initialised bytes of `buf` (one `IORING_OP_SEND`, with `MSG_NOSIGNAL`:
        /// a peer that went away is an `EPIPE`/`ECONNRESET` error, never a `SIGPIPE`).
        /// Yields the byte count, possibly short, and the buffer. A write that follows
        /// another write of the stream (no read between), or starts a run of writes on a
        /// stream whose last run had more than one, is first offered to the socket with
        /// one non-blocking `send(2)`: if the socket takes any of it, that is the result, in
        /// the poll that made the write.
        ///
        /// If the future is dropped, the kernel may still send any prefix of the buffer;
        /// the next write waits until it has, so bytes of two writes never interleave.
        pub async fn write<B: ::ringsteal_rt::buf::IoBuf>(
            &self,
            buf: B,
        ) -> ::ringsteal_rt::buf::BufResult<usize, B> {
            self.core().write(buf).await
        }

        /// Writes all initialised bytes of `buf`. Other writes of this stream wait until it
        /// is done, so its bytes go out contiguously. Like [`write`](Self::write), a write
        /// that continues a run of writes, or starts one on a stream that writes in runs,
        /// first offers its bytes with a non-blocking `send(2)`; what the socket does not
        /// take goes as `IORING_OP_SEND`s.
        pub async fn write_all<B: ::ringsteal_rt::buf::IoBuf>(
            &self,
            buf: B,
        ) -> ::ringsteal_rt::buf::BufResult<(), B> {
            self.core().write_all(buf).await
        }

        /// Writes several buffers in order, in one `IORING_OP_SENDMSG`; may be short.
        /// `(head, body)` is a two-buffer write, a `Vec` of buffers any number.
        ///
        /// ```
        /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
        /// rt.block_on(async {
        ///     let (a, b) = ringsteal_net::UnixStream::pair()?;
        ///     let head = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n".to_vec();
        ///     let (res, (head, body)) = a.writev((head, b"hi".to_vec())).await;
        ///     assert_eq!(res?, head.len() + body.len()); // a short write is possible too
        ///     let (res, got) = b.read_exact(vec![0; head.len() + 2]).await;
        ///     res?;
        ///     assert!(got.ends_with(b"\r\n\r\nhi"));
        ///     Ok::<(), std::io::Error>(())
        /// })
        /// .unwrap();
        /// ```
        pub async fn writev<B: ::ringsteal_rt::buf::IoVecBuf>(
            &self,
            bufs: B,
        ) -> ::ringsteal_rt::buf::BufResult<usize, B> {
            self.core().writev(bufs).await
        }

        /// Writes every byte of several buffers in order, contiguously: short writes are
        /// continued where they stopped, and other writes of this stream wait until it is
        /// done.
        ///
        /// ```
        /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
        /// rt.block_on(async {
        ///     let (a, b) = ringsteal_net::UnixStream::pair()?;
        ///     let chunks = vec![vec![1u8; 100_000], vec![2u8; 100_000]];
        ///     let writer = ringsteal_rt::spawn(async move { a.write_all_vectored(chunks).await.0 });
        ///     let (res, got) = b.read_exact(vec![0; 200_000]).await;
        ///     res?;
        ///     assert!(got[..100_000].iter().all(|&x| x == 1) && got[100_000..].iter().all(|&x| x == 2));
        ///     writer.await.unwrap()?;
        ///     Ok::<(), std::io::Error>(())
        /// })
        /// .unwrap();
        /// ```
        pub async fn write_all_vectored<B: ::ringsteal_rt::buf::IoVecBuf>(
            &self,
            bufs: B,
        ) -> ::ringsteal_rt::buf::BufResult<(), B> {
            self.core().write_all_vectored(bufs).await
        }

        /// Waits until the kernel reports room in the socket's send buffer (or an error),
        /// as tokio's `writable` (at once while the cached readiness says so, else one
        /// one-shot `IORING_OP_POLL_ADD`: see [`ready`](Self::ready)). Then
        /// [`try_write`](Self::try_write) sends. Owned-buffer writes
        /// ([`write_all`](Self::write_all)) wait by themselves; this is for code written
        /// against tokio's readiness API.
        ///
        /// ```
        /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
        /// rt.block_on(async {
        ///     let (a, b) = ringsteal_net::UnixStream::pair()?;
        ///     a.writable().await?; // an empty socket has room
        ///     assert_eq!(a.try_write(b"pong")?, 4);
        ///     let (n, buf) = b.read(Vec::with_capacity(8)).await;
        ///     assert_eq!(&buf[..n?], b"pong");
        ///     Ok::<(), std::io::Error>(())
        /// })
        /// .unwrap();
        /// ```
        pub async fn writable(&self) -> ::std::io::Result<()> {
            self.core().writable().await
        }

        /// Writes from `buf` without waiting, as tokio's `try_write`: what the socket takes
        /// at once, possibly short. `WouldBlock` if its send buffer is full, or while an
        /// owned-buffer write of this stream is in flight (so it never splits one). One
        /// non-blocking `send(2)`, no ring request; a closed peer is `BrokenPipe`, not a
        /// `SIGPIPE`.
        ///
        /// ```
        /// let (a, b) = ringsteal_net::UnixStream::pair().unwrap();
        /// assert_eq!(a.try_write(b"hey").unwrap(), 3);
        /// drop(b);
        /// let err = a.try_write(b"again").unwrap_err();
        /// assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
        /// ```
        pub fn try_write(&self, buf: &[u8]) -> ::std::io::Result<usize> {
            self.core().try_write(buf)
        }

        /// As [`try_write`](Self::try_write), from several buffers in order, as tokio's
        /// `try_write_vectored`: one non-blocking `sendmsg(2)`, possibly short.
        ///
        /// ```
        /// use std::io::IoSlice;
        ///
        /// let (a, b) = ringsteal_net::UnixStream::pair().unwrap();
        /// let bufs = [IoSlice::new(b"length:5"), IoSlice::new(b"hello")];
        /// assert_eq!(a.try_write_vectored(&bufs).unwrap(), 13);
        /// let mut got = [0; 13];
        /// assert_eq!(b.try_read(&mut got).unwrap(), 13);
        /// assert_eq!(&got, b"length:5hello");
        /// ```
        pub fn try_write_vectored(
            &self,
            bufs: &[::std::io::IoSlice<'_>],
        ) -> ::std::io::Result<usize> {
            self.core().try_write_vectored(bufs)
        }
    };
}

/// `AsyncReadOwned` for `$t`, forwarding to its core.
macro_rules! impl_async_read {
    ($t:ty) => {
        impl ::ringsteal_rt::io::AsyncReadOwned for $t {
            fn read<B: ::ringsteal_rt::buf::IoBufMut>(
                &mut self,
                buf: B,
            ) -> impl ::std::future::Future<Output = ::ringsteal_rt::buf::BufResult<usize, B>>
                   + Send {
                self.core().read(buf)
            }
            fn read_exact<B: ::ringsteal_rt::buf::IoBufMut>(
                &mut self,
                buf: B,
            ) -> impl ::std::future::Future<Output = ::ringsteal_rt::buf::BufResult<(), B>> + Send
            {
                self.core().read_exact(buf)
            }
            fn read_buf<A: ::ringsteal_rt::io::AppendBuf + ?Sized>(
                &mut self,
                buf: &mut A,
            ) -> impl ::std::future::Future<Output = ::std::io::Result<usize>> + Send {
                self.core().read_buf(buf)
            }
            fn splice_source(&self) -> Option<::ringsteal_rt::io::SpliceEnd<'_>> {
                Some(self.core().splice_source())
            }
        }
    };
}

/// A full stream's `write_all_then_read`: its write and the read after it as one linked
/// pair where that pays (ADR-0040).
macro_rules! stream_reply_method {
    () => {
        /// Writes all of `out`, then reads once into `buf`: [`write_all`](Self::write_all)
        /// followed by [`read`](Self::read), the step of a request/response server that
        /// answers and waits for the next request. If the write fails the read is not made
        /// (its result is an error of the write's kind).
        ///
        /// A reply that would go by ring anyway (the first write after a read, on a stream
        /// that writes once per read) and a read that would wait go as one pair of linked
        /// requests: a `SEND` with `MSG_WAITALL`, and a `RECV` the kernel starts once the
        /// send is done. One submission and one wake-up of the task for both, where the two
        /// calls cost two of each; the write lane is let go as soon as everything is sent.
        /// Otherwise (a stream that writes in runs, bytes already queued or left over, either
        /// lane busy) it is the two calls. Dropped before it completes, it is a dropped
        /// `write_all` and a dropped `read`: a prefix of `out` may have been sent, and what
        /// the read received is kept for the next read.
        ///
        /// ```
        /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
        /// rt.block_on(async {
        ///     let (server, client) = ringsteal_net::UnixStream::pair()?;
        ///     let echo = ringsteal_rt::spawn(async move {
        ///         let (res, buf) = client.read(Vec::with_capacity(64)).await;
        ///         res?;
        ///         client.write_all(buf).await.0?;
        ///         Ok::<_, std::io::Error>(client)
        ///     });
        ///     let ((sent, _), (n, reply)) =
        ///         server.write_all_then_read(b"ping".to_vec(), Vec::with_capacity(64)).await;
        ///     sent?;
        ///     assert_eq!(&reply[..n?], b"ping");
        ///     echo.await.unwrap()?;
        ///     Ok::<(), std::io::Error>(())
        /// })
        /// .unwrap();
        /// ```
        pub fn write_all_then_read<
            W: ::ringsteal_rt::buf::IoBuf,
            R: ::ringsteal_rt::buf::IoBufMut,
        >(
            &self,
            out: W,
            buf: R,
        ) -> impl ::std::future::Future<
            Output = (
                ::ringsteal_rt::buf::BufResult<(), W>,
                ::ringsteal_rt::buf::BufResult<usize, R>,
            ),
        > + Send
               + '_ {
            self.core().write_all_then_read(out, buf)
        }
    };
}

/// `AsyncWriteOwned` for `$t`, forwarding to its core; `shutdown` shuts the write side.
/// With `reads`, `$t` reads too, and its `write_all_then_read` is the core's.
macro_rules! impl_async_write {
    ($t:ty, reads) => {
        impl_async_write!($t, {
            fn write_all_then_read<
                W: ::ringsteal_rt::buf::IoBuf,
                R: ::ringsteal_rt::buf::IoBufMut,
            >(
                &mut self,
                out: W,
                buf: R,
            ) -> impl ::std::future::Future<
                Output = (
                    ::ringsteal_rt::buf::BufResult<(), W>,
                    ::ringsteal_rt::buf::BufResult<usize, R>,
                ),
            > + Send
            where
                Self: ::ringsteal_rt::io::AsyncReadOwned,
            {
                self.core().write_all_then_read(out, buf)
            }
        });
    };
    ($t:ty) => {
        impl_async_write!($t, {});
    };
    ($t:ty, { $($extra:tt)* }) => {
        impl ::ringsteal_rt::io::AsyncWriteOwned for $t {
            $($extra)*
            fn write<B: ::ringsteal_rt::buf::IoBuf>(
                &mut self,
                buf: B,
            ) -> impl ::std::future::Future<Output = ::ringsteal_rt::buf::BufResult<usize, B>>
                   + Send {
                self.core().write(buf)
            }
            fn writev<B: ::ringsteal_rt::buf::IoVecBuf>(
                &mut self,
                bufs: B,
            ) -> impl ::std::future::Future<Output = ::ringsteal_rt::buf::BufResult<usize, B>>
                   + Send {
                self.core().writev(bufs)
            }
            fn write_all<B: ::ringsteal_rt::buf::IoBuf>(
                &mut self,
                buf: B,
            ) -> impl ::std::future::Future<Output = ::ringsteal_rt::buf::BufResult<(), B>> + Send
            {
                self.core().write_all(buf)
            }
            fn write_all_vectored<B: ::ringsteal_rt::buf::IoVecBuf>(
                &mut self,
                bufs: B,
            ) -> impl ::std::future::Future<Output = ::ringsteal_rt::buf::BufResult<(), B>> + Send
            {
                self.core().write_all_vectored(bufs)
            }
            fn shutdown(
                &mut self,
            ) -> impl ::std::future::Future<Output = ::std::io::Result<()>> + Send {
                self.core().shutdown(::std::net::Shutdown::Write)
            }
            fn splice_sink(&self) -> Option<::ringsteal_rt::io::SpliceEnd<'_>> {
                Some(self.core().splice_sink())
            }
        }
    };
}

/// `PollSource` for `$t` (poll-based I/O, `ringsteal-compat`), with the directions it uses.
macro_rules! impl_poll_source {
    ($t:ty, read: $read:expr, write: $write:expr) => {
        impl ::ringsteal_rt::io::PollSource for $t {
            fn poll_parts(&self) -> ::ringsteal_rt::io::PollParts {
                self.core().poll_parts($read, $write)
            }
        }
    };
}

/// The owned and borrowed halves of a stream type, in the calling module: `OwnedReadHalf`,
/// `OwnedWriteHalf` (shuts the write side down when dropped, unless `forget`), `ReadHalf`,
/// `WriteHalf`, `ReuniteError`.
macro_rules! stream_halves {
    ($stream:ident, $doc_stream:literal, $example:literal) => {
        use crate::stream::StreamCore;

        #[doc = concat!("The reading half of a [`", $doc_stream, "`], from [`into_split`](", $doc_stream, "::into_split).")]
        ///
        /// It may be used from another task, on another shard, while the write half is in
        /// use: each read is submitted on the ring of the shard that polls it.
        ///
        #[doc = $example]
        #[derive(Debug)]
        pub struct OwnedReadHalf {
            core: StreamCore,
        }

        #[doc = concat!("The writing half of a [`", $doc_stream, "`], from [`into_split`](", $doc_stream, "::into_split).")]
        ///
        /// Dropping it shuts down the write side of the connection (the peer reads end of
        /// stream), as in tokio; [`forget`](Self::forget) drops it without.
        ///
        #[doc = $example]
        #[derive(Debug)]
        pub struct OwnedWriteHalf {
            core: StreamCore,
            shutdown_on_drop: bool,
        }

        #[doc = concat!("The reading half of a borrowed [`", $doc_stream, "`], from [`split`](", $doc_stream, "::split).")]
        ///
        #[doc = $example]
        #[derive(Debug)]
        pub struct ReadHalf<'a> {
            core: &'a StreamCore,
        }

        #[doc = concat!("The writing half of a borrowed [`", $doc_stream, "`], from [`split`](", $doc_stream, "::split).")]
        ///
        #[doc = $example]
        #[derive(Debug)]
        pub struct WriteHalf<'a> {
            core: &'a StreamCore,
        }

        /// Two halves that came from different streams: [`OwnedReadHalf::reunite`] gives
        /// them back.
        ///
        #[doc = $example]
        #[derive(Debug)]
        pub struct ReuniteError(pub OwnedReadHalf, pub OwnedWriteHalf);

        impl ::std::fmt::Display for ReuniteError {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str("tried to reunite halves that are not from the same stream")
            }
        }

        impl ::std::error::Error for ReuniteError {}

        pub(crate) fn split_owned(core: StreamCore) -> (OwnedReadHalf, OwnedWriteHalf) {
            (
                OwnedReadHalf { core: core.clone() },
                OwnedWriteHalf {
                    core,
                    shutdown_on_drop: true,
                },
            )
        }

        pub(crate) fn split_borrowed(core: &StreamCore) -> (ReadHalf<'_>, WriteHalf<'_>) {
            (ReadHalf { core }, WriteHalf { core })
        }

        impl OwnedReadHalf {
            fn core(&self) -> &StreamCore {
                &self.core
            }

            /// Joins the halves back into a stream.
            ///
            /// # Errors
            /// [`ReuniteError`] (holding both halves) if they are from different streams.
            pub fn reunite(self, other: OwnedWriteHalf) -> Result<$stream, ReuniteError> {
                if !self.core.same_stream(&other.core) {
                    return Err(ReuniteError(self, other));
                }
                let mut other = other;
                other.shutdown_on_drop = false;
                drop(other);
                Ok($stream::from_core(self.core))
            }

            stream_read_methods!();
            stream_ready_method!();
        }

        impl OwnedWriteHalf {
            fn core(&self) -> &StreamCore {
                &self.core
            }

            /// Joins the halves back into a stream, as [`OwnedReadHalf::reunite`] does
            /// (tokio has it on both halves).
            ///
            /// # Errors
            /// [`ReuniteError`] (holding both halves) if they are from different streams.
            pub fn reunite(self, other: OwnedReadHalf) -> Result<$stream, ReuniteError> {
                other.reunite(self)
            }

            /// Drops the half without shutting down the write side.
            pub fn forget(mut self) {
                self.shutdown_on_drop = false;
            }

            /// Shuts down the write side now (a `shutdown(2)`, which never blocks), after
            /// every earlier write: the peer reads end of stream.
            pub async fn shutdown(&self) -> ::std::io::Result<()> {
                self.core.shutdown(::std::net::Shutdown::Write).await
            }

            stream_write_methods!();
            stream_ready_method!();
        }

        impl Drop for OwnedWriteHalf {
            fn drop(&mut self) {
                if self.shutdown_on_drop {
                    // Errors (already shut down, not connected) mean there is nothing to do.
                    let _ = $crate::sockopt::shutdown(self.core.fd(), ::std::net::Shutdown::Write);
                }
            }
        }

        impl ReadHalf<'_> {
            fn core(&self) -> &StreamCore {
                self.core
            }
            stream_read_methods!();
            stream_ready_method!();
        }

        impl WriteHalf<'_> {
            fn core(&self) -> &StreamCore {
                self.core
            }
            stream_write_methods!();
            stream_ready_method!();
        }

        impl_async_read!(OwnedReadHalf);
        impl_async_read!(&OwnedReadHalf);
        impl_async_read!(ReadHalf<'_>);
        impl_async_write!(OwnedWriteHalf);
        impl_async_write!(&OwnedWriteHalf);
        impl_async_write!(WriteHalf<'_>);

        impl_poll_source!(OwnedReadHalf, read: true, write: false);
        impl_poll_source!(OwnedWriteHalf, read: false, write: true);
        impl_poll_source!(ReadHalf<'_>, read: true, write: false);
        impl_poll_source!(WriteHalf<'_>, read: false, write: true);

        impl_as_fd!(OwnedReadHalf, |h| h.core.fd().as_raw_fd());
        impl_as_fd!(OwnedWriteHalf, |h| h.core.fd().as_raw_fd());
        impl_as_fd!(ReadHalf<'_>, |h| h.core.fd().as_raw_fd());
        impl_as_fd!(WriteHalf<'_>, |h| h.core.fd().as_raw_fd());

        /// The stream the half belongs to, as tokio's halves give it: for its socket
        /// options and addresses (its `&self` reads and writes work too, sharing the half's
        /// lanes).
        impl AsRef<$stream> for OwnedReadHalf {
            fn as_ref(&self) -> &$stream {
                $stream::from_core_ref(&self.core)
            }
        }

        /// As for [`OwnedReadHalf`]'s.
        impl AsRef<$stream> for OwnedWriteHalf {
            fn as_ref(&self) -> &$stream {
                $stream::from_core_ref(&self.core)
            }
        }

        /// As for [`OwnedReadHalf`]'s.
        impl AsRef<$stream> for ReadHalf<'_> {
            fn as_ref(&self) -> &$stream {
                $stream::from_core_ref(self.core)
            }
        }

        /// As for [`OwnedReadHalf`]'s.
        impl AsRef<$stream> for WriteHalf<'_> {
            fn as_ref(&self) -> &$stream {
                $stream::from_core_ref(self.core)
            }
        }
    };
}
