//! The owned-buffer I/O traits and helpers over real sockets and files, under every wake
//! mechanism and ring mode: `BufReader`, `BufWriter`, length-delimited frames (cancel-safe),
//! `copy` (spliced and buffered, with a source's kept bytes first) and files read and
//! written at their position.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::time::Duration;

use common::{unique, with_every_runtime, Rng};
use ringsteal_fs::File;
use ringsteal_net::TcpStream;
use ringsteal_rt::io::{
    self, AsyncReadOwned, AsyncWriteOwned, BufReader, BufWriter, LengthDelimited,
};
use ringsteal_rt::time::timeout;
use ringsteal_rt::Placement;
use support::*;

#[test]
fn a_buf_reader_reads_lines_from_a_socket() {
    with_every_runtime("buf reader lines", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            client
                .write_all(b"GET /index HTTP/1.1\r\nHost: example\r\n\r\nbody".to_vec())
                .await
                .0
                .unwrap();
            drop(client);
            let mut reader = BufReader::with_capacity(16, server);
            let mut lines = Vec::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).await.unwrap() == 0 {
                    break;
                }
                lines.push(line);
            }
            assert_eq!(
                lines,
                [
                    "GET /index HTTP/1.1\r\n",
                    "Host: example\r\n",
                    "\r\n",
                    "body"
                ]
            );
        })
    });
}

#[test]
fn a_buf_writer_sends_many_small_writes_as_one() {
    with_every_runtime("buf writer batching", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let mut writer = BufWriter::new(client);
            let before = ops_completed();
            for i in 0..100u8 {
                writer.write_all(vec![i; 10]).await.0.unwrap();
            }
            assert_eq!(ops_completed(), before, "nothing sent before the flush");
            assert_eq!(bytes_waiting(&server), 0, "nothing sent before the flush");
            writer.flush().await.unwrap();
            // One write for the whole buffer: an inline send, or one send request.
            assert!(
                ops_completed() <= before + 1,
                "one write for the whole buffer"
            );
            until_bytes_waiting(&server, 1000).await;
            // A write larger than the buffer goes straight out, after what is buffered.
            writer.write_all(b"tail".to_vec()).await.0.unwrap();
            writer.write_all(vec![0xee; 20_000]).await.0.unwrap();
            AsyncWriteOwned::shutdown(&mut writer).await.unwrap();
            let all = read_to_eof(&server).await;
            assert_eq!(all.len(), 1000 + 4 + 20_000);
            assert!((0..100).all(|i| all[i * 10..i * 10 + 10].iter().all(|&b| b == i as u8)));
            assert_eq!(&all[1000..1004], b"tail");
        })
    });
}

#[test]
fn borrowed_slices_and_literals_go_through_a_buf_writer_from_a_spawned_task() {
    with_every_runtime("buf writer slices", 2, |config, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            // What a ported tokio reply writer does: literals and borrowed strings, from a
            // task on another shard, with no owned buffer of its own.
            let writer = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let mut w = BufWriter::with_capacity(64, client);
                for i in 0..1_000u32 {
                    let value = format!("value-{i}");
                    w.write_slice(b"$").await?;
                    w.write_slice(value.len().to_string().as_bytes()).await?;
                    w.write_slice(b"\r\n").await?;
                    w.write_slice(value.as_bytes()).await?;
                    w.write_slice(b"\r\n").await?;
                }
                AsyncWriteOwned::shutdown(&mut w).await
            });
            let all = read_to_eof(&server).await;
            writer.await.unwrap().unwrap();
            let want: String = (0..1_000u32)
                .map(|i| {
                    let value = format!("value-{i}");
                    format!("${}\r\n{value}\r\n", value.len())
                })
                .collect();
            assert!(
                all == want.as_bytes(),
                "{config:?}: bytes lost or reordered"
            );
        })
    });
}

#[test]
fn frames_cross_the_wire_whole_even_when_reads_are_dropped() {
    const FRAMES: u64 = 300;
    with_every_runtime("length-delimited frames", 2, |config, rt| {
        rt.block_on(async move {
            let (client, server) = tcp_pair().await;
            let writer = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let mut out = LengthDelimited::new(client);
                let mut rng = Rng::new(1);
                for i in 0..FRAMES {
                    let len = rng.below(if i % 50 == 0 { 300_000 } else { 3_000 }) as usize;
                    out.write_frame(stream_bytes(i, 0, len)).await.0.unwrap();
                    // Let the reader catch up, so it often waits for the next frame.
                    ringsteal_rt::yield_now().await;
                }
            });
            let mut input = LengthDelimited::new(server);
            let mut rng = Rng::new(config as u64);
            let (mut i, mut dropped) = (0, 0);
            while i < FRAMES {
                // Sometimes give up on a frame right after starting it, or after a few
                // microseconds, and ask again.
                let frame = match rng.below(3) {
                    0 => {
                        let mut read = Box::pin(input.read_frame());
                        match poll_once(&mut read).await {
                            Some(f) => f,
                            None => {
                                dropped += 1;
                                continue;
                            }
                        }
                    }
                    1 => match timeout(Duration::from_micros(rng.below(50)), input.read_frame())
                        .await
                    {
                        Ok(f) => f,
                        Err(_) => {
                            dropped += 1;
                            continue;
                        }
                    },
                    _ => input.read_frame().await,
                };
                let frame = frame.unwrap().expect("a frame, not the end");
                check_stream(i, 0, &frame);
                i += 1;
            }
            writer.await.unwrap();
            assert!(
                input.read_frame().await.unwrap().is_none(),
                "clean end after the last frame"
            );
            assert!(dropped > 0);
        })
    });
}

#[test]
fn read_buf_under_timeouts_and_dropped_polls_loses_no_byte() {
    // The port of a tokio frame reader: `read_buf` into a buffer the caller keeps, raced
    // against short timeouts and dropped after one poll. The buffer must hold the whole
    // stream, in order, at the end.
    const LEN: usize = 1 << 20;
    with_every_runtime("read_buf under timeouts", 2, |config, rt| {
        rt.block_on(async move {
            let (client, server) = tcp_pair().await;
            let writer = ringsteal_rt::spawn_with(Placement::Pinned(1), feed(client, 9, LEN));
            let mut got = Vec::new();
            let mut rng = Rng::new(config as u64);
            let mut dropped = 0;
            loop {
                let n = match rng.below(3) {
                    0 => {
                        let mut read = Box::pin(server.read_buf(&mut got));
                        match poll_once(&mut read).await {
                            Some(n) => n,
                            None => {
                                dropped += 1;
                                continue;
                            }
                        }
                    }
                    1 => match timeout(
                        Duration::from_micros(rng.below(50)),
                        server.read_buf(&mut got),
                    )
                    .await
                    {
                        Ok(n) => n,
                        Err(_) => {
                            dropped += 1;
                            continue;
                        }
                    },
                    _ => server.read_buf(&mut got).await,
                };
                if n.unwrap() == 0 {
                    break;
                }
            }
            writer.await.unwrap();
            assert_eq!(got.len(), LEN, "{config:?}");
            check_stream(9, 0, &got);
            assert!(dropped > 0);
        })
    });
}

/// Sends `len` bytes of stream `seed` on `w`, then ends the stream.
async fn feed(mut w: impl AsyncWriteOwned, seed: u64, len: usize) {
    let mut pos = 0;
    while pos < len {
        let n = 70_001.min(len - pos);
        w.write_all(stream_bytes(seed, pos as u64, n))
            .await
            .0
            .unwrap();
        pos += n;
    }
    w.shutdown().await.unwrap();
}

#[test]
fn copy_moves_one_socket_into_another_spliced_or_buffered() {
    const LEN: usize = 3 << 20;
    with_every_runtime("copy socket to socket", 2, |_, rt| {
        rt.block_on(async {
            for spliced in [true, false] {
                // `copy` itself copies from sockets through a buffer; `copy_spliced` splices.
                let (src_client, mut src) = tcp_pair().await;
                let (mut dst, dst_server) = tcp_pair().await;
                let feeder =
                    ringsteal_rt::spawn_with(Placement::Pinned(1), feed(src_client, 21, LEN));
                let copier = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                    let n = if spliced {
                        io::copy_spliced(&mut src, &mut dst).await
                    } else {
                        io::copy(&mut src, &mut dst).await
                    };
                    dst.shutdown(std::net::Shutdown::Write).await.unwrap();
                    n
                });
                let all = read_to_eof(&dst_server).await;
                assert_eq!(copier.await.unwrap().unwrap(), LEN as u64);
                feeder.await.unwrap();
                assert_eq!(all.len(), LEN);
                check_stream(21, 0, &all);
            }
        })
    });
}

#[test]
fn copy_sends_the_bytes_a_dropped_read_kept_before_the_rest() {
    with_every_runtime("copy after a dropped read", 1, |_, rt| {
        rt.block_on(async {
            let (src_client, mut src) = tcp_pair().await;
            let (mut dst, dst_server) = tcp_pair().await;
            let mut read = Box::pin(src.read(Vec::with_capacity(100)));
            assert!(poll_once(&mut read).await.is_none());
            let before = ops_completed();
            send_outside_the_ring(&src_client, &stream_bytes(4, 0, 100));
            until_ops_completed(before, 1).await;
            drop(read); // its 100 bytes are kept by `src`
            let feeder = ringsteal_rt::spawn(async move {
                src_client
                    .write_all(stream_bytes(4, 100, 200_000))
                    .await
                    .0
                    .unwrap();
            });
            let copier = ringsteal_rt::spawn(async move {
                feeder.await.unwrap();
                // Ends the source: the client is gone once the feeder is done. Spliced, so
                // the kept bytes must go into the pipe ahead of the spliced ones.
                let n = io::copy_spliced(&mut src, &mut dst).await.unwrap();
                dst.shutdown(std::net::Shutdown::Write).await.unwrap();
                n
            });
            let all = read_to_eof(&dst_server).await;
            assert_eq!(copier.await.unwrap(), 200_100);
            check_stream(4, 0, &all);
            assert_eq!(all.len(), 200_100);
        })
    });
}

#[test]
fn copy_splices_a_file_into_a_socket_and_buffers_a_socket_into_a_file() {
    const LEN: usize = 2 << 20;
    with_every_runtime("copy file and socket", 1, |_, rt| {
        rt.block_on(async {
            let dir = std::env::temp_dir().join(format!(
                "ringsteal-net-copy-{}-{}",
                std::process::id(),
                unique()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("src"), stream_bytes(8, 0, LEN)).unwrap();

            // File to socket: spliced. A plain thread drains the socket, so every op counted
            // is the copy's own: a handful of megabyte splices, not 64 KiB reads and writes.
            let (mut client, server) = tcp_pair().await;
            let mut std_server = server.into_std().unwrap();
            let receiver = std::thread::spawn(move || {
                let mut all = Vec::new();
                std::io::Read::read_to_end(&mut std_server, &mut all).unwrap();
                all
            });
            let mut file = File::open(dir.join("src")).await.unwrap();
            let before = ops_completed();
            assert_eq!(io::copy(&mut file, &mut client).await.unwrap(), LEN as u64);
            let ops = ops_completed() - before;
            assert!(ops <= 16, "{ops} ops: the file was not spliced");
            drop(client);
            let sent = receiver.join().unwrap();
            assert_eq!(sent.len(), LEN);
            check_stream(8, 0, &sent);

            // Socket to file: through a buffer.
            let (client, mut server) = tcp_pair().await;
            let mut std_client = client.into_std().unwrap();
            let sender = std::thread::spawn(move || {
                std::io::Write::write_all(&mut std_client, &stream_bytes(9, 0, LEN)).unwrap();
            });
            let mut out = File::create(dir.join("dst")).await.unwrap();
            assert_eq!(io::copy(&mut server, &mut out).await.unwrap(), LEN as u64);
            sender.join().unwrap();
            let copied = std::fs::read(dir.join("dst")).unwrap();
            assert_eq!(copied.len(), LEN);
            check_stream(9, 0, &copied);
            std::fs::remove_dir_all(dir).unwrap();
        })
    });
}

#[test]
fn a_file_reads_and_writes_at_its_position_through_the_traits() {
    with_every_runtime("file cursor", 1, |_, rt| {
        rt.block_on(async {
            let path = std::env::temp_dir().join(format!(
                "ringsteal-net-cursor-{}-{}",
                std::process::id(),
                unique()
            ));
            let mut f = File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&path)
                .await
                .unwrap();
            f.write_all(b"line one\nline two\n".to_vec())
                .await
                .0
                .unwrap();
            f.write_all_vectored((b"line ".to_vec(), b"three\n".to_vec()))
                .await
                .0
                .unwrap();
            // Positional reads neither use nor move the position.
            let (res, head) = f.read_at(Vec::with_capacity(4), 0).await;
            assert_eq!(&head[..res.unwrap()], b"line");
            let (res, rest) = f.read_to_end(Vec::new()).await;
            assert_eq!(res.unwrap(), 0, "the position is at the end");
            drop(rest);
            let mut reader = BufReader::new(File::open(&path).await.unwrap());
            let mut lines = Vec::new();
            let mut line = String::new();
            while reader.read_line(&mut line).await.unwrap() > 0 {
                lines.push(std::mem::take(&mut line));
            }
            assert_eq!(lines, ["line one\n", "line two\n", "line three\n"]);
            std::fs::remove_file(&path).unwrap();
        })
    });
}

#[test]
fn read_to_end_and_read_exact_work_through_trait_objects_of_every_stream() {
    with_every_runtime("trait helpers", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let mut server: TcpStream = server;
            client.write_all(b"0123456789".to_vec()).await.0.unwrap();
            drop(client);
            let (res, head) = AsyncReadOwned::read_exact(&mut server, vec![0u8; 3]).await;
            res.unwrap();
            assert_eq!(head, b"012");
            let (res, all) = server.read_to_end(b"prefix:".to_vec()).await;
            assert_eq!(res.unwrap(), 7);
            assert_eq!(all, b"prefix:3456789");

            // And as text, through the trait, as tokio's read_to_string.
            let (client, server) = tcp_pair().await;
            let mut server: TcpStream = server;
            client
                .write_all("héllo".as_bytes().to_vec())
                .await
                .0
                .unwrap();
            drop(client);
            let (res, text) = AsyncReadOwned::read_to_string(&mut server, String::new()).await;
            assert_eq!((res.unwrap(), text.as_str()), (6, "héllo"));
        })
    });
}

#[test]
fn a_dropped_read_exact_through_a_box_a_reference_or_a_buf_writer_gives_back_what_it_took() {
    with_every_runtime("pointer forwarding", 1, |_, rt| {
        rt.block_on(async {
            for through in ["a box", "a reference", "a BufWriter"] {
                let (client, server) = tcp_pair().await;
                client.write_all(b"hello".to_vec()).await.0.unwrap();
                until_bytes_waiting(&server, 5).await;
                let mut boxed = Box::new(server);
                // Half of what read_exact wants is there: it takes that, waits for the rest,
                // and is dropped waiting. The stream's own read_exact gives back what it
                // took; a wrapper of the stream must call that one, not the provided loop.
                let wait = Duration::from_millis(50);
                let want = vec![0u8; 10];
                let late = match through {
                    "a box" => timeout(wait, AsyncReadOwned::read_exact(&mut boxed, want)).await,
                    "a reference" => {
                        let mut by_ref: &mut TcpStream = &mut boxed;
                        timeout(wait, AsyncReadOwned::read_exact(&mut by_ref, want)).await
                    }
                    _ => {
                        let mut buffered = BufWriter::new(&mut *boxed);
                        timeout(wait, AsyncReadOwned::read_exact(&mut buffered, want)).await
                    }
                };
                assert!(late.is_err(), "only 5 of 10 bytes were ever sent");
                assert_eq!(
                    bytes_waiting(&*boxed),
                    0,
                    "the dropped read_exact took the first bytes (so giving them back is tested)"
                );
                client.write_all(b"world".to_vec()).await.0.unwrap();
                drop(client);
                let (res, all) = AsyncReadOwned::read_to_end(&mut boxed, Vec::new()).await;
                res.unwrap();
                assert_eq!(all, b"helloworld", "through {through}");
            }
        })
    });
}

#[test]
fn numbers_written_on_one_shard_read_back_on_another_and_a_dropped_read_gives_its_bytes_back() {
    with_every_runtime("number methods", 2, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let reader = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let mut s = &server;
                let got = (
                    s.read_u8().await.unwrap(),
                    s.read_i16().await.unwrap(),
                    s.read_u32_le().await.unwrap(),
                    s.read_i64().await.unwrap(),
                    s.read_u128_le().await.unwrap(),
                    s.read_f64().await.unwrap(),
                );
                (got, server)
            });
            let mut c = &client;
            c.write_u8(7).await.unwrap();
            c.write_i16(-2).await.unwrap();
            c.write_u32_le(0xdead_beef).await.unwrap();
            c.write_i64(i64::MIN + 1).await.unwrap();
            c.write_u128_le(u128::MAX / 3).await.unwrap();
            c.write_f64(-0.5).await.unwrap();
            let (got, server) = reader.await.unwrap();
            assert_eq!(got, (7, -2, 0xdead_beef, i64::MIN + 1, u128::MAX / 3, -0.5));

            // Half a u32 arrives: the read takes it, waits for the rest and is dropped; the
            // next read gets the whole number, nothing lost.
            send_outside_the_ring(&client, &[0x12, 0x34]);
            until_bytes_waiting(&server, 2).await;
            let mut s = &server;
            let late = timeout(Duration::from_millis(20), s.read_u32()).await;
            assert!(late.is_err(), "only half of the number was sent");
            assert_eq!(bytes_waiting(&server), 0, "the dropped read took the half");
            send_outside_the_ring(&client, &[0x56, 0x78]);
            assert_eq!(s.read_u32().await.unwrap(), 0x1234_5678);
            drop(client);
            let err = s.read_u16().await.unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
        })
    });
}

#[test]
fn copy_bidirectional_joins_two_connections_and_passes_each_half_close_on() {
    with_every_runtime("copy_bidirectional", 2, |_, rt| {
        rt.block_on(async {
            // client <-> (a | b) <-> server: the proxy loop joins a and b.
            let (client, a) = tcp_pair().await;
            let (b, server) = tcp_pair().await;
            let proxy = ringsteal_rt::spawn(async move { io::copy_bidirectional(&a, &b).await });
            let up = stream_bytes(21, 0, 1 << 20);
            let down = stream_bytes(22, 0, 300_000);
            // The server answers only once the client's upload has ended (its half-close
            // came through), then closes.
            let server_side = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let got = read_to_eof(&server).await;
                server.write_all(down_copy()).await.0.unwrap();
                server.shutdown(std::net::Shutdown::Write).await.unwrap();
                got
            });
            client.write_all(up.clone()).await.0.unwrap();
            client.shutdown(std::net::Shutdown::Write).await.unwrap();
            let got_down = read_to_eof(&client).await;
            assert_eq!(got_down, down, "the server's bytes, then end of stream");
            let got_up = server_side.await.unwrap();
            check_stream(21, 0, &got_up);
            assert_eq!(got_up.len(), up.len());
            let (a_to_b, b_to_a) = timeout(OP_GUARD, proxy).await.unwrap().unwrap().unwrap();
            assert_eq!((a_to_b, b_to_a), (up.len() as u64, down.len() as u64));

            // A reset on one side ends the proxy loop with the error.
            let (client, a) = tcp_pair().await;
            let (b, server) = tcp_pair().await;
            let proxy = ringsteal_rt::spawn(async move { io::copy_bidirectional(&a, &b).await });
            server.set_linger(Some(Duration::ZERO)).unwrap();
            drop(server);
            let res = timeout(OP_GUARD, proxy).await.unwrap().unwrap();
            let kind = res.unwrap_err().kind();
            assert!(
                matches!(
                    kind,
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
                ),
                "{kind:?}"
            );
            drop(client);
        })
    });
}

fn down_copy() -> Vec<u8> {
    stream_bytes(22, 0, 300_000)
}

#[test]
fn shared_references_to_split_halves_read_and_write_through_the_traits() {
    with_every_runtime("halves by reference", 2, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let (rd, wr) = server.into_split();
            // An echo through `&rd` and `&wr`, as `io::copy(&mut &rd, &mut &wr)` writes it.
            let echo = ringsteal_rt::spawn(async move {
                let n = io::copy(&mut &rd, &mut &wr).await.unwrap();
                AsyncWriteOwned::shutdown(&mut &wr).await.unwrap();
                n
            });
            let sent = stream_bytes(23, 0, 100_000);
            client.write_all(sent.clone()).await.0.unwrap();
            client.shutdown(std::net::Shutdown::Write).await.unwrap();
            let back = read_to_eof(&client).await;
            assert_eq!(back, sent);
            assert_eq!(echo.await.unwrap(), sent.len() as u64);
        })
    });
}

/// A proxy: `copy` from a client into a buffering writer towards a backend. The backend must
/// get the request while the client waits for the reply (the copy flushes when its reader
/// has nothing, as tokio's does), not only when the client closes.
#[test]
fn copy_flushes_a_buffering_writer_while_its_reader_waits() {
    with_every_runtime("copy flushes while waiting", 1, |_, rt| {
        rt.block_on(async {
            let (client, mut from_client) = tcp_pair().await;
            let (to_backend, backend) = tcp_pair().await;
            let proxy = ringsteal_rt::spawn(async move {
                let mut out = BufWriter::new(to_backend);
                io::copy(&mut from_client, &mut out).await
            });
            client.write_all(b"GET\n".to_vec()).await.0.unwrap();
            let (res, got) = timeout(OP_GUARD, backend.read_exact(vec![0u8; 4]))
                .await
                .expect("the request sat in the copy's writer");
            res.unwrap();
            assert_eq!(got, b"GET\n");
            drop(client);
            assert_eq!(proxy.await.unwrap().unwrap(), 4);
        })
    });
}

/// A writer that takes at most 64 KiB a write, as a pipe does, and records each write.
#[derive(Default)]
struct ShortWrites {
    got: Vec<u8>,
    writes: Vec<usize>,
}

impl AsyncWriteOwned for ShortWrites {
    async fn write<B: ringsteal_rt::buf::IoBuf>(&mut self, buf: B) -> (std::io::Result<usize>, B) {
        let n = buf.bytes_init().min(64 << 10);
        // SAFETY: an IoBuf's first bytes_init() bytes are initialised.
        self.got
            .extend_from_slice(unsafe { std::slice::from_raw_parts(buf.stable_ptr(), n) });
        self.writes.push(buf.bytes_init());
        (Ok(n), buf)
    }

    async fn shutdown(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `write_all_vectored` through a writer without a vectored write of its own: each write
/// gathers a bounded part of what is left, so the total copied stays proportional to the
/// data (gathering all that was left at every short write was quadratic: 64 MiB, 17 s).
#[test]
fn write_all_vectored_over_short_writes_gathers_a_bounded_part_each_time() {
    with_every_runtime("vectored over short writes", 1, |_, rt| {
        rt.block_on(async {
            let a: Vec<u8> = (0..(3 << 20)).map(|i| (i % 251) as u8).collect();
            let b: Vec<u8> = (0..(1 << 20)).map(|i| (i % 13) as u8).collect();
            let mut w = ShortWrites::default();
            let (res, (a, b)) = w.write_all_vectored((a, b)).await;
            res.unwrap();
            assert_eq!(&w.got[..a.len()], &a[..]);
            assert_eq!(&w.got[a.len()..], &b[..]);
            let gathered: usize = w.writes.iter().sum();
            assert!(
                gathered <= 8 * (a.len() + b.len()),
                "{gathered} bytes gathered for {} written",
                a.len() + b.len()
            );
        })
    });
}

/// `read_buf` receives into a provided buffer where it waits; with every buffer of the
/// shard's group held (here by a receive stream's consumer), the kernel has none to give
/// (`ENOBUFS`), and it reads into a buffer of its own instead, losing nothing: with the data
/// there already, and with the data arriving while it waits.
#[test]
fn read_buf_reads_on_when_every_provided_buffer_is_held() {
    let rt = ringsteal_rt::Runtime::builder()
        .shards(1)
        .recv_buffers(2, 4096)
        .build()
        .unwrap();
    let handle = rt.handle();
    rt.block_on(async move {
        let (hog_client, hog_server) = tcp_pair().await;
        let mut hog = hog_server.recv_stream();
        let mut held = Vec::new();
        for chunk in [&b"a"[..], b"b"] {
            hog_client.write_all(chunk).await.0.unwrap();
            held.push(hog.next().await.unwrap().unwrap());
        }
        let stats = handle.stats().total();
        assert!(!stats.recv_buffers_refused);
        assert_eq!(stats.bufs_in_use, 2, "the group is empty");

        let (client, server) = tcp_pair().await;
        client.write_all(b"there".to_vec()).await.0.unwrap();
        let mut got = Vec::new();
        assert_eq!(server.read_buf(&mut got).await.unwrap(), 5);
        assert_eq!(got, b"there");

        let in_flight = handle.stats().total().ops_in_flight;
        let reader = ringsteal_rt::spawn(async move {
            let mut later = Vec::new();
            let n = server.read_buf(&mut later).await.unwrap();
            (n, later)
        });
        common::yield_until(|| handle.stats().total().ops_in_flight > in_flight).await;
        client.write_all(b"later".to_vec()).await.0.unwrap();
        let (n, later) = reader.await.unwrap();
        assert_eq!((n, &later[..]), (5, &b"later"[..]));
        assert_eq!(
            handle.stats().total().bufs_in_use,
            2,
            "still only the held ones"
        );
        drop(held);
    });
}
