//! A process that awaits `ctrl_c` survives `kill -INT` of itself: a child run by this test
//! (this test binary again) installs it, has `kill -INT <its pid>` run, and exits 0 on
//! receiving it, under both wake mechanisms; then, with no listener left, a second SIGINT
//! ends it as usual.

mod common;

use std::os::unix::process::ExitStatusExt;

use common::{child_role, run_self_as_child, WAKES};

const TEST: &str = "a_child_awaiting_ctrl_c_survives_kill_int_of_itself";

#[test]
fn a_child_awaiting_ctrl_c_survives_kill_int_of_itself() {
    if let Some(role) = child_role() {
        let wake = WAKES[role.parse::<usize>().unwrap()];
        run_child(wake);
        return;
    }
    for (i, wake) in WAKES.iter().enumerate() {
        let out = run_self_as_child(TEST, &i.to_string());
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stdout.contains("got ctrl-c"),
            "{wake:?}: {stdout}\n{stderr}"
        );
        // The second SIGINT, with no listener, ended it by the default action.
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGINT),
            "{wake:?}: {stdout}\n{stderr}"
        );
        assert!(!stdout.contains("after the second"), "{wake:?}");
    }
}

fn run_child(wake: ringsteal_rt::WakeMechanism) {
    let rt = common::runtime(wake, 2);
    rt.block_on(async {
        let ctrl_c = ringsteal_signal::ctrl_c();
        // `kill -INT` of this very process, from outside (a shell command).
        let status = std::process::Command::new("sh")
            .args(["-c", &format!("kill -INT {}", std::process::id())])
            .status()
            .unwrap();
        assert!(status.success());
        ctrl_c.await.unwrap();
        println!("got ctrl-c");
    });
    // SAFETY: raise sends a signal to this thread.
    unsafe { libc::raise(libc::SIGINT) };
    println!("after the second");
}
