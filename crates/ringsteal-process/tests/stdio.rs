//! The process's own standard streams (`ringsteal_process::stdio`), checked on a child: this
//! test binary runs itself again (without a test harness, so nothing else writes to its
//! stdout) with its standard streams piped, under each wake mechanism and ring mode, and the
//! parent checks what came out.
//!
//! * a filter: every line of 1 MiB of input, read line by line, comes out transformed, in
//!   order;
//! * standard streams left non-blocking by the parent: a read of an empty stdin waits for
//!   input instead of failing with `WouldBlock`, and a 4 MiB write through a full pipe waits
//!   for the reader;
//! * two tasks on two shards writing 64 KiB records with `write_all`: no record is interleaved
//!   with another;
//! * a reader that went away: writes fail with `BrokenPipe`, the process is not killed;
//! * stdout redirected to a regular file;
//! * a `dup2` onto descriptor 1 after the first write: later writes follow it, and the old
//!   pipe reaches its end.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};

use common::{hang_guard, Config};
use ringsteal_process::stdio::{stderr, stdin, stdout};
use ringsteal_rt::io::{AsyncWriteOwned, BufReader as AsyncBufReader};
use ringsteal_rt::{spawn_with, Placement};

/// The configurations a child runs under: both wake mechanisms, plain and SQPOLL rings.
const CONFIGS: [usize; 4] = [0, 2, 4, 5];
/// A case's name, and its body for one configuration.
type Case = (&'static str, fn(usize));
const CHILD: &str = "RINGSTEAL_STDIO_CHILD";
const CONFIG: &str = "RINGSTEAL_STDIO_CONFIG";
const TARGET: &str = "RINGSTEAL_STDIO_TARGET";

fn main() {
    if let Ok(role) = std::env::var(CHILD) {
        let config: usize = std::env::var(CONFIG).unwrap().parse().unwrap();
        let rt = Config::ALL[config].runtime(2);
        rt.block_on(child(&role));
        return;
    }
    let tests: [Case; 6] = [
        ("a filter reads every line and writes it back", filter),
        ("non-blocking standard streams wait", non_blocking),
        (
            "write_all from two shards is never interleaved",
            no_interleaving,
        ),
        ("a reader that went away gives BrokenPipe", broken_pipe),
        ("stdout redirected to a file", to_a_file),
        ("a dup2 onto stdout is followed", redirected_later),
    ];
    for (name, test) in tests {
        for config in CONFIGS {
            let what = format!("{name} [{:?}]", Config::ALL[config]);
            hang_guard(&what, move || test(config));
            println!("test {what} ... ok");
        }
    }
}

/// What the child does, by role.
async fn child(role: &str) {
    match role {
        "filter" => {
            let mut lines = AsyncBufReader::new(stdin()).lines();
            let mut count = 0u64;
            while let Some(line) = lines.next_line().await.unwrap() {
                let out = format!("{}\n", line.to_uppercase());
                let (res, _) = stdout().write_all(out.into_bytes()).await;
                res.unwrap();
                count += 1;
            }
            let (res, _) = stderr()
                .write_all(format!("{count} lines\n").into_bytes())
                .await;
            res.unwrap();
        }
        "non-blocking" => {
            // A read of the empty stdin, started before the parent writes anything.
            let reader = ringsteal_rt::spawn(async { stdin().read(Vec::with_capacity(64)).await });
            // Each yield waits for the shard to reap: a read that failed with `EAGAIN`
            // would be over by now.
            for _ in 0..3 {
                ringsteal_rt::yield_now().await;
            }
            let (res, _) = stderr().write_all(b"reading\n".to_vec()).await;
            res.unwrap();
            let (res, buf) = reader.await.unwrap();
            let n = res.expect("the read of a non-blocking stdin waits for input");
            assert_eq!(&buf[..n], b"go\n");
            // 4 MiB through the 64 KiB pipe: most writes find it full.
            let big: Vec<u8> = (0..4 << 20).map(|i| (i % 251) as u8).collect();
            let (res, _) = stdout().write_all(big).await;
            res.expect("a write_all to a non-blocking stdout waits for the reader");
        }
        "interleave" => {
            let writers: Vec<_> = (0..2u8)
                .map(|shard| {
                    spawn_with(Placement::Pinned(shard.into()), async move {
                        // Through the I/O trait, as `io::copy` or a `BufWriter` would write.
                        let mut out = stdout();
                        for _ in 0..32 {
                            let record = vec![b'a' + shard; 64 << 10];
                            let (res, _) = AsyncWriteOwned::write_all(&mut out, record).await;
                            res.unwrap();
                        }
                    })
                })
                .collect();
            for w in writers {
                w.await.unwrap();
            }
        }
        "broken-pipe" => {
            let (res, _) = stdin().read(Vec::with_capacity(8)).await;
            assert_eq!(
                res.unwrap(),
                0,
                "the parent closes our stdin once our stdout's reader is gone"
            );
            let (res, _) = stdout().write_all(vec![b'x'; 1 << 20]).await;
            let err = res.expect_err("nobody reads stdout");
            assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe, "{err}");
            let (res, _) = stderr().write_all(b"broken pipe seen\n".to_vec()).await;
            res.unwrap();
        }
        "file" => {
            for i in 0..1000 {
                let (res, _) = stdout().write_all(format!("line {i}\n").into_bytes()).await;
                res.unwrap();
            }
        }
        "redirect" => {
            let (res, _) = stdout().write_all(b"first\n".to_vec()).await;
            res.unwrap();
            let path = std::env::var(TARGET).unwrap();
            let file = std::fs::File::create(path).unwrap();
            // SAFETY: dup2 onto descriptor 1, as a program redirecting its output does.
            assert_eq!(unsafe { libc::dup2(file.as_raw_fd(), 1) }, 1);
            drop(file);
            let (res, _) = stdout().write_all(b"second\n".to_vec()).await;
            res.unwrap();
        }
        other => panic!("unknown role {other}"),
    }
}

fn spawn_child(role: &str, config: usize, stdin: Stdio, stdout: Stdio) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .env(CHILD, role)
        .env(CONFIG, config.to_string())
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn assert_success(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "the child failed: {}\n{err}",
        out.status
    );
    err
}

fn filter(config: usize) {
    let mut child = spawn_child("filter", config, Stdio::piped(), Stdio::piped());
    let mut input = child.stdin.take().unwrap();
    let lines: Vec<String> = (0..20_000)
        .map(|i| format!("line {i} of the input"))
        .collect();
    let expected: String = lines.iter().map(|l| l.to_uppercase() + "\n").collect();
    let feeder = std::thread::spawn(move || {
        for l in &lines {
            writeln!(input, "{l}").unwrap();
        }
    });
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    feeder.join().unwrap();
    assert_eq!(out.len(), expected.len());
    assert!(
        out == expected,
        "the output differs from the input, transformed"
    );
    assert_eq!(assert_success(child), "20000 lines\n");
}

/// A pipe whose child end is non-blocking: `(child end, parent end)`.
fn non_blocking_pipe(child_reads: bool) -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both are descriptors pipe2 just made, owned by nobody else.
    let (read, write) = unsafe {
        use std::os::fd::FromRawFd;
        (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))
    };
    let (child, parent) = if child_reads {
        (read, write)
    } else {
        (write, read)
    };
    // SAFETY: F_GETFL/F_SETFL on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(child.as_raw_fd(), libc::F_GETFL);
        assert_eq!(
            libc::fcntl(child.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK),
            0
        );
    }
    (child, parent)
}

fn non_blocking(config: usize) {
    let (child_in, parent_in) = non_blocking_pipe(true);
    let (child_out, parent_out) = non_blocking_pipe(false);
    let mut child = spawn_child("non-blocking", config, child_in.into(), child_out.into());
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert_eq!(line, "reading\n", "the child's read of stdin did not wait");
    let mut input = std::fs::File::from(parent_in);
    input.write_all(b"go\n").unwrap();
    let mut out = Vec::new();
    std::fs::File::from(parent_out)
        .read_to_end(&mut out)
        .unwrap();
    assert_eq!(out.len(), 4 << 20);
    assert!(out.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "the child failed: {status}\n{rest}");
}

fn no_interleaving(config: usize) {
    let child = spawn_child("interleave", config, Stdio::null(), Stdio::piped());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout.len(), 64 * (64 << 10));
    for (i, record) in out.stdout.chunks(64 << 10).enumerate() {
        assert!(
            record.iter().all(|&b| b == record[0]),
            "record {i} mixes two writers' bytes"
        );
    }
}

fn broken_pipe(config: usize) {
    let mut child = spawn_child("broken-pipe", config, Stdio::piped(), Stdio::piped());
    drop(child.stdout.take());
    drop(child.stdin.take());
    assert_eq!(assert_success(child), "broken pipe seen\n");
}

fn to_a_file(config: usize) {
    let dir = std::env::temp_dir().join(format!("ringsteal-stdio-{}-{config}", std::process::id()));
    let file = std::fs::File::create(&dir).unwrap();
    let child = spawn_child("file", config, Stdio::null(), file.into());
    assert_success(child);
    let text = std::fs::read_to_string(&dir).unwrap();
    std::fs::remove_file(&dir).unwrap();
    let expected: String = (0..1000).map(|i| format!("line {i}\n")).collect();
    assert!(
        text == expected,
        "the file holds {} bytes, not the 1,000 lines",
        text.len()
    );
}

fn redirected_later(config: usize) {
    let path = std::env::temp_dir().join(format!(
        "ringsteal-stdio-dup2-{}-{config}",
        std::process::id()
    ));
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(CHILD, "redirect")
        .env(CONFIG, config.to_string())
        .env(TARGET, &path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The pipe ends once the child's descriptor 1 no longer names it.
    let mut first = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut first)
        .unwrap();
    assert_eq!(
        first, "first\n",
        "only the write made before the dup2 went to the pipe"
    );
    assert_success(child);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "second\n");
    std::fs::remove_file(&path).unwrap();
}
