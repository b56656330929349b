//! Permission bits refuse ringsteal's calls exactly as they refuse std's: `PermissionDenied`
//! (EACCES, or EPERM where the kernel says so) for the same calls on the same files.
//!
//! These tests run as root here, and root passes every permission-bit check. To be refused,
//! the shard thread running the test drops its *filesystem* uid and gid to nobody's
//! (`setfsuid`/`setfsgid` are per thread, and dropping fsuid 0 also drops the
//! CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH/CAP_FOWNER capabilities from the thread's effective
//! set), makes each call with ringsteal and then with std on that same thread, and restores
//! both ids before it yields to anything else. io_uring runs a request with the credentials of
//! the thread that submitted it (also when it finishes on an io-wq worker), so the ring ops
//! see nobody's ids too. Run as a non-root user, the files are simply not accessible and the
//! ids are left alone.
//!
//! Left out: `canonicalize` and `read_dir`, which run on the blocking pool, whose threads keep
//! their own (root) ids: that is an artifact of changing one thread's ids, not a behaviour a
//! real unprivileged process would see.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use ringsteal_fs::{File, OpenOptions};

use common::*;

const NOBODY: u32 = 65534;

/// While alive, this thread's filesystem ids are nobody's (if the process is root).
struct AsNobody {
    ids: Option<(u32, u32)>,
}

impl AsNobody {
    fn enter() -> Self {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Self { ids: None };
        }
        // SAFETY: setfsgid/setfsuid change this thread's filesystem ids; they return the
        // previous ones.
        let (gid, uid) = unsafe { (libc::setfsgid(NOBODY), libc::setfsuid(NOBODY)) };
        // SAFETY: an invalid id (-1) changes nothing and returns the current one.
        let now = unsafe { libc::setfsuid(u32::MAX) };
        assert_eq!(now as u32, NOBODY, "setfsuid did not take effect");
        Self {
            ids: Some((uid as u32, gid as u32)),
        }
    }
}

impl Drop for AsNobody {
    fn drop(&mut self) {
        if let Some((uid, gid)) = self.ids {
            // SAFETY: restores the ids `enter` saved (uid first, regaining the capabilities).
            unsafe {
                libc::setfsuid(uid);
                libc::setfsgid(gid);
            }
        }
    }
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Asserts the same outcome as std's and, when `denied`, that it is `PermissionDenied`
/// (so the test really met the refusal it is about).
fn same<T: std::fmt::Debug, U: std::fmt::Debug>(
    ours: std::io::Result<T>,
    std: std::io::Result<U>,
    denied: bool,
    what: &str,
) {
    assert_same_outcome(&ours, &std, what);
    if denied {
        let err = ours.expect_err(what);
        assert_eq!(
            err.kind(),
            std::io::ErrorKind::PermissionDenied,
            "{what}: {err}"
        );
    }
}

#[test]
fn calls_without_permission_are_refused_as_in_std() {
    // Not under SQPOLL: its kernel poller submits with the credentials of the thread that set
    // the ring up, so one thread's changed ids never reach the ring ops there (documented on
    // `Builder::sqpoll`); a process that drops its ids before building the runtime is refused
    // under SQPOLL too.
    for config in EVERY_MODE.into_iter().filter(|c| !c.sqpoll) {
        on_every_shard_of(config, "denied", denied);
    }
}

async fn denied(ctx: Ctx) {
    let d = ctx.dir.path();
    // Twin trees: an unreadable file, a read-only file, a read-only directory with a file
    // and an empty subdirectory in it, a directory nobody may search.
    for side in ["ours", "std"] {
        let root = d.join(side);
        std::fs::create_dir_all(root.join("ro-dir/sub")).unwrap();
        std::fs::create_dir_all(root.join("locked")).unwrap();
        std::fs::write(root.join("secret"), b"secret").unwrap();
        std::fs::write(root.join("readonly"), b"readonly").unwrap();
        std::fs::write(root.join("ro-dir/file"), b"file").unwrap();
        std::fs::write(root.join("locked/file"), b"file").unwrap();
        chmod(&root.join("secret"), 0o000);
        chmod(&root.join("readonly"), 0o444);
        chmod(&root.join("ro-dir"), 0o555);
        chmod(&root.join("locked"), 0o000);
        chmod(&root, 0o777);
    }
    let (o, s) = (d.join("ours"), d.join("std"));

    let nobody = AsNobody::enter();
    macro_rules! check {
        ($denied:expr, $what:literal, |$p:ident| $ours:expr, $std:expr) => {{
            let ours = {
                let $p = &o;
                $ours.await
            };
            let std = {
                let $p = &s;
                $std
            };
            same(ours, std, $denied, $what);
        }};
    }
    check!(
        true,
        "File::open of a 0o000 file",
        |p| File::open(p.join("secret")),
        std::fs::File::open(p.join("secret"))
    );
    check!(
        true,
        "read of a 0o000 file",
        |p| ringsteal_fs::read(p.join("secret")),
        std::fs::read(p.join("secret"))
    );
    check!(
        true,
        "read_to_string of a 0o000 file",
        |p| ringsteal_fs::read_to_string(p.join("secret")),
        std::fs::read_to_string(p.join("secret"))
    );
    check!(
        false,
        "metadata of a 0o000 file",
        |p| ringsteal_fs::metadata(p.join("secret")),
        std::fs::metadata(p.join("secret"))
    );
    check!(
        true,
        "write-open of a 0o444 file",
        |p| OpenOptions::new().write(true).open(p.join("readonly")),
        std::fs::OpenOptions::new()
            .write(true)
            .open(p.join("readonly"))
    );
    check!(
        true,
        "write to a 0o444 file",
        |p| ringsteal_fs::write(p.join("readonly"), b"x"),
        std::fs::write(p.join("readonly"), b"x")
    );
    check!(
        true,
        "File::create in a 0o555 dir",
        |p| File::create(p.join("ro-dir/new")),
        std::fs::File::create(p.join("ro-dir/new"))
    );
    check!(
        true,
        "File::create_new in a 0o555 dir",
        |p| File::create_new(p.join("ro-dir/new")),
        std::fs::File::create_new(p.join("ro-dir/new"))
    );
    check!(
        true,
        "write in a 0o555 dir",
        |p| ringsteal_fs::write(p.join("ro-dir/new"), b"x"),
        std::fs::write(p.join("ro-dir/new"), b"x")
    );
    check!(
        true,
        "create_dir in a 0o555 dir",
        |p| ringsteal_fs::create_dir(p.join("ro-dir/d")),
        std::fs::create_dir(p.join("ro-dir/d"))
    );
    check!(
        true,
        "create_dir_all in a 0o555 dir",
        |p| ringsteal_fs::create_dir_all(p.join("ro-dir/a/b")),
        std::fs::create_dir_all(p.join("ro-dir/a/b"))
    );
    check!(
        true,
        "remove_file in a 0o555 dir",
        |p| ringsteal_fs::remove_file(p.join("ro-dir/file")),
        std::fs::remove_file(p.join("ro-dir/file"))
    );
    check!(
        true,
        "remove_dir in a 0o555 dir",
        |p| ringsteal_fs::remove_dir(p.join("ro-dir/sub")),
        std::fs::remove_dir(p.join("ro-dir/sub"))
    );
    check!(
        true,
        "rename in a 0o555 dir",
        |p| ringsteal_fs::rename(p.join("ro-dir/file"), p.join("ro-dir/moved")),
        std::fs::rename(p.join("ro-dir/file"), p.join("ro-dir/moved"))
    );
    check!(
        true,
        "rename out of a 0o555 dir",
        |p| ringsteal_fs::rename(p.join("ro-dir/file"), p.join("out")),
        std::fs::rename(p.join("ro-dir/file"), p.join("out"))
    );
    check!(
        true,
        "symlink in a 0o555 dir",
        |p| ringsteal_fs::symlink("x", p.join("ro-dir/link")),
        std::os::unix::fs::symlink("x", p.join("ro-dir/link"))
    );
    check!(
        true,
        "hard_link into a 0o555 dir",
        |p| ringsteal_fs::hard_link(p.join("readonly"), p.join("ro-dir/link")),
        std::fs::hard_link(p.join("readonly"), p.join("ro-dir/link"))
    );
    check!(
        true,
        "File::open under a 0o000 dir",
        |p| File::open(p.join("locked/file")),
        std::fs::File::open(p.join("locked/file"))
    );
    check!(
        true,
        "metadata under a 0o000 dir",
        |p| ringsteal_fs::metadata(p.join("locked/file")),
        std::fs::metadata(p.join("locked/file"))
    );
    check!(
        true,
        "symlink_metadata under a 0o000 dir",
        |p| ringsteal_fs::symlink_metadata(p.join("locked/file")),
        std::fs::symlink_metadata(p.join("locked/file"))
    );
    check!(
        true,
        "try_exists under a 0o000 dir",
        |p| ringsteal_fs::try_exists(p.join("locked/file")),
        p.join("locked/file").try_exists()
    );
    check!(
        true,
        "copy from a 0o000 file",
        |p| ringsteal_fs::copy(p.join("secret"), p.join("copy")),
        std::fs::copy(p.join("secret"), p.join("copy"))
    );
    check!(
        true,
        "copy into a 0o555 dir",
        |p| ringsteal_fs::copy(p.join("readonly"), p.join("ro-dir/copy")),
        std::fs::copy(p.join("readonly"), p.join("ro-dir/copy"))
    );
    // A file opened while permitted stays usable; a read-only one still refuses writes.
    check!(
        false,
        "File::open of a 0o444 file",
        |p| File::open(p.join("readonly")),
        std::fs::File::open(p.join("readonly"))
    );
    drop(nobody);

    chmod(&o.join("locked"), 0o755);
    chmod(&s.join("locked"), 0o755);
    assert_eq!(snapshot(&o), snapshot(&s), "the trees differ afterwards");
}
