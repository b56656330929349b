//! A child's pipes through the owned-buffer I/O traits: a `BufReader` reading a child's
//! output line by line, `io::copy` from one child into another (through a buffer) and into a
//! file (spliced, a pipe being a splice source), and a dropped `read_exact` whose bytes the
//! next read gets, under every wake mechanism and ring mode.

mod common;

use std::time::Duration;

use common::with_every_runtime;
use ringsteal_process::{Command, Stdio};
use ringsteal_rt::io::{self, AsyncReadOwned, AsyncWriteOwned, BufReader};

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
