//! Child processes and signals on ringsteal: run a command and collect its output, stream
//! data through a child's pipes, run many children at once across shards, stop one that takes
//! too long, and catch a signal.
//!
//! ```text
//! cargo run --release --example subprocess
//! ```

use std::time::{Duration, Instant};

use ringsteal::process::{Command, Stdio};
use ringsteal::signal::{signal, SignalKind};
use ringsteal::{Placement, Runtime};

fn main() {
    if let Err(e) = run() {
        eprintln!("subprocess example failed: {e}");
        std::process::exit(1);
    }
}

pub(crate) fn run() -> Result<(), Box<dyn std::error::Error>> {
    let rt = Runtime::builder().shards(2).build()?;
    rt.block_on(async {
        println!("1. output of a command");
        let out = Command::new("uname").arg("-sr").output().await?;
        println!(
            "   uname -sr -> {}",
            String::from_utf8_lossy(&out.stdout).trim()
        );
        assert!(out.status.success());

        println!("2. streaming through a child's pipes");
        let bytes = stream_through_sort().await?;
        println!("   sorted {bytes} bytes of numbers with sort(1), written and read at once");

        println!("3. many children at once");
        let start = Instant::now();
        let children: Vec<_> = (0..64)
            .map(|i| {
                ringsteal::spawn_with(Placement::RoundRobin, async move {
                    let status = Command::new("sh")
                        .args(["-c", &format!("exit {}", i % 7)])
                        .status()
                        .await?;
                    Ok::<_, std::io::Error>((i, status, ringsteal::current_shard()))
                })
            })
            .collect();
        let mut per_shard = [0usize; 2];
        for child in children {
            let (i, status, shard) = child.await??;
            assert_eq!(status.code(), Some(i % 7));
            per_shard[shard.unwrap_or(0)] += 1;
        }
        println!(
            "   64 children, exit codes checked, in {:.1?} (waited on shard 0: {}, shard 1: {})",
            start.elapsed(),
            per_shard[0],
            per_shard[1]
        );

        println!("4. a child that takes too long");
        let mut slow = Command::new("sleep").arg("30").kill_on_drop(true).spawn()?;
        let res = ringsteal::time::timeout(Duration::from_millis(50), slow.wait()).await;
        assert!(res.is_err(), "sleep 30 finished early");
        slow.kill().await?;
        let status = slow.wait().await?;
        println!("   timed out after 50 ms, killed: {status}");

        println!("5. a signal");
        let mut usr1 = signal(SignalKind::user_defined1())?;
        // What `kill -USR1 <pid>` would do, from a child process.
        Command::new("kill")
            .args(["-USR1", &std::process::id().to_string()])
            .status()
            .await?;
        usr1.recv().await.ok_or("no SIGUSR1")?;
        println!("   SIGUSR1 received");
        Ok(())
    })
}

/// Writes 20,000 numbers into `sort -n` from one task while another reads the result: with
/// both pipes in flight at once, neither side waits on a full pipe.
async fn stream_through_sort() -> std::io::Result<usize> {
    let mut child = Command::new("sort")
        .arg("-n")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let writer = ringsteal::spawn(async move {
        let numbers: String = (0..20_000u32).rev().map(|n| format!("{n}\n")).collect();
        let (res, _) = stdin.write_all(numbers.into_bytes()).await;
        res // stdin is dropped here: sort sees end of input
    });
    let (res, sorted) = stdout.read_to_end(Vec::new()).await;
    res?;
    writer.await.map_err(std::io::Error::other)??;
    assert!(child.wait().await?.success());
    let text = String::from_utf8_lossy(&sorted);
    assert!(text
        .lines()
        .map(|l| l.parse::<u32>().unwrap())
        .eq(0..20_000));
    Ok(sorted.len())
}
