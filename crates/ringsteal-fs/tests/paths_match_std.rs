//! The path helpers against std: each call is made with ringsteal in one scratch tree and
//! with std in a twin tree (or on the same file, for reads), and the results, the errors
//! (kind and errno) and the trees afterwards (names, kinds, modes, link counts, contents,
//! symlink targets) must be the same.
//!
//! Every test runs on each shard of a one-shard and a two-shard runtime.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::*;

/// Two empty twin trees, `ours` and `std`, in the test's scratch directory.
fn twins(ctx: &Ctx) -> (PathBuf, PathBuf) {
    (ctx.dir.sub("ours"), ctx.dir.sub("std"))
}

fn assert_same_trees(ours: &Path, std: &Path, what: &str) {
    assert_eq!(snapshot(ours), snapshot(std), "{what}: the trees differ");
}

fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

#[test]
fn read_and_read_to_string_return_what_std_returns() {
    on_every_shard("read", |ctx| async move {
        let sizes = [0, 1, 63, 64, 65, 4095, 4096, 4097, 65_537, (1 << 20) + 3];
        for size in sizes {
            let path = ctx.dir.join(format!("f{size}"));
            std::fs::write(&path, pattern(size)).unwrap();
            assert_same_result(
                ringsteal_fs::read(&path).await,
                std::fs::read(&path),
                &format!("read of {size} bytes"),
            );
            let text: String = (0..size).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            std::fs::write(&path, &text).unwrap();
            assert_same_result(
                ringsteal_fs::read_to_string(&path).await,
                std::fs::read_to_string(&path),
                &format!("read_to_string of {size} bytes"),
            );
        }
        // Files whose size statx reports as 0 but which have contents, and a relative path.
        for path in ["/proc/version", "/proc/self/cmdline", "Cargo.toml"] {
            assert_same_result(ringsteal_fs::read(path).await, std::fs::read(path), path);
        }
    });
}

#[test]
fn write_creates_or_truncates_like_std() {
    on_every_shard("write", |ctx| async move {
        let (ours, std) = twins(&ctx);
        for (name, first, second) in [
            ("shrinks", &b"a long first version"[..], &b"short"[..]),
            ("grows", b"x", b"a longer second version"),
            ("empties", b"something", b""),
        ] {
            for contents in [first, second] {
                assert_same_result(
                    ringsteal_fs::write(ours.join(name), contents).await,
                    std::fs::write(std.join(name), contents),
                    name,
                );
            }
        }
        let big = pattern((1 << 20) + 3);
        assert_same_result(
            ringsteal_fs::write(ours.join("big"), &big).await,
            std::fs::write(std.join("big"), &big),
            "1 MiB + 3",
        );
        assert_same_trees(&ours, &std, "write");
    });
}

#[test]
fn create_dir_and_create_dir_all_build_the_trees_std_builds() {
    on_every_shard("mkdir", |ctx| async move {
        let (ours, std) = twins(&ctx);
        for rel in ["x", "x/y", "x"] {
            assert_same_result(
                ringsteal_fs::create_dir(ours.join(rel)).await,
                std::fs::create_dir(std.join(rel)),
                &format!("create_dir({rel})"),
            );
        }
        for rel in [
            "a/b/c/d",
            "a/b",
            "a/b/c/d",
            "a/b/e/",
            "x/./q/../r",
            "x/y",
            "",
            ".",
        ] {
            assert_same_result(
                ringsteal_fs::create_dir_all(ours.join(rel)).await,
                std::fs::create_dir_all(std.join(rel)),
                &format!("create_dir_all({rel})"),
            );
        }
        assert_same_result(
            ringsteal_fs::create_dir_all("").await,
            std::fs::create_dir_all(""),
            "create_dir_all of the empty path",
        );
        assert_same_trees(&ours, &std, "mkdir");
    });
}

#[test]
fn dir_builder_builds_the_trees_std_builds_with_its_modes() {
    use std::os::unix::fs::DirBuilderExt;
    on_every_shard("dir builder", |ctx| async move {
        let (ours, std) = twins(&ctx);
        // (path, recursive, mode): modes the umask leaves alone (it takes at most 0o077
        // away from these, the same on both sides), a directory that exists, a missing parent.
        let steps = [
            ("p", false, 0o700),
            ("p", false, 0o700),
            ("p/q/r", false, 0o750),
            ("p/q/r", true, 0o750),
            ("p/q/r", true, 0o711),
            ("s/t/u/", true, 0o755),
            ("p/file/x", true, 0o755),
        ];
        for (i, (rel, recursive, mode)) in steps.into_iter().enumerate() {
            if i == 6 {
                for root in [&ours, &std] {
                    std::fs::write(root.join("p/file"), b"f").unwrap();
                }
            }
            assert_same_result(
                ringsteal_fs::DirBuilder::new()
                    .recursive(recursive)
                    .mode(mode)
                    .create(ours.join(rel))
                    .await,
                std::fs::DirBuilder::new()
                    .recursive(recursive)
                    .mode(mode)
                    .create(std.join(rel)),
                &format!("DirBuilder recursive({recursive}) mode({mode:o}) create({rel})"),
            );
        }
        assert_same_trees(&ours, &std, "dir builder");
    });
}

#[test]
fn remove_file_and_remove_dir_remove_what_std_removes() {
    on_every_shard("remove", |ctx| async move {
        let (ours, std) = twins(&ctx);
        for root in [&ours, &std] {
            std::fs::write(root.join("file"), b"f").unwrap();
            std::fs::create_dir_all(root.join("empty")).unwrap();
            std::fs::create_dir_all(root.join("full/inner")).unwrap();
            std::os::unix::fs::symlink("full", root.join("link-to-dir")).unwrap();
            std::os::unix::fs::symlink("nowhere", root.join("dangling")).unwrap();
        }
        let steps: [(&str, bool); 9] = [
            ("file", false),
            ("file", false),
            ("empty", true),
            ("full", true),
            ("full/inner", true),
            ("full", true),
            ("link-to-dir", true),
            ("link-to-dir", false),
            ("dangling", false),
        ];
        for (rel, dir) in steps {
            let what = format!("remove_{}({rel})", if dir { "dir" } else { "file" });
            if dir {
                assert_same_result(
                    ringsteal_fs::remove_dir(ours.join(rel)).await,
                    std::fs::remove_dir(std.join(rel)),
                    &what,
                );
            } else {
                assert_same_result(
                    ringsteal_fs::remove_file(ours.join(rel)).await,
                    std::fs::remove_file(std.join(rel)),
                    &what,
                );
            }
            assert_same_trees(&ours, &std, &what);
        }
        assert!(snapshot(&ours).is_empty());
    });
}

#[test]
fn rename_moves_files_and_directories_like_std() {
    on_every_shard("rename", |ctx| async move {
        let (ours, std) = twins(&ctx);
        for root in [&ours, &std] {
            for f in ["f1", "f2", "f3"] {
                std::fs::write(root.join(f), f).unwrap();
            }
            for d in ["d1", "d2", "d3", "full/inner"] {
                std::fs::create_dir_all(root.join(d)).unwrap();
            }
        }
        let steps = [
            ("f1", "g1"),        // to a new name
            ("f2", "g1"),        // over an existing file
            ("g1", "g1"),        // onto itself
            ("d1", "e1"),        // a directory to a new name
            ("d2", "e1"),        // over an empty directory
            ("f3", "d3"),        // a file over a directory
            ("d3", "g1"),        // a directory over a file
            ("e1", "full"),      // over a non-empty directory
            ("full", "full/in"), // into itself
            ("missing", "m2"),   // a missing source
            ("g1", "no/such/dir"),
        ];
        for (from, to) in steps {
            let what = format!("rename({from}, {to})");
            assert_same_result(
                ringsteal_fs::rename(ours.join(from), ours.join(to)).await,
                std::fs::rename(std.join(from), std.join(to)),
                &what,
            );
            assert_same_trees(&ours, &std, &what);
        }
    });
}

#[test]
fn hard_link_and_symlink_create_the_links_std_creates() {
    on_every_shard("links", |ctx| async move {
        let (ours, std) = twins(&ctx);
        for root in [&ours, &std] {
            std::fs::write(root.join("file"), b"target").unwrap();
            std::fs::create_dir(root.join("dir")).unwrap();
        }
        // Symlinks: relative, absolute (into each tree), to a directory, dangling, existing.
        for (target, link) in [
            ("file", "rel"),
            ("dir", "to-dir"),
            ("missing", "dangling"),
            ("file", "rel"),
            ("", "empty-target"),
        ] {
            let what = format!("symlink({target}, {link})");
            assert_same_result(
                ringsteal_fs::symlink(target, ours.join(link)).await,
                std::os::unix::fs::symlink(target, std.join(link)),
                &what,
            );
            assert_same_trees(&ours, &std, &what);
        }
        assert_same_result(
            ringsteal_fs::symlink(ours.join("file"), ours.join("abs")).await,
            std::os::unix::fs::symlink(std.join("file"), std.join("abs")),
            "absolute symlink",
        );
        // Hard links: to a file, to a symlink (links the symlink itself, as std does), over an
        // existing name, of a directory, of a missing file.
        for (original, link) in [
            ("file", "hard"),
            ("rel", "hard-to-symlink"),
            ("file", "hard"),
            ("dir", "hard-dir"),
            ("missing", "hard-missing"),
        ] {
            let what = format!("hard_link({original}, {link})");
            assert_same_result(
                ringsteal_fs::hard_link(ours.join(original), ours.join(link)).await,
                std::fs::hard_link(std.join(original), std.join(link)),
                &what,
            );
        }
        // The absolute links point into their own trees; compare everything else.
        let strip = |root: &Path| {
            let mut s = snapshot(root);
            s.retain(|e| e.path != Path::new("abs"));
            s
        };
        assert_eq!(strip(&ours), strip(&std));
        assert_eq!(
            std::fs::read_link(ours.join("abs")).unwrap(),
            ours.join("file")
        );
    });
}

#[test]
fn metadata_and_symlink_metadata_match_std() {
    on_every_shard("metadata", |ctx| async move {
        let d = ctx.dir.path();
        std::fs::write(d.join("file"), pattern(777)).unwrap();
        std::fs::create_dir(d.join("dir")).unwrap();
        std::os::unix::fs::symlink(d.join("file"), d.join("to-file")).unwrap();
        std::os::unix::fs::symlink("dir", d.join("to-dir")).unwrap();
        std::os::unix::fs::symlink("missing", d.join("dangling")).unwrap();
        mkfifo(&d.join("fifo"));
        let paths = [
            d.join("file"),
            d.join("dir"),
            d.join("to-file"),
            d.join("to-dir"),
            d.join("dangling"),
            d.join("fifo"),
            d.join("missing"),
            PathBuf::from("/dev/null"),
            PathBuf::from("/"),
        ];
        for path in &paths {
            let what = path.display().to_string();
            let (ours, std) = (ringsteal_fs::metadata(path).await, std::fs::metadata(path));
            assert_same_outcome(&ours, &std, &format!("metadata({what})"));
            if let (Ok(ours), Ok(std)) = (ours, std) {
                same_metadata(&ours, &std, &what);
            }
            let (ours, std) = (
                ringsteal_fs::symlink_metadata(path).await,
                std::fs::symlink_metadata(path),
            );
            assert_same_outcome(&ours, &std, &format!("symlink_metadata({what})"));
            if let (Ok(ours), Ok(std)) = (ours, std) {
                same_metadata(&ours, &std, &what);
            }
            assert_same_result(
                ringsteal_fs::try_exists(path).await,
                path.try_exists(),
                &format!("try_exists({what})"),
            );
        }
    });
}

fn same_metadata(ours: &ringsteal_fs::Metadata, std: &std::fs::Metadata, what: &str) {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let (ft, sft) = (ours.file_type(), std.file_type());
    assert_eq!(
        (
            ft.is_file(),
            ft.is_dir(),
            ft.is_symlink(),
            ft.is_fifo(),
            ft.is_char_device()
        ),
        (
            sft.is_file(),
            sft.is_dir(),
            sft.is_symlink(),
            sft.is_fifo(),
            sft.is_char_device()
        ),
        "{what}: file type"
    );
    assert_eq!(ours.len(), std.len(), "{what}: len");
    assert_eq!(ours.permissions(), std.permissions(), "{what}: permissions");
    assert_eq!(ours.mode(), std.mode(), "{what}: mode");
    assert_eq!(ours.ino(), std.ino(), "{what}: ino");
    assert_eq!(ours.dev(), std.dev(), "{what}: dev");
    assert_eq!(ours.nlink(), std.nlink(), "{what}: nlink");
    assert_eq!(
        (ours.uid(), ours.gid()),
        (std.uid(), std.gid()),
        "{what}: owner"
    );
    // std's `MetadataExt`, implemented for ours: what ported code calls through the trait.
    let ext = |m: &dyn MetadataExt| {
        (
            (
                m.dev(),
                m.ino(),
                m.mode(),
                m.nlink(),
                m.uid(),
                m.gid(),
                m.rdev(),
            ),
            (m.size(), m.blksize(), m.blocks()),
            (m.atime(), m.atime_nsec(), m.mtime(), m.mtime_nsec()),
            (m.ctime(), m.ctime_nsec()),
        )
    };
    assert_eq!(ext(ours), ext(std), "{what}: MetadataExt");
    assert_eq!(
        ours.modified().ok(),
        std.modified().ok(),
        "{what}: modified"
    );
    assert_eq!(ours.created().ok(), std.created().ok(), "{what}: created");
    assert_eq!(ours.blocks(), std.blocks(), "{what}: blocks");
}

#[test]
fn canonicalize_resolves_paths_like_std() {
    on_every_shard("canonicalize", |ctx| async move {
        let d = ctx.dir.path();
        std::fs::create_dir_all(d.join("a/b")).unwrap();
        std::fs::write(d.join("a/b/file"), b"x").unwrap();
        std::os::unix::fs::symlink("a/b", d.join("hop1")).unwrap();
        std::os::unix::fs::symlink("hop1/file", d.join("hop2")).unwrap();
        std::os::unix::fs::symlink("loop", d.join("loop")).unwrap();
        let cases = [
            d.join("a/./b/../b/file"),
            d.join("hop2"),
            d.join("hop1/"),
            d.join("a/b/missing"),
            d.join("loop"),
            d.join("a/b/file/"),
            PathBuf::from("."),
            PathBuf::from("src/../Cargo.toml"),
            PathBuf::from(""),
        ];
        for path in cases {
            assert_same_result(
                ringsteal_fs::canonicalize(&path).await,
                std::fs::canonicalize(&path),
                &format!("canonicalize({})", path.display()),
            );
        }
    });
}

#[test]
fn read_dir_lists_the_entries_std_lists() {
    on_every_shard("read-dir", |ctx| async move {
        let d = ctx.dir.sub("listing");
        // More entries than one batch (64), of every kind.
        for i in 0..150 {
            match i % 4 {
                0 => std::fs::write(d.join(format!("file{i}")), b"x").unwrap(),
                1 => std::fs::create_dir(d.join(format!("dir{i}"))).unwrap(),
                2 => std::os::unix::fs::symlink("file0", d.join(format!("link{i}"))).unwrap(),
                _ => mkfifo(&d.join(format!("fifo{i}"))),
            }
        }
        let mut ours = BTreeSet::new();
        let mut entries = ringsteal_fs::read_dir(&d).await.unwrap();
        while let Some(e) = entries.next_entry().await.unwrap() {
            let ft = e.file_type().unwrap();
            let meta = e.metadata().await.unwrap();
            let std_meta = std::fs::symlink_metadata(e.path()).unwrap();
            same_metadata(&meta, &std_meta, &e.path().display().to_string());
            ours.insert((
                e.file_name(),
                e.path(),
                e.ino(),
                (ft.is_file(), ft.is_dir(), ft.is_symlink(), ft.is_fifo()),
            ));
        }
        // The stream stays at its end.
        assert!(entries.next_entry().await.unwrap().is_none());
        let std: BTreeSet<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| {
                use std::os::unix::fs::{DirEntryExt, FileTypeExt};
                let e = e.unwrap();
                let ft = e.file_type().unwrap();
                (
                    e.file_name(),
                    e.path(),
                    e.ino(),
                    (ft.is_file(), ft.is_dir(), ft.is_symlink(), ft.is_fifo()),
                )
            })
            .collect();
        assert_eq!(ours.len(), 150);
        assert_eq!(ours, std);

        // An empty directory lists nothing.
        let empty = ctx.dir.sub("empty");
        let mut entries = ringsteal_fs::read_dir(&empty).await.unwrap();
        assert!(entries.next_entry().await.unwrap().is_none());
    });
}
