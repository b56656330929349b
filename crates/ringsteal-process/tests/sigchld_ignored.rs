//! A process that ignores `SIGCHLD` has its children reaped by the kernel as they exit
//! (here set in the test; often inherited from a parent). A child that exits before
//! `spawn` opens its pidfd is then gone: `spawn` says so clearly (the child ran), instead of
//! `ESRCH`, and never signals or waits for its pid, which may name another process by then
//! (a review found both). A child spawn tracked in time whose exit the kernel reaped makes
//! `wait` fail, not hang. Its own binary: the disposition is the whole process's.

use std::time::Duration;

use ringsteal_process::Command;

#[test]
fn spawns_under_an_ignored_sigchld_fail_clearly_or_wait_without_hanging() {
    // SAFETY: setting a signal's disposition to SIG_IGN; this binary runs this one test.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) };
    let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    let (mut reaped_early, mut tracked) = (0, 0);
    rt.block_on(async {
        for _ in 0..20 {
            match Command::new("true").spawn() {
                Err(e) => {
                    assert!(e.to_string().contains("SIGCHLD is ignored"), "{e}");
                    assert!(e.to_string().contains("ran"), "{e}");
                    reaped_early += 1;
                }
                Ok(mut child) => {
                    tracked += 1;
                    let waited = ringsteal_rt::time::timeout(Duration::from_secs(30), child.wait())
                        .await
                        .expect("wait ended");
                    // The kernel reaped it: its status is lost (ECHILD), as std's wait says.
                    if let Err(e) = waited {
                        assert_eq!(e.raw_os_error(), Some(libc::ECHILD), "{e}");
                    }
                }
            }
        }
    });
    assert_eq!(reaped_early + tracked, 20);
    // (Which way each spawn goes is the scheduler's; both are checked when they happen.)
    eprintln!("{reaped_early} reaped before they were tracked, {tracked} tracked");
    // SAFETY: restoring the default disposition.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
}
