//! A child's pipes through the owned-buffer I/O traits: a `BufReader` reading a child's
//! output line by line, `io::copy` from one child into another (through a buffer) and into a
//! file (spliced, a pipe being a splice source), length-delimited frames written by two tasks
//! at once through a full pipe, and a dropped `read_exact` whose bytes the next read gets,
//! under every wake mechanism and ring mode.

mod common;

use std::time::Duration;

use common::with_every_runtime;
use ringsteal_process::{Command, Stdio};
use ringsteal_rt::io::{self, AsyncReadOwned, AsyncWriteOwned, BufReader, LengthDelimited};

#[test]
fn a_buf_reader_reads_a_childs_output_line_by_line() {
    with_every_runtime("lines of a child", 2, |config, rt| {
        rt.block_on(async {
            let mut child = Command::new("printf")
                .arg("one\\ntwo\\nthree")
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut lines = BufReader::new(child.stdout.take().unwrap());
            let mut got = Vec::new();
            loop {
                let mut line = String::new();
                if lines.read_line(&mut line).await.unwrap() == 0 {
                    break;
                }
                got.push(line);
            }
            assert_eq!(got, ["one\n", "two\n", "three"], "{config:?}");
            assert!(child.wait().await.unwrap().success(), "{config:?}");

            // As tokio code writes it: `lines()`, then `next_line()` until `None`.
            let mut child = Command::new("printf")
                .arg("alpha\\r\\nbeta\\n")
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
            let mut got = Vec::new();
            while let Some(line) = lines.next_line().await.unwrap() {
                got.push(line);
            }
            assert_eq!(got, ["alpha", "beta"], "{config:?}");
            assert!(child.wait().await.unwrap().success(), "{config:?}");
        });
    });
}

#[test]
fn copy_moves_a_childs_output_into_another_child_and_into_a_file() {
    const LINES: usize = 20_000;
    // `seq 1 20000`: every number and its newline.
    let expected: usize = (1..=LINES).map(|n| n.to_string().len() + 1).sum();
    with_every_runtime("copy from a child", 2, move |config, rt| {
        rt.block_on(async move {
            // Into another child's stdin, through a buffer (a pipe is no splice sink).
            let mut producer = seq(LINES);
            let mut consumer = Command::new("wc")
                .arg("-c")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut from = producer.stdout.take().unwrap();
            let mut to = consumer.stdin.take().unwrap();
            let n = io::copy(&mut from, &mut to).await.unwrap();
            assert_eq!(n as usize, expected, "{config:?}");
            to.shutdown().await.unwrap();
            drop(to);
            let counted = consumer.wait_with_output().await.unwrap();
            let counted = String::from_utf8(counted.stdout).unwrap();
            assert_eq!(counted.trim(), expected.to_string(), "{config:?}");
            assert!(producer.wait().await.unwrap().success(), "{config:?}");

            // Into a file, spliced in the kernel from the pipe.
            let path = std::env::temp_dir().join(format!(
                "ringsteal-pipe-io-{}-{config:?}",
                std::process::id()
            ));
            let mut producer = seq(LINES);
            let mut from = producer.stdout.take().unwrap();
            let mut file = ringsteal_fs::File::create(&path).await.unwrap();
            let n = io::copy_spliced(&mut from, &mut file).await.unwrap();
            assert_eq!(n as usize, expected, "{config:?}");
            assert!(producer.wait().await.unwrap().success(), "{config:?}");
            let written = std::fs::read_to_string(&path).unwrap();
            std::fs::remove_file(&path).unwrap();
            let numbers: Vec<usize> = written.lines().map(|l| l.parse().unwrap()).collect();
            assert_eq!(numbers, (1..=LINES).collect::<Vec<_>>(), "{config:?}");
        });
    });
}

fn seq(lines: usize) -> ringsteal_process::Child {
    Command::new("seq")
        .args(["1", &lines.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_dropped_read_exact_on_a_pipe_gives_back_what_it_took() {
    with_every_runtime("dropped read_exact on a pipe", 1, |config, rt| {
        rt.block_on(async {
            for through_trait in [false, true] {
                let (mut child, stdin, stdout) = common::cat_held_open(true);
                let stdout = stdout.expect("piped stdout");
                stdin.write_all(&b"hello"[..]).await.0.unwrap();
                while common::queued(&stdout) < 5 {
                    ringsteal_rt::yield_now().await;
                }
                // Half of what read_exact wants is there: it takes that, waits for the rest,
                // and is dropped waiting.
                let wait = Duration::from_millis(50);
                let late = if through_trait {
                    let mut by_ref = &stdout;
                    let want = vec![0u8; 10];
                    ringsteal_rt::time::timeout(wait, AsyncReadOwned::read_exact(&mut by_ref, want))
                        .await
                } else {
                    ringsteal_rt::time::timeout(wait, stdout.read_exact(vec![0u8; 10])).await
                };
                assert!(late.is_err(), "{config:?}: only 5 of 10 bytes were sent");
                AsyncWriteOwned::write_all(&mut &stdin, &b"world"[..])
                    .await
                    .0
                    .unwrap();
                drop(stdin);
                let (res, all) = stdout.read_to_end(Vec::new()).await;
                res.unwrap();
                assert_eq!(all, b"helloworld", "{config:?}, trait: {through_trait}");
                assert!(child.wait().await.unwrap().success(), "{config:?}");
            }
        });
    });
}

#[test]
fn frames_two_tasks_write_through_a_full_pipe_arrive_whole() {
    // Each frame is larger than a pipe holds (64 KiB), so its writes come back short and the
    // other task is waiting for the lane in between: a frame's header and body must still
    // go out together, each frame whole.
    const FRAME: usize = 200 * 1024;
    const FRAMES: usize = 8;
    with_every_runtime("frames through a pipe", 2, |config, rt| {
        rt.block_on(async {
            let (mut child, stdin, stdout) = common::cat_held_open(true);
            let stdin = std::sync::Arc::new(stdin);
            let writers: Vec<_> = [b'a', b'b']
                .into_iter()
                .map(|tag| {
                    let stdin = stdin.clone();
                    ringsteal_rt::spawn(async move {
                        let mut framed = LengthDelimited::new(&*stdin).max_frame_len(FRAME);
                        for _ in 0..FRAMES {
                            framed.write_frame(vec![tag; FRAME]).await.0.unwrap();
                        }
                    })
                })
                .collect();
            let mut frames = LengthDelimited::new(stdout.unwrap()).max_frame_len(FRAME);
            let mut seen = [0usize; 2];
            for _ in 0..2 * FRAMES {
                let frame = frames.read_frame().await.unwrap().expect("a frame");
                assert_eq!(frame.len(), FRAME, "{config:?}");
                let tag = frame[0];
                assert!(
                    frame.iter().all(|&b| b == tag),
                    "{config:?}: a frame mixes two writers' bytes"
                );
                seen[usize::from(tag - b'a')] += 1;
            }
            assert_eq!(seen, [FRAMES, FRAMES], "{config:?}");
            for w in writers {
                w.await.unwrap();
            }
            drop(std::sync::Arc::into_inner(stdin));
            assert!(child.wait().await.unwrap().success(), "{config:?}");
        });
    });
}
