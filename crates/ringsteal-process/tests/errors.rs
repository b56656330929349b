//! Bad input gives std's errors: a program that does not exist, one that is not executable,
//! a directory as the program, a working directory that is missing or not a directory. No
//! child is left behind by a failed spawn.

mod common;

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use ringsteal_process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "ringsteal-process-errors-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Spawns with std and with ringsteal, the same setup; both must fail the same way.
fn both_fail(what: &str, setup: impl Fn(&mut std::process::Command)) -> io::Error {
    let mut std_cmd = std::process::Command::new("placeholder");
    setup(&mut std_cmd);
    let std_err = std_cmd.spawn().expect_err(what);

    let mut ours: Command = {
        let mut c = std::process::Command::new("placeholder");
        setup(&mut c);
        c.into()
    };
    let rt = common::Config::ALL[0].runtime(1);
    let err = rt.block_on(async { ours.status().await }).expect_err(what);
    assert_eq!(
        err.kind(),
        std_err.kind(),
        "{what}: {err} vs std's {std_err}"
    );
    assert_eq!(err.raw_os_error(), std_err.raw_os_error(), "{what}");
    err
}

fn program(cmd: &mut std::process::Command, path: impl Into<PathBuf>) {
    *cmd = std::process::Command::new(path.into());
}

#[test]
fn a_program_that_does_not_exist_is_not_found() {
    let err = both_fail("missing program", |c| {
        program(c, "ringsteal-no-such-program-anywhere")
    });
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    let err = both_fail("missing path", |c| program(c, "/nonexistent/dir/prog"));
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
}

#[test]
fn a_file_without_execute_permission_is_permission_denied() {
    let dir = scratch("noexec");
    let file = dir.join("script.sh");
    std::fs::write(&file, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = both_fail("not executable", |c| program(c, &file));
    assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_directory_as_the_program_is_permission_denied() {
    let dir = scratch("dir-prog");
    let err = both_fail("directory as program", |c| program(c, &dir));
    assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_bad_working_directory_gives_std_errors() {
    let dir = scratch("cwd");
    let missing = dir.join("missing");
    let err = both_fail("missing cwd", |c| {
        program(c, "/bin/true");
        c.current_dir(&missing);
    });
    assert_eq!(err.kind(), io::ErrorKind::NotFound);

    let file = dir.join("file");
    std::fs::write(&file, "not a directory").unwrap();
    let err = both_fail("file as cwd", |c| {
        program(c, "/bin/true");
        c.current_dir(&file);
    });
    assert_eq!(err.raw_os_error(), Some(libc::ENOTDIR));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn output_of_a_missing_program_is_an_error_not_a_panic() {
    let rt = common::Config::ALL[1].runtime(1);
    let err = rt
        .block_on(async { Command::new("ringsteal-no-such-program").output().await })
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
}

#[test]
fn waiting_off_a_runtime_is_an_error_not_a_panic() {
    let rt = common::Config::ALL[0].runtime(1);
    let mut child = rt.block_on(async { Command::new("true").spawn() }).unwrap();
    // A plain executor, not a shard: the wait cannot be submitted to any ring.
    let res = block_on_plain_thread(child.wait());
    let err = res.expect_err("no shard to wait on");
    assert!(err.to_string().contains("ringsteal shard"), "{err}");
    // On a runtime it works, and nothing was lost.
    assert!(rt.block_on(child.wait()).unwrap().success());
}

/// Runs a future on this plain thread.
fn block_on_plain_thread<F: std::future::Future>(fut: F) -> F::Output {
    use std::task::{Context, Poll, Wake, Waker};
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}
