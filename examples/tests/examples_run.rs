//! Runs every example with a short workload and checks what it printed, so that none rots.
//! One test per example (plus its error cases); servers are started on `127.0.0.1:0` and
//! driven by real clients over loopback.
//!
//! Most examples run as the binaries `cargo run --example NAME` runs (`support::example`
//! finds them; `cargo test` builds them first), so their arguments, exit statuses and
//! signals are tested as a user meets them. `subprocess` runs in this process, through its
//! `run()`.

mod support;

#[path = "../subprocess.rs"]
#[allow(dead_code)] // its `main` is the example binary's entry point
mod subprocess;

use std::net::TcpListener;

use support::{example, pattern, run, run_args, run_with_input, Http, Server, TempDir};

/// Every `[[example]]` of the manifest is run by a test of this file and listed in the
/// README's table, so an example added later cannot be forgotten by either.
#[test]
fn every_example_is_run_here_and_listed_in_the_readme() {
    let manifest = include_str!("../Cargo.toml");
    let tests = include_str!("examples_run.rs");
    let readme = include_str!("../../README.md");
    let names: Vec<&str> = manifest
        .lines()
        .filter_map(|l| l.strip_prefix("name = \""))
        .filter_map(|l| l.strip_suffix('"'))
        .filter(|name| *name != "ringsteal-examples")
        .collect();
    assert!(names.len() >= 18, "{names:?}");
    for name in names {
        let run_here = tests.contains(&format!("\"{name}\""))
            || (name == "subprocess" && tests.contains("subprocess::run()"));
        assert!(run_here, "no test runs the example {name}");
        let listed =
            readme.contains(&format!("| `{name}`")) || readme.contains(&format!("| `{name} "));
        assert!(listed, "the README's example table does not list {name}");
    }
}

#[test]
fn the_subprocess_example_runs() {
    subprocess::run().expect("the subprocess example");
}

// Proving the runtime.

#[test]
fn echo_sends_back_what_each_client_sends() {
    let mut server = Server::start("echo", &[]);
    let clients: Vec<_> = [b"hello\n".to_vec(), pattern(200_000)]
        .into_iter()
        .map(|data| {
            let addr = server.addr;
            std::thread::spawn(move || {
                use std::io::{Read, Write};
                let mut stream = std::net::TcpStream::connect(addr).unwrap();
                let mut writer = stream.try_clone().unwrap();
                let sent = data.clone();
                let feeder = std::thread::spawn(move || {
                    writer.write_all(&sent).unwrap();
                    writer.shutdown(std::net::Shutdown::Write).unwrap();
                });
                let mut back = Vec::new();
                stream.read_to_end(&mut back).unwrap();
                feeder.join().unwrap();
                assert!(
                    back == data,
                    "echoed {} of {} bytes",
                    back.len(),
                    data.len()
                );
            })
        })
        .collect();
    for client in clients {
        client.join().unwrap();
    }
    let reports = [server.next_line(), server.next_line()];
    for bytes in [6, 200_000] {
        let report = format!(": echoed {bytes} bytes on shard ");
        assert!(reports.iter().any(|r| r.contains(&report)), "{reports:?}");
    }
}

#[test]
fn echo_refuses_an_address_in_use_and_extra_arguments() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let ran = run_args("echo", [taken.local_addr().unwrap().to_string()]).usage_failure(1);
    assert!(ran.stderr.contains("cannot listen on"), "{}", ran.stderr);
    run_args("echo", ["127.0.0.1:0", "extra"]).usage_failure(2);
}

#[test]
fn cat_prints_a_file_and_refuses_a_missing_one() {
    let dir = TempDir::new("cat");
    let data = pattern(300_001);
    std::fs::write(dir.path("data"), &data).unwrap();
    let ran = run_args("cat", [dir.path("data")]).success();
    assert!(
        ran.raw_stdout == data,
        "printed {} bytes",
        ran.raw_stdout.len()
    );

    let ran = run_args("cat", [dir.path("missing")]).usage_failure(1);
    assert!(ran.stderr.contains("No such file"), "{}", ran.stderr);
    run(example("cat")).usage_failure(2);
}

#[test]
fn timer_sleeps_ticks_and_times_out() {
    let out = run_args("timer", ["2"]).success().stdout;
    assert!(out.contains("sleep(1ms): late by"), "{out}");
    assert!(out.contains("tick 1 at +"), "{out}");
    assert!(!out.contains("tick 2 at"), "two ticks asked for:\n{out}");
    assert!(out.contains("gave up (deadline has elapsed)"), "{out}");
    assert!(out.contains("Ok(42)"), "{out}");
    assert!(out.contains("10000 sleeps from one task"), "{out}");
    run_args("timer", ["many"]).usage_failure(2);
}

#[test]
fn ping_pong_counts_round_trips_between_shards_and_on_one() {
    let out = run_args("ping_pong", ["300"]).success().stdout;
    assert!(
        out.contains("shard 0 <-> shard 1: 300 round trips, median"),
        "{out}"
    );
    assert!(
        out.contains("both on shard 0: 300 round trips, median"),
        "{out}"
    );
    run_args("ping_pong", ["0"]).usage_failure(2);
}

// The async model.

#[test]
fn concurrent_reads_need_fewer_system_calls_than_reads_one_at_a_time() {
    let out = run(example("concurrent_reads")).success().stdout;
    assert!(out.contains("same bytes both ways: yes"), "{out}");
    let calls = |label: &str| -> u64 {
        let line = out.lines().find(|l| l.starts_with(label)).expect(label);
        let (_, rest) = line.split_once(", ").expect(line);
        rest.split(' ').next().unwrap().parse().expect(line)
    };
    let (one_at_a_time, all_at_once) = (calls("one at a time:"), calls("all at once:"));
    assert!(one_at_a_time >= 100, "{out}");
    assert!(all_at_once < one_at_a_time, "{out}");

    run_args("concurrent_reads", ["/no/such/file"]).usage_failure(1);
}

#[test]
fn tee_copies_standard_input_to_standard_output_and_two_files() {
    let dir = TempDir::new("tee");
    let data = pattern(500_000);
    let mut cmd = example("tee");
    cmd.arg(dir.path("a")).arg(dir.path("b"));
    let ran = run_with_input(cmd, &data).success();
    assert!(
        ran.raw_stdout == data,
        "stdout had {} bytes",
        ran.raw_stdout.len()
    );
    assert!(std::fs::read(dir.path("a")).unwrap() == data);
    assert!(std::fs::read(dir.path("b")).unwrap() == data);
    assert!(
        ran.stderr
            .contains("500000 bytes to standard output and both files"),
        "{}",
        ran.stderr
    );

    run_args("tee", [dir.path("a")]).usage_failure(2);
    run_args("tee", [dir.path("no/such/dir/a"), dir.path("b")]).usage_failure(1);
}

#[test]
fn timeout_race_shows_each_fate_of_a_cancelled_read() {
    let out = run(example("timeout_race")).success().stdout;
    assert!(out.contains("timed out after"), "{out}");
    assert!(
        out.contains("once the kernel answered: 0 in flight, 1 cancelled"),
        "{out}"
    );
    assert!(out.contains("Err(TimedOut)"), "{out}");
    assert!(
        out.contains("capacity 4096: ready for the next read"),
        "{out}"
    );
    assert!(
        out.contains("the next read returns \"hello\": nothing was lost")
            || out.contains("the read won the race: Ok(\"hello\")"),
        "{out}"
    );
}

// Real workloads.

#[test]
fn http_server_keeps_connections_alive_pipelines_and_refuses_bad_requests() {
    let server = Server::start("http_server", &[]);

    // Three pipelined requests in one write, answered in order.
    let mut conn = Http::connect(server.addr);
    conn.send(
        b"GET / HTTP/1.1\r\nHost: t\r\n\r\nGET /shard HTTP/1.1\r\nHost: t\r\n\r\nGET /nope HTTP/1.1\r\nHost: t\r\n\r\n",
    );
    let (head, body) = conn.response(true);
    assert_eq!(
        (head.status, body.as_slice()),
        (200, &b"Hello, world!\n"[..])
    );
    assert!(head.header("date").is_some_and(|d| d.ends_with(" GMT")));
    let (head, body) = conn.response(true);
    assert_eq!(head.status, 200);
    assert!(String::from_utf8(body)
        .unwrap()
        .starts_with("served by shard "));
    assert_eq!(conn.response(true).0.status, 404);
    // HEAD: the length, no body; then a body the server must skip, then GET again.
    conn.send(b"HEAD / HTTP/1.1\r\nHost: t\r\n\r\n");
    let (head, _) = conn.response(false);
    assert_eq!((head.status, head.content_length), (200, 14));
    conn.send(b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nGET / HTTP/");
    let (head, _) = conn.response(true);
    assert_eq!(head.status, 405);
    assert_eq!(head.header("allow"), Some("GET, HEAD"));
    assert_eq!(
        conn.get("/").0.status,
        200,
        "the body was skipped, not parsed"
    );
    // `Connection: close` is honoured.
    conn.send(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    let (head, _) = conn.response(true);
    assert!(head.close);
    assert!(conn.closed());

    // HTTP/1.0 closes unless asked to keep alive.
    let mut old = Http::connect(server.addr);
    old.send(b"GET / HTTP/1.0\r\n\r\n");
    assert_eq!(old.response(true).0.status, 200);
    assert!(old.closed());

    // Garbage gets 400, a head over 8 KiB gets 431; both close the connection.
    let mut bad = Http::connect(server.addr);
    bad.send(b"\x16\x03\x01 this is not http\r\n");
    let (head, _) = bad.response(true);
    assert_eq!((head.status, head.close), (400, true));
    assert!(bad.closed());
    let mut big = Http::connect(server.addr);
    let mut huge = b"GET / HTTP/1.1\r\nHost: t\r\nX-Big: ".to_vec();
    huge.resize(9 * 1024, b'x');
    big.send(&huge);
    let (head, _) = big.response(true);
    assert_eq!((head.status, head.close), (431, true));
    assert!(big.closed());

    // Many connections at once, each with a few requests.
    let clients: Vec<_> = (0..16)
        .map(|_| {
            let addr = server.addr;
            std::thread::spawn(move || {
                let mut conn = Http::connect(addr);
                for _ in 0..5 {
                    assert_eq!(conn.get("/").0.status, 200);
                }
            })
        })
        .collect();
    for client in clients {
        client.join().unwrap();
    }

    // Every shard serves (ADR-0009): connections are dealt to the shards in turn, so as many
    // connections as shards, opened one after another, are served by every shard (the
    // server has one shard per available CPU).
    let shards = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut open = Vec::new();
    let mut served_by = std::collections::BTreeSet::new();
    for _ in 0..shards {
        let mut conn = Http::connect(server.addr);
        let (head, body) = conn.get("/shard");
        assert_eq!(head.status, 200);
        served_by.insert(String::from_utf8(body).unwrap());
        open.push(conn);
    }
    assert_eq!(served_by.len(), shards, "{served_by:?}");
}

#[test]
fn file_server_serves_exact_lengths_and_nothing_outside_its_directory() {
    let dir = TempDir::new("files");
    let root = dir.path("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(dir.path("secret"), "outside").unwrap();
    std::fs::write(root.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(root.join("sub/index.html"), "<p>sub</p>").unwrap();
    let big = pattern(300_000);
    std::fs::write(root.join("big.bin"), &big).unwrap();
    std::os::unix::fs::symlink(dir.path("secret"), root.join("escape")).unwrap();
    std::os::unix::fs::symlink(root.join("a.txt"), root.join("inside")).unwrap();

    let server = Server::start("file_server", &[root.to_str().unwrap()]);
    let mut conn = Http::connect(server.addr);
    let (head, body) = conn.get("/a.txt");
    assert_eq!((head.status, head.content_length), (200, 6));
    assert_eq!(body, b"alpha\n");
    assert_eq!(
        head.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    let (head, body) = conn.get("/big.bin");
    assert_eq!((head.status, head.content_length), (200, 300_000));
    assert!(body == big);
    conn.send(b"HEAD /big.bin HTTP/1.1\r\nHost: t\r\n\r\n");
    let (head, _) = conn.response(false);
    assert_eq!((head.status, head.content_length), (200, 300_000));
    assert_eq!(
        conn.get("/inside").1,
        b"alpha\n",
        "a symlink that stays inside"
    );
    assert_eq!(conn.get("/./sub//index.html").1, b"<p>sub</p>");
    assert_eq!(conn.get("/a%2Etxt").1, b"alpha\n", "escapes are decoded");
    assert_eq!(conn.get("/missing").0.status, 404);
    for escape in [
        "/../secret",
        "/%2e%2e/secret",
        "/%2E%2E%2Fsecret",
        "/sub/../../secret",
        "/sub/%2e%2e/%2e%2e/secret",
        "/escape",
        "/a.txt/x",
        "/a.txt%00",
        "/%zz",
        "/a%2",
        "http://test/../secret",
        "*",
    ] {
        assert_eq!(conn.get(escape).0.status, 404, "{escape}");
    }
    let (head, _) = conn.get("/sub");
    assert_eq!((head.status, head.header("location")), (301, Some("/sub/")));
    // Not `//sub/`, which a browser reads as a link to the host `sub`.
    let (head, _) = conn.get("//sub");
    assert_eq!((head.status, head.header("location")), (301, Some("/sub/")));
    assert_eq!(conn.get("/sub/").1, b"<p>sub</p>");
    let (head, body) = conn.get("/");
    assert_eq!(head.status, 200);
    let listing = String::from_utf8(body).unwrap();
    for name in ["a.txt", "big.bin", "sub/"] {
        assert!(listing.contains(&format!(">{name}</a>")), "{listing}");
    }
    conn.send(b"DELETE /a.txt HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(conn.response(true).0.status, 405);
    drop(server);

    run_args(
        "file_server",
        ["127.0.0.1:0", dir.path("nowhere").to_str().unwrap()],
    )
    .usage_failure(1);
}

#[test]
fn logger_writes_every_line_in_batches() {
    let dir = TempDir::new("logger");
    let out = run_args("logger", [dir.path("log"), "5000".into()])
        .success()
        .stdout;
    assert!(out.starts_with("5000 lines from 8 tasks in "), "{out}");
    let log = std::fs::read_to_string(dir.path("log")).unwrap();
    assert_eq!(log.lines().count(), 5000);
    // Every task's lines are there, in the order it logged them.
    for task in 0..8 {
        let numbers: Vec<usize> = log
            .lines()
            .filter(|l| l.starts_with(&format!("task {task} line ")))
            .map(|l| l.split(' ').nth(3).unwrap().parse().unwrap())
            .collect();
        assert_eq!(numbers, (task..5000).step_by(8).collect::<Vec<_>>());
    }
    let calls: u64 = out
        .split(": ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect(&out);
    assert!(calls < 5000, "batched: {out}");
    run(example("logger")).usage_failure(2);
}

// io_uring features.

#[test]
fn sqpoll_runs_with_a_kernel_poller_or_explains_why_not() {
    let out = run(example("sqpoll")).success().stdout;
    assert!(
        out.contains("SqPoll ring:") || out.contains("SQPOLL is not permitted here"),
        "{out}"
    );
    let out = run_args("sqpoll", ["--refused"]).success().stdout;
    assert!(out.contains("SQPOLL is not permitted here"), "{out}");
    assert!(out.contains("20000 requests on the fallback ring"), "{out}");
    run_args("sqpoll", ["--fast"]).usage_failure(2);
}

#[test]
fn linked_cat_prints_a_file_with_linked_reads_and_writes() {
    let dir = TempDir::new("linked");
    let data = pattern(3 * 64 * 1024 + 7);
    std::fs::write(dir.path("data"), &data).unwrap();
    let ran = run_args("linked_cat", [dir.path("data")]).success();
    assert!(
        ran.raw_stdout == data,
        "printed {} bytes",
        ran.raw_stdout.len()
    );
    // Three full chains, the short one at the end, and the empty read that finds the end.
    // The short chain's tail needs a plain write; so does any write a pipe took short.
    assert!(
        ran.stderr
            .contains("196615 bytes in 5 linked read+write submissions, "),
        "{}",
        ran.stderr
    );
    assert!(!ran.stderr.contains(", 0 plain write(s)"), "{}", ran.stderr);
    run_args("linked_cat", [dir.path("missing")]).usage_failure(1);
}

#[test]
fn multishot_accept_takes_many_connections_with_one_request() {
    let mut server = Server::start("multishot_accept", &[]);
    let mode = server.next_line();
    let multishot = mode.contains("one multishot accept request");
    for n in 1..=3 {
        let mut conn = Http::connect(server.addr);
        let mut greeting = String::new();
        std::io::Read::read_to_string(&mut conn.stream, &mut greeting).unwrap();
        let requests = if multishot { 1 } else { n };
        assert_eq!(
            greeting,
            format!(
                "connection {n}: {requests} accept request(s) submitted for {n} connection(s)\n"
            ),
            "{mode}"
        );
    }
}

// Scheduling.

#[test]
fn work_stealing_reports_where_each_placement_ran_the_jobs() {
    let out = run_args("work_stealing", ["40"]).success().stdout;
    let row = |name: &str| -> Vec<u64> {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .expect(name);
        let list = &line[line.find('[').unwrap() + 1..line.find(']').unwrap()];
        list.split(", ").map(|n| n.parse().unwrap()).collect()
    };
    let pinned = row("Pinned(0)");
    assert_eq!(pinned[0], 40, "{out}");
    assert!(pinned[1..].iter().all(|&n| n == 0), "{out}");
    let dealt = row("RoundRobin");
    let (lo, hi) = (dealt.iter().min().unwrap(), dealt.iter().max().unwrap());
    assert!(hi - lo <= 1, "round robin deals evenly: {out}");
    assert_eq!(row("Stealable").iter().sum::<u64>(), 40, "{out}");
}

#[test]
fn graceful_shutdown_finishes_the_request_in_flight_then_exits_0() {
    let mut server = Server::start("graceful_shutdown", &["20000"]);
    let mut idle = Http::connect(server.addr);
    assert_eq!(idle.get("/").0.status, 200);
    let mut busy = Http::connect(server.addr);
    busy.send_get("/sleep/700");
    server.line_containing("request /sleep/700 started");
    server.signal(libc::SIGTERM);
    let (head, body) = busy.response(true);
    assert_eq!(
        (head.status, body.as_slice()),
        (200, &b"slept 700 ms\n"[..])
    );
    assert!(head.close, "the last response says the connection closes");
    assert!(busy.closed());
    assert!(idle.closed(), "an idle connection is closed at once");
    let draining = server.line_containing("no new connections");
    assert!(draining.starts_with("SIGTERM: "), "{draining}");
    let refused = std::net::TcpStream::connect(server.addr).unwrap_err();
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
    let (status, rest) = server.wait();
    assert!(status.success(), "{status}: {rest}");
    assert!(
        rest.contains("drained: every connection finished"),
        "{rest}"
    );
}

#[test]
fn graceful_shutdown_cuts_off_what_outlives_the_deadline_and_exits_1() {
    let mut server = Server::start("graceful_shutdown", &["100"]);
    let mut busy = Http::connect(server.addr);
    busy.send_get("/sleep/60000");
    server.line_containing("request /sleep/60000 started");
    server.signal(libc::SIGINT);
    let (status, rest) = server.wait();
    assert_eq!(status.code(), Some(1), "{rest}");
    assert!(
        rest.contains("SIGINT: no new connections; draining 1 connection(s)"),
        "{rest}"
    );
    assert!(
        rest.contains("deadline passed: 1 connection(s) cut off"),
        "{rest}"
    );
    assert!(busy.closed());
}

// The ecosystem: hyper, axum and rustls, with no tokio runtime.

/// One GET over HTTP/2 with prior knowledge, from hyper's own client on a one-shard
/// ringsteal runtime in this process: the version it was answered with and the body.
fn http2_get(addr: std::net::SocketAddr, path: &str) -> (hyper::Version, String) {
    use http_body_util::BodyExt;
    let rt = ringsteal::Runtime::builder().shards(1).build().unwrap();
    rt.block_on(async {
        let stream = ringsteal::net::TcpStream::connect(addr).await.unwrap();
        let (mut h2, conn) =
            hyper::client::conn::http2::Builder::new(ringsteal::hyper::Executor::new())
                .timer(ringsteal::hyper::Timer::new())
                .handshake(ringsteal::hyper::Io::new(stream))
                .await
                .unwrap();
        let driver = ringsteal::spawn(conn);
        let req = hyper::Request::get(format!("http://{addr}{path}"))
            .body(http_body_util::Empty::<hyper::body::Bytes>::new())
            .unwrap();
        let res = h2.send_request(req).await.unwrap();
        let version = res.version();
        let body = res.into_body().collect().await.unwrap().to_bytes();
        drop(h2);
        driver.await.unwrap().unwrap();
        (version, String::from_utf8(body.to_vec()).unwrap())
    })
}

/// A server example stops on SIGINT with status 0 and says so.
fn stops_on_sigint(server: Server) {
    server.signal(libc::SIGINT);
    let (status, rest) = server.wait();
    assert!(status.success(), "{status}: {rest}");
    assert!(rest.contains("stopped by SIGINT"), "{rest}");
}

#[test]
fn hyper_server_answers_http1_and_http2_on_every_shard_and_the_client_fetches() {
    let server = Server::start("hyper_server", &[]);

    // Keep-alive HTTP/1.1: as many connections as shards, opened one after another, are
    // dealt to every shard, and each connection stays on its shard.
    let shards = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut open = Vec::new();
    let mut served_by = std::collections::BTreeSet::new();
    for i in 0..shards {
        let mut conn = Http::connect(server.addr);
        let (head, body) = conn.get(&format!("/hello/{i}"));
        assert_eq!(head.status, 200);
        let body = String::from_utf8(body).unwrap();
        let rest = body.strip_prefix("hello from shard ").expect(&body);
        let (shard, tail) = rest.split_once(':').unwrap();
        assert_eq!(tail.trim(), format!("/hello/{i} HTTP/1.1"));
        let again = String::from_utf8(conn.get("/again").1).unwrap();
        assert!(
            again.starts_with(&format!("hello from shard {shard}:")),
            "{again}"
        );
        served_by.insert(shard.to_string());
        open.push(conn);
    }
    assert_eq!(served_by.len(), shards, "{served_by:?}");
    drop(open);

    // HTTP/2 with prior knowledge, on the same port.
    let (version, body) = http2_get(server.addr, "/two");
    assert_eq!(version, hyper::Version::HTTP_2);
    assert!(body.ends_with("/two HTTP/2.0\n"), "{body}");

    // The client example fetches from it and prints what curl -i would.
    let url = format!("http://{}/from-the-client", server.addr);
    let out = run_args("hyper_client", [url]).success().stdout;
    assert!(out.starts_with("HTTP/1.1 200 OK\n"), "{out}");
    assert!(out.contains("\ncontent-length: "), "{out}");
    assert!(out.ends_with("/from-the-client HTTP/1.1\n"), "{out}");

    stops_on_sigint(server);
}

#[test]
fn hyper_server_and_axum_server_refuse_an_address_in_use_and_extra_arguments() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    for name in ["hyper_server", "axum_server"] {
        let ran = run_args(name, [addr.as_str()]).usage_failure(1);
        assert!(ran.stderr.contains("cannot listen on"), "{}", ran.stderr);
        run_args(name, ["127.0.0.1:0", "extra"]).usage_failure(2);
    }
}

#[test]
fn hyper_client_refuses_what_it_cannot_fetch() {
    for url in ["https://example.invalid/", "not a url"] {
        let ran = run_args("hyper_client", [url]).usage_failure(2);
        assert!(ran.stderr.contains("error: "), "{}", ran.stderr);
    }
    // Nothing listens on a port that was just given back.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", closed.local_addr().unwrap());
    drop(closed);
    let ran = run_args("hyper_client", [url]).usage_failure(1);
    assert!(ran.stderr.contains("cannot fetch"), "{}", ran.stderr);
    run_args("hyper_client", ["http://127.0.0.1:1/", "extra"]).usage_failure(2);
}

#[test]
fn axum_server_routes_requests_shares_its_state_and_speaks_http2() {
    let server = Server::start("axum_server", &[]);
    let mut conn = Http::connect(server.addr);
    let (head, body) = conn.get("/");
    assert_eq!(
        (head.status, body.as_slice()),
        (200, &b"hello from axum on ringsteal\n"[..])
    );
    // A new connection per greeting: they land on different shards and share the count.
    for n in 1..=3 {
        let body = String::from_utf8(Http::connect(server.addr).get("/hello/ring").1).unwrap();
        assert!(
            body.starts_with(&format!("hello, ring (greeting {n}, shard ")),
            "{body}"
        );
    }
    assert_eq!(conn.get("/nowhere").0.status, 404);
    // hyper-util's auto builder takes HTTP/2 with prior knowledge on the same port.
    let (version, body) = http2_get(server.addr, "/");
    assert_eq!(
        (version, body.as_str()),
        (hyper::Version::HTTP_2, "hello from axum on ringsteal\n")
    );
    drop(conn);
    // SIGTERM drains: a request in flight is answered, then the server exits.
    let mut server = server;
    let mut busy = Http::connect(server.addr);
    busy.send_get("/sleep/700");
    server.line_containing("request /sleep/700 started");
    server.signal(libc::SIGTERM);
    let (head, body) = busy.response(true);
    assert_eq!(
        (head.status, body.as_slice()),
        (200, &b"slept 700 ms\n"[..])
    );
    let (status, rest) = server.wait();
    assert!(status.success(), "{status}: {rest}");
    assert!(rest.contains("stopped by SIGTERM"), "{rest}");
}

/// axum_server's `/chat`, upgraded by hand: WebSocket clients (tokio-tungstenite over
/// ringsteal streams, in this process) each get every message anyone sent after they
/// joined, each sender's in order; a plain GET of `/chat` is refused.
#[test]
fn axum_server_upgrades_websockets_and_broadcasts_the_chat_in_order() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;

    let server = Server::start("axum_server", &[]);
    assert_eq!(Http::connect(server.addr).get("/chat").0.status, 400);
    let addr = server.addr;
    let rt = ringsteal::Runtime::builder().shards(2).build().unwrap();
    rt.block_on(async move {
        let mut clients = Vec::new();
        for i in 0..4 {
            let stream = ringsteal::net::TcpStream::connect(addr).await.unwrap();
            let io = ringsteal::io::compat::PollIo::new(stream);
            let url = format!("ws://{addr}/chat");
            let (mut ws, response) = tokio_tungstenite::client_async(url, io).await.unwrap();
            assert_eq!(response.status(), 101);
            // Its own greeting coming back means the server has subscribed it.
            let hello = format!("hello from {i}");
            ws.send(Message::text(hello.clone())).await.unwrap();
            loop {
                let got = ws.next().await.unwrap().unwrap();
                if got.to_text().unwrap() == hello {
                    break;
                }
            }
            clients.push(ws);
        }
        // 25 messages from each client, interleaved. Every client gets all 100; each
        // sender's in the order it sent them (senders on different shards race each other,
        // as on tokio). Greetings of later clients come first to earlier ones: skipped.
        for n in 0..100 {
            let (sender, k) = (n % 4, n / 4);
            clients[sender]
                .send(Message::text(format!("message {sender} {k}")))
                .await
                .unwrap();
        }
        for ws in &mut clients {
            let mut next = [0; 4];
            while next.iter().sum::<usize>() < 100 {
                let text = ws.next().await.unwrap().unwrap().into_text().unwrap();
                if text.starts_with("hello from") {
                    continue;
                }
                let mut words = text.split(' ').skip(1).map(|w| w.parse::<usize>().unwrap());
                let (sender, k) = (words.next().unwrap(), words.next().unwrap());
                assert_eq!(k, next[sender], "{text}: out of order");
                next[sender] += 1;
            }
        }
        for mut ws in clients {
            ws.close(None).await.unwrap();
        }
    });
    stops_on_sigint(server);
}

#[test]
fn tls_echo_round_trips_text_over_rustls() {
    let out = run(example("tls_echo")).success().stdout;
    assert_eq!(out, "echoed over TLS: hello over rustls on io_uring\n");
    let out = run_args("tls_echo", ["any text, even ünïcode"])
        .success()
        .stdout;
    assert_eq!(out, "echoed over TLS: any text, even ünïcode\n");
    run_args("tls_echo", ["one", "two"]).usage_failure(2);
}

// Measuring harnesses.

/// Runs the `http_placement` harness in `placement` on two shards until SIGINT, opens
/// `connections` keep-alive connections one after another (one request each), stops it, and
/// returns the connections each shard served, from its report.
fn http_placement_split(placement: &str, connections: usize) -> Vec<u64> {
    let mut cmd = example("http_placement");
    cmd.args([placement, "0", "0", "2"]);
    let server = Server::spawn(cmd);
    let open: Vec<Http> = (0..connections)
        .map(|_| {
            let mut conn = Http::connect(server.addr);
            let (head, body) = conn.get("/");
            assert_eq!((head.status, body.as_slice()), (200, &b"Hello, world!"[..]));
            conn
        })
        .collect();
    server.signal(libc::SIGINT);
    let (status, report) = server.wait();
    drop(open);
    assert!(status.success(), "{status}: {report}");
    let split: Vec<u64> = report
        .lines()
        .filter(|l| l.starts_with("shard "))
        .map(|l| {
            let count = l.split_whitespace().nth(3).expect(l);
            count.parse().expect(l)
        })
        .collect();
    assert_eq!(split.len(), 2, "{report}");
    split
}

#[test]
fn http_placement_deals_the_obvious_servers_connections_over_the_shards() {
    for placement in ["default", "incoming"] {
        assert_eq!(http_placement_split(placement, 8), [4, 4], "{placement}");
    }
}

#[test]
fn http_placement_serves_with_a_listener_per_shard_and_refuses_bad_arguments() {
    let split = http_placement_split("reuseport", 8);
    assert_eq!(split.iter().sum::<u64>(), 8, "{split:?}");
    run_args("http_placement", ["nowhere", "0", "1"]).usage_failure(2);
    run_args("http_placement", ["default", "port", "1"]).usage_failure(2);
    run(example("http_placement")).usage_failure(2);
}

#[test]
fn send_zc_threshold_compares_plain_and_zero_copy_sends_by_size() {
    let ran = run_args("send_zc_threshold", ["loopback", "1"]);
    if ran.stderr.contains("this kernel has no IORING_OP_SEND_ZC") {
        assert_eq!(ran.status.code(), Some(1));
    } else {
        let out = ran.success().stdout;
        assert!(out.starts_with("size, shape, plain, zero-copy"), "{out}");
        for size in [1024, 65536, 1 << 20] {
            assert!(out.contains(&format!("\n{size}, stream, ")), "{out}");
            assert!(out.contains(&format!("\n{size}, ping-pong, ")), "{out}");
        }
    }
    run_args("send_zc_threshold", ["not-an-address"]).usage_failure(2);
    run_args("send_zc_threshold", ["loopback", "0"]).usage_failure(2);
}

// The tour.

#[test]
fn the_tour_visits_every_section_and_serves_http_on_every_shard() {
    let mut cmd = example("tour");
    cmd.env("RINGSTEAL_TOUR_HTTP_SECS", "0.3");
    let ran = run(cmd).success();
    let out = ran.stdout;
    assert!(!ran.stderr.contains("failed"), "{}", ran.stderr);
    for section in [
        "1. the kernel",
        "2. placement",
        "3. stealing",
        "4. timers",
        "5. files",
        "6. messages between shards",
        "7. cancellation",
        "8. an HTTP server on every shard, under load",
        "9. counters",
    ] {
        assert!(out.contains(section), "missing {section:?}:\n{out}");
    }
    assert!(out.contains("requests/s"), "{out}");
    assert!(out.contains("latency as each client saw it: p50"), "{out}");
    // The per-shard table of the HTTP section: every client connection is counted once, and
    // the plain `spawn` after each accept dealt them evenly over the shards (ADR-0009).
    assert!(
        out.contains("connection tasks dealt to the shards in turn after an accept: 32"),
        "{out}"
    );
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.contains("connections  requests"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    let connections: Vec<u64> = table
        .iter()
        .map(|row| {
            row.split_whitespace()
                .nth(1)
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .collect();
    assert_eq!(connections.iter().sum::<u64>(), 32, "{out}");
    let (fewest, most) = (connections.iter().min(), connections.iter().max());
    assert!(most.unwrap() - fewest.unwrap() <= 1, "dealt evenly:\n{out}");
    assert!(out.contains("\ntour took "), "{out}");
}
