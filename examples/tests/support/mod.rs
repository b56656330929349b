//! What the example tests share: finding an example's binary, running it with a hang guard,
//! a server example started on `127.0.0.1:0` and read line by line, and a blocking HTTP/1.1
//! client over loopback.
//!
//! The examples run as the binaries `cargo run --example NAME` runs, from
//! `target/<profile>/examples/`, next to the `deps/` directory this test runs from. `cargo
//! test` builds them before it runs tests (`cargo test -p ringsteal-examples --test
//! examples_run` alone does not: a missing or stale binary fails with a message saying so).

#![allow(dead_code)] // each test binary uses its part

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, SystemTime};

use ringsteal_examples::http::{parse_response_head, ResponseHead};

/// Longest any example may take in these tests before it counts as hung (debug builds on a
/// loaded two-core machine; the examples take well under a few seconds).
pub(crate) const HANG_GUARD: Duration = Duration::from_secs(90);

/// A command for the example `name`, built by cargo beside this test.
pub(crate) fn example(name: &str) -> Command {
    let exe = std::env::current_exe().expect("the test's own path");
    // target/<profile>/deps/examples_run-HASH -> target/<profile>/examples/NAME
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test runs from target/<profile>/deps");
    let bin = profile_dir.join("examples").join(name);
    let built = std::fs::metadata(&bin).and_then(|m| m.modified());
    let Ok(built) = built else {
        panic!(
            "{} is missing: build the examples first (`cargo test -p ringsteal-examples` builds \
             them; `--test examples_run` alone does not, nor does `cargo build --examples` run \
             from elsewhere with another profile)",
            bin.display()
        );
    };
    let newest_source = sources(name)
        .into_iter()
        .max()
        .unwrap_or(SystemTime::UNIX_EPOCH);
    assert!(
        built >= newest_source,
        "{} is older than its source: rebuild the examples (`cargo test -p ringsteal-examples`, \
         or `cargo build -p ringsteal-examples --examples`)",
        bin.display()
    );
    let mut cmd = Command::new(bin);
    cmd.stdin(Stdio::null());
    cmd
}

/// Modification times of the example's file and of the library it shares.
fn sources(name: &str) -> Vec<SystemTime> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![dir.join(format!("{name}.rs"))];
    let mut pending = vec![dir.join("src")];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
        .iter()
        .filter_map(|f| std::fs::metadata(f).and_then(|m| m.modified()).ok())
        .collect()
}

/// A finished run: status, and what it printed.
pub(crate) struct Ran {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) raw_stdout: Vec<u8>,
}

impl Ran {
    /// Panics, showing the output, unless the run exited with status 0.
    pub(crate) fn success(self) -> Self {
        assert!(
            self.status.success(),
            "exited with {}\nstdout:\n{}\nstderr:\n{}",
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }

    /// Panics unless the run failed with `code` and printed an error and the usage line.
    pub(crate) fn usage_failure(self, code: i32) -> Self {
        assert_eq!(
            self.status.code(),
            Some(code),
            "stdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        assert!(self.stderr.contains("error: "), "{}", self.stderr);
        assert!(self.stderr.contains("usage: "), "{}", self.stderr);
        assert!(!self.stderr.contains("panicked"), "{}", self.stderr);
        self
    }
}

/// Runs `cmd` to its end with `input` on its standard input.
pub(crate) fn run_with_input(mut cmd: Command, input: &[u8]) -> Ran {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("the example starts");
    let mut stdin = child.stdin.take().expect("piped");
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let ran = finish(child);
    feeder.join().unwrap().expect("the example read its input");
    ran
}

/// Runs example `name` with `args` to its end.
pub(crate) fn run_args<A: AsRef<OsStr>>(name: &str, args: impl IntoIterator<Item = A>) -> Ran {
    let mut cmd = example(name);
    cmd.args(args);
    run(cmd)
}

/// Runs `cmd` to its end.
pub(crate) fn run(mut cmd: Command) -> Ran {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    finish(cmd.spawn().expect("the example starts"))
}

/// Waits for `child` (killing it after [`HANG_GUARD`]) and collects its output.
fn finish(child: Child) -> Ran {
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    let output: Output = match rx.recv_timeout(HANG_GUARD) {
        Ok(output) => output.expect("waiting for the example"),
        Err(_) => {
            kill(pid, libc::SIGKILL);
            panic!("the example (pid {pid}) ran longer than {HANG_GUARD:?}");
        }
    };
    Ran {
        status: output.status,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        raw_stdout: output.stdout,
    }
}

/// Sends `signal` to process `pid`.
pub(crate) fn kill(pid: u32, signal: i32) {
    // SAFETY: kill(2) on a pid this test started; no memory is involved.
    unsafe { libc::kill(pid as libc::pid_t, signal) };
}

/// A server example running on `127.0.0.1:0`, read line by line; killed when dropped.
pub(crate) struct Server {
    child: Option<Child>,
    pub(crate) addr: SocketAddr,
    lines: Receiver<String>,
    stderr: Receiver<String>,
}

impl Server {
    /// Starts example `name` with `127.0.0.1:0` and then `args`, and waits for its
    /// `listening on ADDR` line.
    pub(crate) fn start(name: &str, args: &[&str]) -> Server {
        let mut cmd = example(name);
        cmd.arg("127.0.0.1:0").args(args);
        Server::spawn(cmd)
    }

    /// Runs `cmd`, a server that prints `listening on ADDR` first, and waits for that line.
    pub(crate) fn spawn(mut cmd: Command) -> Server {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("the server starts");
        let lines = lines_of(child.stdout.take().expect("piped"));
        let stderr = lines_of(child.stderr.take().expect("piped"));
        let mut server = Server {
            child: Some(child),
            addr: "0.0.0.0:0".parse().unwrap(),
            lines,
            stderr,
        };
        let first = server.next_line();
        let addr = first
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("the first line is {first:?}, not `listening on ADDR`"));
        server.addr = addr.parse().expect("a socket address");
        assert_ne!(server.addr.port(), 0, "the port it bound, not 0");
        server
    }

    /// The next line of its standard output.
    pub(crate) fn next_line(&mut self) -> String {
        match self.lines.recv_timeout(HANG_GUARD) {
            Ok(line) => line,
            Err(_) => panic!(
                "no line from the server within {HANG_GUARD:?}; its stderr:\n{}",
                self.stderr.try_iter().collect::<Vec<_>>().join("\n")
            ),
        }
    }

    /// Skips lines until one contains `text`, and returns it.
    pub(crate) fn line_containing(&mut self, text: &str) -> String {
        loop {
            let line = self.next_line();
            if line.contains(text) {
                return line;
            }
        }
    }

    /// Sends `signal` to the server.
    pub(crate) fn signal(&self, signal: i32) {
        kill(self.child.as_ref().expect("running").id(), signal);
    }

    /// Waits for the server to exit by itself; returns its status and the rest of its
    /// standard output.
    pub(crate) fn wait(mut self) -> (ExitStatus, String) {
        let child = self.child.take().expect("running");
        let pid = child.id();
        let (tx, rx) = mpsc::channel();
        let mut child = child;
        std::thread::spawn(move || tx.send(child.wait()));
        let status = match rx.recv_timeout(HANG_GUARD) {
            Ok(status) => status.expect("waiting for the server"),
            Err(_) => {
                kill(pid, libc::SIGKILL);
                panic!("the server did not exit within {HANG_GUARD:?}");
            }
        };
        // The stdout reader ends at the server's end of output.
        let rest: Vec<String> = self.lines.iter().collect();
        (status, rest.join("\n"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The lines of a stream, read on a thread of their own.
fn lines_of(stream: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// A blocking HTTP/1.1 connection for the tests.
pub(crate) struct Http {
    pub(crate) stream: TcpStream,
    buf: Vec<u8>,
}

impl Http {
    pub(crate) fn connect(addr: SocketAddr) -> Http {
        let stream = TcpStream::connect(addr).expect("connect to the server");
        stream.set_read_timeout(Some(HANG_GUARD)).unwrap();
        Http {
            stream,
            buf: Vec::new(),
        }
    }

    /// Sends raw bytes.
    pub(crate) fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("send to the server");
    }

    /// Sends `GET path` with a `Host`.
    pub(crate) fn send_get(&mut self, path: &str) {
        self.send(format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n").as_bytes());
    }

    /// Reads one response; `with_body` false for the answer to a `HEAD`.
    pub(crate) fn response(&mut self, with_body: bool) -> (ResponseHead, Vec<u8>) {
        let head = loop {
            if let Some(head) = parse_response_head(&self.buf).expect("a valid response head") {
                break head;
            }
            assert!(self.fill(), "the server closed before a response head");
        };
        let total = head.len
            + if with_body {
                head.content_length as usize
            } else {
                0
            };
        while self.buf.len() < total {
            assert!(self.fill(), "the server closed mid-body");
        }
        let body = self.buf[head.len..total].to_vec();
        self.buf.drain(..total);
        (head, body)
    }

    /// `GET path` and its response.
    pub(crate) fn get(&mut self, path: &str) -> (ResponseHead, Vec<u8>) {
        self.send_get(path);
        self.response(true)
    }

    /// True if the server has closed the connection with nothing more to read (a reset
    /// counts as closed too).
    pub(crate) fn closed(&mut self) -> bool {
        if !self.buf.is_empty() {
            return false;
        }
        !self.fill()
    }

    /// Reads more; false at end of stream.
    fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 16 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(0) => false,
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                true
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => false,
            // A signal for this process (the subprocess example's SIGUSR1) interrupted the read.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => true,
            Err(e) => panic!("reading from the server: {e}"),
        }
    }
}

/// A fresh directory under the temp dir, removed when dropped.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "ringsteal-example-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Bytes that are not all alike, so a misplaced chunk shows.
pub(crate) fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}
