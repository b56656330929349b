//! Drives `wrk` (the HTTP load generator, `apt-get install -y wrk`) against a server in this
//! process, and measures the server's CPU time while it runs.
//!
//! One [`run`] is one `wrk` process: `threads` threads keep `connections` keep-alive
//! connections busy, each write carrying `pipeline` requests, until every thread has sent
//! its share of `requests`. A Lua script counts them and stops the thread, printing a line
//! when it starts (`init`) and when it stops; wrk's main thread itself only sleeps for the
//! `-d` duration (120 s, a hang guard), so once every thread has stopped [`run`] wakes it
//! with `SIGINT` (which wrk handles: it stops and prints its summary). The duration is read
//! here, from the first start line to the last stop line; the summary gives the requests
//! completed, and the run fails unless it reports no error of any kind (connect, read,
//! write, timeout, or a status of 400 and above) and nearly every request completed.
//!
//! Server CPU is `getrusage(RUSAGE_SELF)` over the run (every thread of this process) minus
//! the calling thread's own `RUSAGE_THREAD` (it only starts and waits for wrk), so call
//! [`run`] from a thread that is not serving. wrk's CPU (`RUSAGE_CHILDREN`) is reported
//! beside it. Both include accepting and closing the connections (amortised over the run):
//! after wrk exits, [`run`] waits for the server to go quiet before it reads the CPU time.

use std::io::{self, BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// What one wrk run asks of the server.
#[derive(Clone, Debug)]
pub struct Load {
    /// Connections kept open (wrk `-c`).
    pub connections: usize,
    /// wrk threads (`-t`).
    pub threads: usize,
    /// Requests to send in all (each thread sends its share, then stops).
    pub requests: u64,
    /// Request path (`/` or `/bytes/N`).
    pub path: String,
    /// Requests per write (1: no pipelining).
    pub pipeline: usize,
}

/// What one wrk run measured.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    /// Requests completed (responses received).
    pub requests: u64,
    /// From wrk's first thread starting (before it connects) to its last thread stopping.
    pub duration: Duration,
    /// CPU time of the server's process (every thread but the caller) during the run.
    pub server_cpu: Duration,
    /// CPU time of the wrk process.
    pub client_cpu: Duration,
}

impl Run {
    /// Completed requests per second.
    pub fn rate(&self) -> f64 {
        self.requests as f64 / self.duration.as_secs_f64()
    }

    /// Wall time per completed request.
    pub fn time_per_request(&self) -> Duration {
        self.duration / u32::try_from(self.requests.max(1)).unwrap_or(u32::MAX)
    }
}

/// Whether a `wrk` executable is on `PATH`.
pub fn available() -> bool {
    Command::new("wrk")
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("wrk"))
}

/// Runs wrk against `addr` with `load`, from the calling thread (see the module docs).
pub fn run(addr: SocketAddr, load: &Load) -> Result<Run, String> {
    let threads = load.threads.clamp(1, load.connections.max(1));
    let per_thread = load.requests.div_ceil(threads as u64);
    let script = script().map_err(|e| format!("cannot write the wrk script: {e}"))?;
    let before = Usage::now();
    let mut child = Command::new("wrk")
        .arg(format!("-t{threads}"))
        .arg(format!("-c{}", load.connections))
        .args(["-d120s", "--timeout", "10s", "-s"])
        .arg(script)
        .arg(format!("http://{addr}{}", load.path))
        .args([
            "--",
            &per_thread.to_string(),
            &load.pipeline.to_string(),
            &load.path,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run wrk: {e}"))?;
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    let mut started = None;
    let mut stopped = 0;
    let mut duration = None;
    let mut stdout = String::new();
    for line in lines.by_ref() {
        let line = line.map_err(|e| format!("reading wrk's output: {e}"))?;
        if line == "RINGSTEAL_WRK_START" {
            started.get_or_insert_with(Instant::now);
        } else if line == "RINGSTEAL_WRK_STOP" {
            stopped += 1;
            if stopped == threads {
                duration = started.map(|t: Instant| t.elapsed());
                // SAFETY: kill has no memory preconditions; the child has not been waited
                // for, so its pid is still its own.
                unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
            }
        } else {
            stdout.push_str(&line);
            stdout.push('\n');
        }
    }
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    let status = child.wait().map_err(|e| format!("waiting for wrk: {e}"))?;
    // The server is still closing wrk's connections: that work is this run's, and must not
    // fall into whatever runs next.
    settle();
    let after = Usage::now();
    let fail = |why: &str| format!("wrk {why} ({status}); stdout:\n{stdout}\nstderr:\n{stderr}");
    if !status.success() {
        return Err(fail("failed"));
    }
    let duration = duration.ok_or_else(|| fail("threads did not all stop"))?;
    let summary = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RINGSTEAL_WRK "))
        .ok_or_else(|| fail("printed no summary"))?;
    let field = |name: &str| -> Result<u64, String> {
        summary
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| fail(&format!("summary lacks {name}")))
    };
    for e in ["connect", "read", "write", "status", "timeout"] {
        if field(e)? != 0 {
            return Err(fail(&format!("counted {e} errors")));
        }
    }
    let requests = field("requests")?;
    // A thread stops with up to `pipeline` requests in flight on each of its connections.
    let in_flight = (load.connections * load.pipeline) as u64;
    if requests + in_flight < per_thread * threads as u64 {
        return Err(fail(&format!(
            "completed {requests} of {} requests",
            per_thread * threads as u64
        )));
    }
    Ok(Run {
        requests,
        duration,
        server_cpu: (after.process - before.process)
            .saturating_sub(after.this_thread - before.this_thread),
        client_cpu: after.children - before.children,
    })
}

/// The Lua script (written once per process to the temp directory). `init` builds the
/// pipelined request and announces the thread; `request` counts what the thread has sent
/// and stops it past its share (announcing that once); `done` prints the summary [`run`]
/// parses. Every line is flushed at once: [`run`] times the run by them.
fn script() -> io::Result<&'static PathBuf> {
    static SCRIPT: OnceLock<PathBuf> = OnceLock::new();
    if let Some(p) = SCRIPT.get() {
        return Ok(p);
    }
    let path = std::env::temp_dir().join(format!("ringsteal-bench-wrk-{}.lua", std::process::id()));
    std::fs::write(&path, SCRIPT_TEXT)?;
    Ok(SCRIPT.get_or_init(|| path))
}

const SCRIPT_TEXT: &str = r#"-- written by ringsteal-benches (benches/src/net/wrk.rs)
local limit, depth, req
local sent = 0
local stopped = false
function init(args)
  limit = tonumber(args[1])
  depth = tonumber(args[2])
  req = string.rep(wrk.format("GET", args[3]), depth)
  io.write("RINGSTEAL_WRK_START\n")
  io.stdout:flush()
end
function request()
  sent = sent + depth
  if sent > limit and not stopped then
    stopped = true
    wrk.thread:stop()
    io.write("RINGSTEAL_WRK_STOP\n")
    io.stdout:flush()
  end
  return req
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "RINGSTEAL_WRK requests=%d duration_us=%d connect=%d read=%d write=%d status=%d timeout=%d\n",
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout))
end
"#;

/// CPU times at one instant.
struct Usage {
    process: Duration,
    this_thread: Duration,
    children: Duration,
}

impl Usage {
    fn now() -> Self {
        Self {
            process: cpu(libc::RUSAGE_SELF),
            this_thread: cpu(libc::RUSAGE_THREAD),
            children: cpu(libc::RUSAGE_CHILDREN),
        }
    }
}

/// Waits until the server has gone quiet: the process's CPU time, the caller's thread
/// excepted, grows by under 2 % of a 20 ms window twice in a row (at most 2 s). A server
/// closing a thousand connections after wrk exits takes a few milliseconds of CPU; an idle
/// one takes none.
fn settle() {
    const WINDOW: Duration = Duration::from_millis(20);
    let busy = |u: &Usage| u.process.saturating_sub(u.this_thread);
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    let mut quiet = 0;
    let mut last = busy(&Usage::now());
    while quiet < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(WINDOW);
        let now = busy(&Usage::now());
        quiet = if now.saturating_sub(last) < WINDOW / 50 {
            quiet + 1
        } else {
            0
        };
        last = now;
    }
}

/// User plus system CPU time of `who`.
fn cpu(who: libc::c_int) -> Duration {
    // SAFETY: rusage is plain data; zeroed is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid rusage to write into; `who` is one of the RUSAGE_* constants.
    let rc = unsafe { libc::getrusage(who, &mut ru) };
    assert_eq!(rc, 0, "getrusage: {}", io::Error::last_os_error());
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}
