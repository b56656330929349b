//! tokio's readiness methods on the datagram sockets (`UdpSocket`, `UnixDatagram`), written
//! once as a macro over the type's `fd`, `kept` and `readiness` fields: `ready`, `readable`
//! and `writable` answer from the socket's readiness cache, else wait (one one-shot
//! `IORING_OP_POLL_ADD`, whose answer is cached; readable at once while a datagram a dropped
//! receive took is kept); `try_recv`, `try_send` and `try_io` make one non-blocking system
//! call after a kept datagram, if any, and clear the cache on `WouldBlock`; the `poll_`
//! forms wait for those the same way (`datagram_poll.rs`). The addressed forms
//! (`try_recv_from`, `poll_send_to`, ...) sit with each type: their addresses differ.
//!
//! May not: hold logic beyond the kept datagrams' check in `ready` and `async_io`'s loop;
//! the rest forwards to `datagram_poll.rs` or the runtime's helpers.

/// `readable`, `writable`, `try_recv`, `try_send` and their `poll_` forms for a datagram
/// socket with an `fd: SharedFd` field, a `kept: Arc<KeptDatagrams>` field (datagrams of
/// dropped receives, served first) and a `readiness: ReadinessCache` field. `$pair` is the doc examples' code that makes two connected sockets `a`
/// and `b` inside an async block returning `io::Result`.
macro_rules! datagram_readiness_methods {
    ($pair:literal) => {
        /// Waits until a datagram is queued (or an error is pending), as tokio's
        /// `readable`: at once while the socket's cached readiness says so, else one
        /// one-shot `IORING_OP_POLL_ADD` (see [`ready`](Self::ready)). Then
        /// [`try_recv`](Self::try_recv) takes it; it may say `WouldBlock` if another
        /// receiver took the datagram first. Owned-buffer receives wait by themselves; this
        /// is for code written against tokio's readiness API.
        ///
        #[doc = concat!(
                    "```\nlet rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();\n",
                    "rt.block_on(async {\n", $pair,
                    "    a.send(b\"one\".to_vec()).await.0?;\n",
                    "    b.readable().await?;\n",
                    "    let mut buf = [0; 8];\n",
                    "    assert_eq!(b.try_recv(&mut buf)?, 3);\n",
                    "    Ok::<(), std::io::Error>(())\n",
                    "})\n.unwrap();\n```"
                )]
        pub async fn readable(&self) -> ::std::io::Result<()> {
            self.ready(::ringsteal_rt::io::Interest::READABLE)
                .await
                .map(drop)
        }

        /// Waits until the socket is ready for what `interest` names, as tokio's `ready`,
        /// and says for what. As tokio's, it answers at once from the readiness the socket
        /// cached (shared with the `poll_*` methods) until a `try_` call's `WouldBlock`
        /// clears it; otherwise one one-shot `IORING_OP_POLL_ADD` for both directions asks
        /// the kernel, and its answer is cached. So a readiness that may be stale says
        /// ready, and the `try_` call after it says `WouldBlock`: loop, as with tokio.
        ///
        #[doc = concat!(
                    "```\nuse ringsteal_rt::io::Interest;\n\n",
                    "let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();\n",
                    "rt.block_on(async {\n", $pair,
                    "    let ready = a.ready(Interest::READABLE | Interest::WRITABLE).await?;\n",
                    "    assert!(ready.is_writable() && !ready.is_readable());\n",
                    "    a.try_send(b\"three\")?;\n",
                    "    assert!(b.ready(Interest::READABLE).await?.is_readable());\n",
                    "    Ok::<(), std::io::Error>(())\n",
                    "})\n.unwrap();\n```"
                )]
        pub async fn ready(
            &self,
            interest: ::ringsteal_rt::io::Interest,
        ) -> ::std::io::Result<::ringsteal_rt::io::Ready> {
            if interest.is_readable() {
                // A datagram a dropped receive took (or is taking) waits for the next one.
                self.kept.abandoned_ended().await;
                if self.kept.any() {
                    return Ok(::ringsteal_rt::io::Ready::READABLE);
                }
            }
            let event = self.readiness.ready(&self.fd, interest).await?;
            Ok(event.ready())
        }

        /// Waits until the socket's send buffer has room (or an error is pending), as
        /// tokio's `writable`: at once while the cached readiness says so, else one
        /// one-shot `IORING_OP_POLL_ADD` (see [`ready`](Self::ready)). Then
        /// [`try_send`](Self::try_send) sends.
        ///
        #[doc = concat!(
                    "```\nlet rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();\n",
                    "rt.block_on(async {\n", $pair,
                    "    a.writable().await?;\n",
                    "    assert_eq!(a.try_send(b\"two\")?, 3);\n",
                    "    let (n, buf) = b.recv(Vec::with_capacity(8)).await;\n",
                    "    assert_eq!(&buf[..n?], b\"two\");\n",
                    "    Ok::<(), std::io::Error>(())\n",
                    "})\n.unwrap();\n```"
                )]
        pub async fn writable(&self) -> ::std::io::Result<()> {
            self.ready(::ringsteal_rt::io::Interest::WRITABLE)
                .await
                .map(drop)
        }

        /// Receives one datagram from the connected address into `buf` without waiting, as
        /// tokio's `try_recv` (the rest of a longer datagram is discarded). `WouldBlock` if
        /// none is queued. One non-blocking `recvfrom(2)`, no ring request.
        ///
        #[doc = concat!(
                    "```\nlet rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();\n",
                    "rt.block_on(async {\n", $pair,
                    "    let mut buf = [0; 8];\n",
                    "    let err = b.try_recv(&mut buf).unwrap_err();\n",
                    "    assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock);\n",
                    "    Ok::<(), std::io::Error>(())\n",
                    "})\n.unwrap();\n```"
                )]
        pub fn try_recv(&self, buf: &mut [u8]) -> ::std::io::Result<usize> {
            self.datagram_io().try_recv_from(buf, false).map(|(n, _)| n)
        }

        /// As [`try_recv`](Self::try_recv), into the next chunk of `buf`, which it then
        /// advances, as tokio's `try_recv_buf` (feature `bytes`): a `Vec<u8>` or `BytesMut`
        /// with no room left grows first (by as little as 64 bytes: reserve room for the
        /// longest datagram you expect, or its tail is discarded).
        ///
        #[doc = concat!(
                    "```
let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
",
                    "rt.block_on(async {
", $pair,
                    "    a.try_send(b\"one\")?;
",
                    "    b.readable().await?;
",
                    "    let mut buf = Vec::with_capacity(1500);
",
                    "    assert_eq!(b.try_recv_buf(&mut buf)?, 3);
",
                    "    assert_eq!(buf, b\"one\");
",
                    "    Ok::<(), std::io::Error>(())
",
                    "})
.unwrap();
```"
                )]
        #[cfg(feature = "bytes")]
        pub fn try_recv_buf<B: ::bytes::BufMut>(&self, buf: &mut B) -> ::std::io::Result<usize> {
            $crate::recv_buf::try_recv_buf(self.datagram_io(), buf).map(|(n, _)| n)
        }

        /// Receives one datagram from the connected address into the next chunk of `buf`,
        /// which it then advances, waiting for one, as tokio's `recv_buf` (feature `bytes`;
        /// room as for [`try_recv_buf`](Self::try_recv_buf)). It waits for readiness and
        /// receives with one `recvfrom(2)`, so `buf` stays with the caller: cancel-safe, as
        /// tokio's (dropped, it has taken nothing).
        ///
        #[doc = concat!(
                    "```
let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
",
                    "rt.block_on(async {
", $pair,
                    "    let mut buf = Vec::with_capacity(1500);
",
                    "    let receive = b.recv_buf(&mut buf);
",
                    "    a.send(b\"one\".to_vec()).await.0?;
",
                    "    assert_eq!(receive.await?, 3);
",
                    "    assert_eq!(buf, b\"one\");
",
                    "    Ok::<(), std::io::Error>(())
",
                    "})
.unwrap();
```"
                )]
        #[cfg(feature = "bytes")]
        pub async fn recv_buf<B: ::bytes::BufMut>(&self, buf: &mut B) -> ::std::io::Result<usize> {
            $crate::recv_buf::until_received(|| self.try_recv_buf(buf), || self.readable()).await
        }

        /// Sends `buf` as one datagram to the connected address without waiting, as
        /// tokio's `try_send`. `WouldBlock` if the send buffer is full. One non-blocking
        /// `sendto(2)`, no ring request.
        ///
        #[doc = concat!(
                    "```\nlet rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();\n",
                    "rt.block_on(async {\n", $pair,
                    "    assert_eq!(a.try_send(b\"now\")?, 3);\n",
                    "    b.readable().await?;\n",
                    "    let mut buf = [0; 8];\n",
                    "    assert_eq!(b.try_recv(&mut buf)?, 3);\n",
                    "    Ok::<(), std::io::Error>(())\n",
                    "})\n.unwrap();\n```"
                )]
        pub fn try_send(&self, buf: &[u8]) -> ::std::io::Result<usize> {
            self.datagram_io().try_send_to(buf, None)
        }

        /// Polls until a receive would not wait, as tokio's `poll_recv_ready`: for
        /// poll-based code that then calls [`try_recv`](Self::try_recv) (whose
        /// `WouldBlock` makes the next call wait for the kernel). Only the task of the
        /// latest call is woken, as in tokio (one poll is kept across calls).
        ///
        #[doc = concat!(
                    "```\nuse std::future::poll_fn;\n\n",
                    "let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();\n",
                    "rt.block_on(async {\n", $pair,
                    "    a.try_send(b\"ready\")?;\n",
                    "    poll_fn(|cx| b.poll_recv_ready(cx)).await?;\n",
                    "    let mut buf = [0; 8];\n",
                    "    assert_eq!(b.try_recv(&mut buf)?, 5);\n",
                    "    Ok::<(), std::io::Error>(())\n",
                    "})\n.unwrap();\n```"
                )]
        pub fn poll_recv_ready(
            &self,
            cx: &mut ::std::task::Context<'_>,
        ) -> ::std::task::Poll<::std::io::Result<()>> {
            self.datagram_io().poll_recv_ready(cx)
        }

        /// Polls until a send would not wait, as tokio's `poll_send_ready` (see
        /// [`poll_recv_ready`](Self::poll_recv_ready)).
        ///
        #[doc = concat!(
                    "```\nuse std::future::poll_fn;\n\n",
                    "let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();\n",
                    "rt.block_on(async {\n", $pair,
                    "    poll_fn(|cx| a.poll_send_ready(cx)).await?;\n",
                    "    assert_eq!(a.try_send(b\"room\")?, 4);\n",
                    "    Ok::<(), std::io::Error>(())\n",
                    "})\n.unwrap();\n```"
                )]
        pub fn poll_send_ready(
            &self,
            cx: &mut ::std::task::Context<'_>,
        ) -> ::std::task::Poll<::std::io::Result<()>> {
            self.datagram_io().poll_send_ready(cx)
        }

        /// Polls to receive one datagram from the connected address into `buf`, as
        /// tokio's `poll_recv`, and gives its length (tokio's fills a `ReadBuf`; this one
        /// takes a slice, as [`try_recv`](Self::try_recv) does). A datagram longer than
        /// `buf` is cut to it. Only the task of the latest call is woken.
        ///
        #[doc = concat!(
                    "```\nuse std::future::poll_fn;\n\n",
                    "let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();\n",
                    "rt.block_on(async {\n", $pair,
                    "    let sent = poll_fn(|cx| a.poll_send(cx, b\"polled\")).await?;\n",
                    "    let mut buf = [0; 8];\n",
                    "    let n = poll_fn(|cx| b.poll_recv(cx, &mut buf)).await?;\n",
                    "    assert_eq!((sent, &buf[..n]), (6, &b\"polled\"[..]));\n",
                    "    Ok::<(), std::io::Error>(())\n",
                    "})\n.unwrap();\n```"
                )]
        pub fn poll_recv(
            &self,
            cx: &mut ::std::task::Context<'_>,
            buf: &mut [u8],
        ) -> ::std::task::Poll<::std::io::Result<usize>> {
            self.datagram_io()
                .poll_recv_from(cx, buf, false)
                .map_ok(|(n, _)| n)
        }

        /// Polls to send `buf` as one datagram to the connected address, as tokio's
        /// `poll_send` (see [`poll_recv`](Self::poll_recv) for an example).
        pub fn poll_send(
            &self,
            cx: &mut ::std::task::Context<'_>,
            buf: &[u8],
        ) -> ::std::task::Poll<::std::io::Result<usize>> {
            self.datagram_io().poll_send_to(cx, buf, None)
        }

        /// Runs `f`, a non-blocking system call of yours on this socket (`sendmsg` with
        /// segmentation offload, `recvmmsg`, ...; take the descriptor with `as_raw_fd`), as
        /// tokio's `try_io`: its `WouldBlock` clears the readiness the `poll_*_ready`
        /// methods cached, so the next one waits for the kernel. `f` is always called
        /// (tokio's skips it when the cache says not ready; the system call says the same).
        ///
        /// Unlike tokio's, the descriptor is in blocking mode (io_uring needs no
        /// `O_NONBLOCK`): pass `MSG_DONTWAIT` to your call, or make the socket
        /// non-blocking first (`socket2::SockRef::from(&socket).set_nonblocking(true)`;
        /// ringsteal's own requests work either way), or `f` blocks the shard's thread.
        /// Return every error to your caller: a loop that treats any error as `WouldBlock`
        /// (as some tokio code does) spins while the `Other` below lasts.
        ///
        /// `f` reads the kernel, not the datagrams a dropped owned receive kept (see the
        /// type's docs): while one is kept, a readable `try_io` fails with `Other` instead
        /// of calling `f` (the readiness methods report the kept datagram, so a loop would
        /// otherwise never wait); take them with `try_recv` first. Poll-based code that only
        /// uses the `poll_` and `try_` methods never meets it.
        ///
        /// # Errors
        /// `f`'s, or the kept datagram's `Other`.
        ///
        #[doc = concat!(
                    "```\nuse std::future::poll_fn;\nuse std::os::fd::AsRawFd;\n",
                    "use ringsteal_rt::io::Interest;\n\n",
                    "let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();\n",
                    "rt.block_on(async {\n", $pair,
                    "    a.try_send(b\"raw\")?;\n",
                    "    poll_fn(|cx| b.poll_recv_ready(cx)).await?;\n",
                    "    let mut buf = [0u8; 8];\n",
                    "    let n = b.try_io(Interest::READABLE, || {\n",
                    "        // SAFETY: `buf` is valid for writes of its length.\n",
                    "        let n = unsafe { libc::recv(b.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };\n",
                    "        if n < 0 { Err(std::io::Error::last_os_error()) } else { Ok(n as usize) }\n",
                    "    })?;\n",
                    "    assert_eq!(&buf[..n], b\"raw\");\n",
                    "    Ok::<(), std::io::Error>(())\n",
                    "})\n.unwrap();\n```"
                )]
        pub fn try_io<R>(
            &self,
            interest: ::ringsteal_rt::io::Interest,
            f: impl FnOnce() -> ::std::io::Result<R>,
        ) -> ::std::io::Result<R> {
            self.datagram_io().try_io(interest, f)
        }

        /// Runs `f` each time the socket is ready for `interest` (see
        /// [`ready`](Self::ready)), until it returns something other than `WouldBlock`, as
        /// tokio's `async_io`; `f` as for [`try_io`](Self::try_io).
        ///
        /// # Errors
        /// `f`'s, the wait's, or [`try_io`](Self::try_io)'s.
        ///
        #[doc = concat!(
                    "```\nuse std::os::fd::AsRawFd;\nuse ringsteal_rt::io::Interest;\n\n",
                    "let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();\n",
                    "rt.block_on(async {\n", $pair,
                    "    a.send(b\"later\".to_vec()).await.0?;\n",
                    "    let mut buf = [0u8; 8];\n",
                    "    let n = b.async_io(Interest::READABLE, || {\n",
                    "        // SAFETY: `buf` is valid for writes of its length.\n",
                    "        let n = unsafe { libc::recv(b.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };\n",
                    "        if n < 0 { Err(std::io::Error::last_os_error()) } else { Ok(n as usize) }\n",
                    "    }).await?;\n",
                    "    assert_eq!(&buf[..n], b\"later\");\n",
                    "    Ok::<(), std::io::Error>(())\n",
                    "})\n.unwrap();\n```"
                )]
        pub async fn async_io<R>(
            &self,
            interest: ::ringsteal_rt::io::Interest,
            mut f: impl FnMut() -> ::std::io::Result<R>,
        ) -> ::std::io::Result<R> {
            loop {
                self.ready(interest).await?;
                match self.try_io(interest, &mut f) {
                    Err(e) if e.kind() == ::std::io::ErrorKind::WouldBlock => continue,
                    done => return done,
                }
            }
        }

        /// The socket's parts the non-waiting receives and sends go through.
        fn datagram_io(&self) -> $crate::datagram_poll::DatagramIo<'_> {
            $crate::datagram_poll::DatagramIo {
                fd: &self.fd,
                kept: &self.kept,
                cache: &self.readiness,
            }
        }
    };
}
