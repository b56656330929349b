//! Bad input gives the error std gives for the same input, side by side: the same
//! `ErrorKind` and, where std's error carries one, the same errno. Missing files, a directory
//! where a file is expected and the reverse, refused open-option combinations, invalid UTF-8,
//! reads past the end, empty buffers, NUL bytes in paths, descriptors opened the wrong way,
//! symlink loops, over-long names, and what the kernel refuses even to root.
//!
//! About permissions: these tests run as root here, and root passes every permission-bit
//! check (CAP_DAC_OVERRIDE). What root is still refused, and is tested here: `link(2)` of a
//! directory (EPERM: PermissionDenied), `unlink(2)` of a directory (EISDIR), `rmdir(2)` of a
//! mount point (EBUSY) or of `.` (EINVAL), moving a directory into itself (EINVAL), and
//! writes through a read-only descriptor (EBADF). EACCES from permission bits is tested in
//! `permission_denied.rs`, which drops the filesystem uid of the shard thread.
//!
//! Every test runs on each shard of a one-shard and a two-shard runtime.

mod common;

use std::os::unix::fs::FileExt;
use std::path::Path;

use ringsteal_fs::{File, OpenOptions};

use common::*;

/// Twin trees for one case: `setup` runs in `ours` and in `std` (both get a file `other`
/// first), then every path-taking call is made on `ours/rel` with ringsteal and on `std/rel`
/// with std, in lockstep, asserting the same outcome for each; the trees must still be equal
/// at the end. Two-path calls pair `rel` with `other`.
async fn every_path_call_matches_std(dir: &Path, case: &str, rel: &str, setup: impl Fn(&Path)) {
    let (ours_root, std_root) = (
        dir.join(format!("{case}-ours")),
        dir.join(format!("{case}-std")),
    );
    for root in [&ours_root, &std_root] {
        std::fs::create_dir(root).unwrap();
        std::fs::write(root.join("other"), b"other").unwrap();
        setup(root);
    }
    let (path, other) = (ours_root.join(rel), ours_root.join("other"));
    let (spath, sother) = (std_root.join(rel), std_root.join("other"));
    macro_rules! same {
        ($name:literal, $ours:expr, $std:expr) => {
            assert_same_outcome(&$ours.await, &$std, &format!("{} ({case})", $name))
        };
    }
    same!("File::open", File::open(&path), std::fs::File::open(&spath));
    same!(
        "File::create",
        File::create(&path),
        std::fs::File::create(&spath)
    );
    same!(
        "File::create_new",
        File::create_new(&path),
        std::fs::File::create_new(&spath)
    );
    same!(
        "OpenOptions rw",
        OpenOptions::new().read(true).write(true).open(&path),
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&spath)
    );
    same!("read", ringsteal_fs::read(&path), std::fs::read(&spath));
    same!(
        "read_to_string",
        ringsteal_fs::read_to_string(&path),
        std::fs::read_to_string(&spath)
    );
    same!(
        "write",
        ringsteal_fs::write(&path, b"x"),
        std::fs::write(&spath, b"x")
    );
    same!(
        "metadata",
        ringsteal_fs::metadata(&path),
        std::fs::metadata(&spath)
    );
    same!(
        "symlink_metadata",
        ringsteal_fs::symlink_metadata(&path),
        std::fs::symlink_metadata(&spath)
    );
    same!(
        "try_exists",
        ringsteal_fs::try_exists(&path),
        spath.try_exists()
    );
    same!(
        "read_dir",
        ringsteal_fs::read_dir(&path),
        std::fs::read_dir(&spath)
    );
    same!(
        "create_dir",
        ringsteal_fs::create_dir(&path),
        std::fs::create_dir(&spath)
    );
    same!(
        "create_dir_all",
        ringsteal_fs::create_dir_all(&path),
        std::fs::create_dir_all(&spath)
    );
    same!(
        "copy from",
        ringsteal_fs::copy(&path, &other),
        std::fs::copy(&spath, &sother)
    );
    same!(
        "copy to",
        ringsteal_fs::copy(&other, &path),
        std::fs::copy(&sother, &spath)
    );
    same!(
        "rename from",
        ringsteal_fs::rename(&path, &other),
        std::fs::rename(&spath, &sother)
    );
    same!(
        "rename to",
        ringsteal_fs::rename(&other, &path),
        std::fs::rename(&sother, &spath)
    );
    same!(
        "hard_link from",
        ringsteal_fs::hard_link(&path, &other),
        std::fs::hard_link(&spath, &sother)
    );
    same!(
        "symlink at",
        ringsteal_fs::symlink("other", &path),
        std::os::unix::fs::symlink("other", &spath)
    );
    same!(
        "remove_file",
        ringsteal_fs::remove_file(&path),
        std::fs::remove_file(&spath)
    );
    same!(
        "remove_dir",
        ringsteal_fs::remove_dir(&path),
        std::fs::remove_dir(&spath)
    );
    // canonicalize last: its result names the tree.
    let (c, sc) = (
        ringsteal_fs::canonicalize(&path).await,
        std::fs::canonicalize(&spath),
    );
    assert_same_outcome(&c, &sc, &format!("canonicalize ({case})"));
    if let (Ok(c), Ok(sc)) = (c, sc) {
        assert_eq!(
            c.strip_prefix(&ours_root).ok(),
            sc.strip_prefix(&std_root).ok()
        );
    }
    assert_eq!(
        snapshot(&ours_root),
        snapshot(&std_root),
        "{case}: the trees differ"
    );
}

#[test]
fn a_missing_file_gives_std_s_error_for_every_call() {
    on_every_shard("missing", |ctx| async move {
        every_path_call_matches_std(ctx.dir.path(), "missing", "missing", |_| {}).await;
        every_path_call_matches_std(ctx.dir.path(), "no-parent", "no/such/dir/file", |_| {}).await;
    });
}

#[test]
fn a_directory_where_a_file_is_expected_gives_std_s_error() {
    on_every_shard("dir-as-file", |ctx| async move {
        every_path_call_matches_std(ctx.dir.path(), "dir", "dir", |root| {
            std::fs::create_dir(root.join("dir")).unwrap();
            std::fs::write(root.join("dir/inside"), b"keeps the directory non-empty").unwrap();
        })
        .await;

        // Opened read-only (allowed, as in std), a directory cannot be read.
        let dir = ctx.dir.sub("plain-dir");
        let ours = File::open(&dir).await.unwrap();
        let std = std::fs::File::open(&dir).unwrap();
        let (res, buf) = ours.read_at(Vec::with_capacity(16), 0).await;
        assert_same_error(res, std.read_at(&mut [0; 16], 0), "read_at of a directory");
        assert_eq!(buf.capacity(), 16);
        let (res, _) = ours.read_exact_at(Vec::with_capacity(16), 0).await;
        assert_same_error(
            res,
            std.read_exact_at(&mut [0; 16], 0),
            "read_exact_at of a directory",
        );
    });
}

#[test]
fn a_file_where_a_directory_is_expected_gives_std_s_error() {
    on_every_shard("file-as-dir", |ctx| async move {
        let setup = |root: &Path| std::fs::write(root.join("file"), b"data").unwrap();
        every_path_call_matches_std(ctx.dir.path(), "below", "file/below", setup).await;
        every_path_call_matches_std(ctx.dir.path(), "slash", "file/", setup).await;
        let file = ctx.dir.join("file");
        std::fs::write(&file, b"data").unwrap();
        assert_same_error(
            ringsteal_fs::remove_dir(&file).await,
            std::fs::remove_dir(&file),
            "remove_dir of a file",
        );
        assert_same_error(
            ringsteal_fs::read_dir(&file).await,
            std::fs::read_dir(&file),
            "read_dir of a file",
        );
        assert_same_error(
            ringsteal_fs::create_dir_all(&file).await,
            std::fs::create_dir_all(&file),
            "create_dir_all of a file",
        );
        assert_same_error(
            OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY)
                .open(&file)
                .await,
            std::os::unix::fs::OpenOptionsExt::custom_flags(
                std::fs::OpenOptions::new().read(true),
                libc::O_DIRECTORY,
            )
            .open(&file),
            "O_DIRECTORY on a file",
        );
    });
}

#[test]
fn refused_open_option_combinations_give_std_s_error() {
    on_every_shard("bad-options", |ctx| async move {
        let existing = ctx.dir.join("existing");
        std::fs::write(&existing, b"x").unwrap();
        type Opts = fn(&mut OpenOptions) -> &mut OpenOptions;
        type StdOpts = fn(&mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions;
        let cases: [(&str, Opts, StdOpts); 8] = [
            ("no access at all", |o| o, |o| o),
            (
                "truncate read-only",
                |o| o.read(true).truncate(true),
                |o| o.read(true).truncate(true),
            ),
            (
                "create read-only",
                |o| o.read(true).create(true),
                |o| o.read(true).create(true),
            ),
            (
                "create_new read-only",
                |o| o.read(true).create_new(true),
                |o| o.read(true).create_new(true),
            ),
            (
                "append and truncate",
                |o| o.append(true).truncate(true),
                |o| o.append(true).truncate(true),
            ),
            ("create alone", |o| o.create(true), |o| o.create(true)),
            (
                "create_new of an existing file",
                |o| o.write(true).create_new(true),
                |o| o.write(true).create_new(true),
            ),
            (
                "O_DIRECTORY | O_CREAT",
                |o| o.write(true).create(true).custom_flags(libc::O_DIRECTORY),
                |o| {
                    std::os::unix::fs::OpenOptionsExt::custom_flags(
                        o.write(true).create(true),
                        libc::O_DIRECTORY,
                    )
                },
            ),
        ];
        for (what, ours, std) in cases {
            let o = ours(&mut OpenOptions::new()).open(&existing).await;
            let s = std(&mut std::fs::OpenOptions::new()).open(&existing);
            assert_same_outcome(&o, &s, &format!("{what} (existing file)"));
            // A new file: twin paths, since an open that succeeds creates it.
            let (a, b) = (
                ctx.dir.join(format!("a-{what}")),
                ctx.dir.join(format!("b-{what}")),
            );
            let o = ours(&mut OpenOptions::new()).open(&a).await;
            let s = std(&mut std::fs::OpenOptions::new()).open(&b);
            assert_same_outcome(&o, &s, &format!("{what} (new file)"));
            assert_eq!(a.exists(), b.exists(), "{what}: created by one only");
        }
    });
}

#[test]
fn invalid_utf8_in_read_to_string_is_invalid_data_as_in_std() {
    on_every_shard("utf8", |ctx| async move {
        for (name, bytes) in [
            ("lone-continuation", &b"valid start \x80 then junk"[..]),
            ("truncated", b"ends in the middle of \xe2\x82"),
            ("all-junk", b"\xff\xfe\xfd"),
        ] {
            let path = ctx.dir.join(name);
            std::fs::write(&path, bytes).unwrap();
            let ours = ringsteal_fs::read_to_string(&path).await;
            let std = std::fs::read_to_string(&path);
            assert_same_error(ours, std, name);
            // The bytes themselves read fine.
            assert_eq!(ringsteal_fs::read(&path).await.unwrap(), bytes);
        }
    });
}

#[test]
fn reads_past_the_end_return_zero_and_exact_reads_fail_with_unexpected_eof_as_in_std() {
    on_every_shard("eof", |ctx| async move {
        let path = ctx.dir.join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        let ours = File::open(&path).await.unwrap();
        let std = std::fs::File::open(&path).unwrap();
        for pos in [10, 11, 4096, u64::MAX / 2, i64::MAX as u64] {
            let (res, buf) = ours.read_at(Vec::with_capacity(8), pos).await;
            assert_same_result(
                res,
                std.read_at(&mut [0; 8], pos),
                &format!("read_at({pos})"),
            );
            assert!(buf.is_empty());
        }
        for (pos, len) in [(8, 4), (10, 1), (0, 11)] {
            let (res, _) = ours.read_exact_at(Vec::with_capacity(len), pos).await;
            let mut sbuf = vec![0u8; len];
            assert_same_error(
                res,
                std.read_exact_at(&mut sbuf, pos),
                &format!("read_exact_at({pos}, {len})"),
            );
        }
        // Offsets past i64::MAX are invalid for the kernel: std and ringsteal agree.
        let (res, _) = ours
            .read_at(Vec::with_capacity(8), (i64::MAX as u64) + 1)
            .await;
        assert_same_result(
            res,
            std.read_at(&mut [0; 8], (i64::MAX as u64) + 1),
            "read_at(i64::MAX + 1)",
        );
    });
}

#[test]
fn empty_buffers_succeed_with_nothing_as_in_std() {
    on_every_shard("empty-buffers", |ctx| async move {
        let path = ctx.dir.join("f");
        std::fs::write(&path, b"contents").unwrap();
        let ours = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .await
            .unwrap();
        let std = std::fs::File::options()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        for pos in [0, 3, 8, 100] {
            let (res, _) = ours.read_at(Vec::new(), pos).await;
            assert_same_result(
                res,
                std.read_at(&mut [], pos),
                &format!("read_at([], {pos})"),
            );
            let (res, _) = ours.read_exact_at(Vec::new(), pos).await;
            assert_same_result(res, std.read_exact_at(&mut [], pos), "read_exact_at([])");
            let (res, _) = ours.write_at(Vec::new(), pos).await;
            assert_same_result(res, std.write_at(&[], pos), &format!("write_at([], {pos})"));
            let (res, _) = ours.write_all_at(Vec::new(), pos).await;
            assert_same_result(res, std.write_all_at(&[], pos), "write_all_at([])");
        }
        // Through descriptors opened the wrong way the kernel still checks the mode first.
        let (ro, std_ro) = (
            File::open(&path).await.unwrap(),
            std::fs::File::open(&path).unwrap(),
        );
        let (res, _) = ro.write_at(Vec::new(), 0).await;
        assert_same_result(res, std_ro.write_at(&[], 0), "write_at([]) read-only");
        let (res, _) = ro.write_all_at(Vec::new(), 0).await;
        assert_same_result(
            res,
            std_ro.write_all_at(&[], 0),
            "write_all_at([]) read-only",
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"contents");
    });
}

#[test]
fn writing_through_a_read_only_file_and_reading_through_a_write_only_one_fail_as_in_std() {
    on_every_shard("wrong-mode", |ctx| async move {
        let path = ctx.dir.join("f");
        std::fs::write(&path, b"contents").unwrap();
        let ro = File::open(&path).await.unwrap();
        let std_ro = std::fs::File::open(&path).unwrap();
        let (res, buf) = ro.write_at(b"new".to_vec(), 0).await;
        assert_same_error(res, std_ro.write_at(b"new", 0), "write_at read-only");
        assert_eq!(buf, b"new", "the buffer comes back");
        let (res, _) = ro.write_all_at(b"new".to_vec(), 0).await;
        assert_same_error(
            res,
            std_ro.write_all_at(b"new", 0),
            "write_all_at read-only",
        );
        let (res, _) = ro.writev_at(vec![b"a".to_vec()], 0).await;
        assert_same_error(res, std_ro.write_at(b"a", 0), "writev_at read-only");
        assert_same_error(ro.set_len(0).await, std_ro.set_len(0), "set_len read-only");

        let wo = File::create(ctx.dir.join("w")).await.unwrap();
        let std_wo = std::fs::File::create(ctx.dir.join("w2")).unwrap();
        let (res, _) = wo.read_at(Vec::with_capacity(4), 0).await;
        assert_same_error(res, std_wo.read_at(&mut [0; 4], 0), "read_at write-only");
        let (res, _) = wo.read_exact_at(Vec::with_capacity(4), 0).await;
        assert_same_error(
            res,
            std_wo.read_exact_at(&mut [0; 4], 0),
            "read_exact_at write-only",
        );
        let (res, _) = wo.readv_at(vec![Vec::with_capacity(4)], 0).await;
        assert_same_error(res, std_wo.read_at(&mut [0; 4], 0), "readv_at write-only");
        assert_eq!(std::fs::read(&path).unwrap(), b"contents");
    });
}

#[test]
fn paths_with_a_nul_byte_are_invalid_input_for_every_call_as_in_std() {
    on_every_shard("nul", |ctx| async move {
        every_path_call_matches_std(ctx.dir.path(), "nul", "bad\0name", |_| {}).await;
        let good = ctx.dir.join("good");
        std::fs::write(&good, b"good").unwrap();
        let bad = ctx.dir.join("bad\0name");
        assert_same_error(
            ringsteal_fs::rename(&good, &bad).await,
            std::fs::rename(&good, &bad),
            "rename to a NUL path",
        );
        assert_same_error(
            ringsteal_fs::hard_link(&good, &bad).await,
            std::fs::hard_link(&good, &bad),
            "hard_link to a NUL path",
        );
        assert_same_error(
            ringsteal_fs::symlink(&bad, ctx.dir.join("link")).await,
            std::os::unix::fs::symlink(&bad, ctx.dir.join("link")),
            "symlink to a NUL target",
        );
        assert_same_error(
            ringsteal_fs::copy(&good, &bad).await,
            std::fs::copy(&good, &bad),
            "copy to a NUL path",
        );
        assert_eq!(std::fs::read(&good).unwrap(), b"good");
    });
}

#[test]
fn symlink_loops_and_over_long_names_give_std_s_error() {
    on_every_shard("loops", |ctx| async move {
        every_path_call_matches_std(ctx.dir.path(), "loop", "loop-a/x", |root| {
            std::os::unix::fs::symlink("loop-b", root.join("loop-a")).unwrap();
            std::os::unix::fs::symlink("loop-a", root.join("loop-b")).unwrap();
        })
        .await;
        every_path_call_matches_std(ctx.dir.path(), "self-loop", "self", |root| {
            std::os::unix::fs::symlink("self", root.join("self")).unwrap();
        })
        .await;
        let long = "n".repeat(300);
        every_path_call_matches_std(ctx.dir.path(), "long-name", &long, |_| {}).await;
        let deep = "d/".repeat(2100);
        every_path_call_matches_std(ctx.dir.path(), "deep", &deep, |_| {}).await;
    });
}

#[test]
fn what_root_is_refused_is_refused_as_in_std() {
    on_every_shard("root-refused", |ctx| async move {
        let d = ctx.dir.path();
        std::fs::create_dir_all(d.join("dir/sub")).unwrap();
        std::fs::write(d.join("file"), b"x").unwrap();
        assert_same_error(
            ringsteal_fs::hard_link(d.join("dir"), d.join("dir-link")).await,
            std::fs::hard_link(d.join("dir"), d.join("dir-link")),
            "hard_link of a directory (EPERM even for root)",
        );
        assert_eq!(
            ringsteal_fs::hard_link(d.join("dir"), d.join("dir-link"))
                .await
                .unwrap_err()
                .kind(),
            std::io::ErrorKind::PermissionDenied
        );
        assert_same_error(
            ringsteal_fs::remove_file(d.join("dir")).await,
            std::fs::remove_file(d.join("dir")),
            "remove_file of a directory",
        );
        assert_same_error(
            ringsteal_fs::remove_dir(d.join("dir/.")).await,
            std::fs::remove_dir(d.join("dir/.")),
            "remove_dir of .",
        );
        assert_same_error(
            ringsteal_fs::remove_dir("/proc").await,
            std::fs::remove_dir("/proc"),
            "remove_dir of a mount point",
        );
        assert_same_error(
            ringsteal_fs::rename(d.join("dir"), d.join("dir/sub/moved")).await,
            std::fs::rename(d.join("dir"), d.join("dir/sub/moved")),
            "rename of a directory into itself",
        );
        assert_same_outcome(
            &ringsteal_fs::write("/proc/version", b"x").await,
            &std::fs::write("/proc/version", b"x"),
            "write to /proc/version",
        );
        assert_same_outcome(
            &ringsteal_fs::create_dir("/proc/ringsteal-test").await,
            &std::fs::create_dir("/proc/ringsteal-test"),
            "create_dir in /proc",
        );
        assert!(d.join("dir/sub").is_dir() && d.join("file").is_file());
    });
}
