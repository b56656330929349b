//! `ringsteal_fs::copy` against `std::fs::copy` on twin files: the byte count returned, the
//! destination's contents and its permission bits are the same, for empty, tiny, page-sized,
//! chunk-sized and odd-sized files, over existing destinations, through symlinks, onto the
//! source itself, onto something that is not a regular file (whose permissions std leaves
//! alone), and from a `/proc` file, which reports a size of 0.
//!
//! Every test runs on each shard of a one-shard and a two-shard runtime.

mod common;

use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use common::*;

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().mode() & 0o7777
}

/// Copies `src` to `a` with ringsteal and to `b` with std, and compares.
async fn copy_both(src: &Path, a: &Path, b: &Path, what: &str) {
    assert_same_result(
        ringsteal_fs::copy(src, a).await,
        std::fs::copy(src, b),
        &format!("{what}: bytes copied"),
    );
    assert_eq!(
        std::fs::read(a).unwrap(),
        std::fs::read(b).unwrap(),
        "{what}: contents"
    );
    assert_eq!(mode(a), mode(b), "{what}: permissions");
}

#[test]
fn copy_copies_contents_and_permissions_like_std_for_every_size() {
    on_every_shard("copy-sizes", |ctx| async move {
        let sizes = [
            0,
            1,
            4095,
            4096,
            4097,
            1 << 20,
            (1 << 20) + 3,
            (2 << 20) + 1,
        ];
        for (i, size) in sizes.into_iter().enumerate() {
            let src = ctx.dir.join(format!("src{size}"));
            std::fs::write(&src, pattern(size)).unwrap();
            // Modes the umask would strip at creation, and a setuid bit.
            let m = [0o640, 0o777, 0o4755, 0o600, 0o444, 0o2770, 0o1777, 0o400][i];
            chmod(&src, m);
            let (a, b) = (
                ctx.dir.join(format!("a{size}")),
                ctx.dir.join(format!("b{size}")),
            );
            copy_both(&src, &a, &b, &format!("{size} bytes, mode {m:o}")).await;
            assert_eq!(std::fs::read(&a).unwrap(), pattern(size));
        }
    });
}

#[test]
fn copy_over_an_existing_file_replaces_it_like_std() {
    on_every_shard("copy-over", |ctx| async move {
        let src = ctx.dir.join("src");
        std::fs::write(&src, pattern(5000)).unwrap();
        chmod(&src, 0o640);
        for (what, old_len, old_mode) in [("longer", 100_000, 0o600), ("shorter", 10, 0o755)] {
            let (a, b) = (
                ctx.dir.join(format!("a-{what}")),
                ctx.dir.join(format!("b-{what}")),
            );
            for p in [&a, &b] {
                std::fs::write(p, pattern(old_len)).unwrap();
                chmod(p, old_mode);
            }
            copy_both(&src, &a, &b, &format!("over a {what} file")).await;
        }
        // An empty source empties the destination.
        let empty = ctx.dir.join("empty");
        std::fs::write(&empty, b"").unwrap();
        copy_both(
            &empty,
            &ctx.dir.join("a-longer"),
            &ctx.dir.join("b-longer"),
            "empty over",
        )
        .await;
    });
}

#[test]
fn copy_follows_symlinks_at_both_ends_like_std() {
    on_every_shard("copy-links", |ctx| async move {
        let src = ctx.dir.join("src");
        std::fs::write(&src, b"through a link").unwrap();
        chmod(&src, 0o750);
        let src_link = ctx.dir.join("src-link");
        std::os::unix::fs::symlink("src", &src_link).unwrap();
        let (a, b) = (ctx.dir.join("a"), ctx.dir.join("b"));
        copy_both(&src_link, &a, &b, "from a symlink").await;
        // Onto symlinks: the targets are written.
        let (la, lb) = (ctx.dir.join("link-a"), ctx.dir.join("link-b"));
        std::os::unix::fs::symlink("a", &la).unwrap();
        std::os::unix::fs::symlink("b", &lb).unwrap();
        std::fs::write(&src, b"second").unwrap();
        copy_both(&src, &la, &lb, "onto a symlink").await;
        assert!(std::fs::symlink_metadata(&la)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&a).unwrap(), b"second");
    });
}

#[test]
fn copy_of_a_file_onto_itself_behaves_like_std() {
    on_every_shard("copy-self", |ctx| async move {
        let (a, b) = (ctx.dir.join("a"), ctx.dir.join("b"));
        std::fs::write(&a, b"self").unwrap();
        std::fs::write(&b, b"self").unwrap();
        assert_same_result(
            ringsteal_fs::copy(&a, &a).await,
            std::fs::copy(&b, &b),
            "copy onto itself",
        );
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    });
}

#[test]
fn copy_onto_a_fifo_writes_through_it_and_leaves_its_permissions_alone_like_std() {
    on_every_shard("copy-fifo", |ctx| async move {
        let src = ctx.dir.join("src");
        let data = pattern(100_000);
        std::fs::write(&src, &data).unwrap();
        chmod(&src, 0o644);
        let (a, b) = (ctx.dir.join("fifo-a"), ctx.dir.join("fifo-b"));
        for fifo in [&a, &b] {
            use std::os::unix::ffi::OsStrExt;
            let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
            // SAFETY: `c` is a valid C string.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            chmod(fifo, 0o600);
        }
        // A reader on each FIFO, so that opening it for writing completes.
        let readers: Vec<_> = [&a, &b]
            .into_iter()
            .map(|fifo| {
                let fifo = fifo.to_path_buf();
                std::thread::spawn(move || {
                    let mut got = Vec::new();
                    std::fs::File::open(fifo)
                        .unwrap()
                        .read_to_end(&mut got)
                        .unwrap();
                    got
                })
            })
            .collect();
        let ours = ringsteal_fs::copy(&src, &a).await;
        let std = std::fs::copy(&src, &b);
        let got: Vec<_> = readers.into_iter().map(|r| r.join().unwrap()).collect();
        assert_same_result(ours, std, "copy onto a FIFO");
        assert_eq!(got[0], data, "what went through the FIFO");
        assert_eq!(got[1], data);
        assert_eq!(
            mode(&b),
            0o600,
            "std leaves a non-regular destination's mode alone"
        );
        assert_eq!(mode(&a), mode(&b), "copy changed the FIFO's permissions");
    });
}

#[test]
fn copy_of_a_proc_file_that_reports_size_zero_copies_it_in_a_few_requests() {
    on_every_shard("copy-proc", |ctx| async move {
        // procfs reports 0 as the size of its files; their contents are generated on read.
        // mountinfo does not change while the test runs (nothing mounts).
        let src = "/proc/self/mountinfo";
        assert_eq!(std::fs::metadata(src).unwrap().len(), 0);
        let expected = std::fs::read(src).unwrap();
        assert!(!expected.is_empty());

        let ops = || {
            ringsteal_rt::RuntimeHandle::current()
                .stats()
                .total()
                .ops_completed
        };
        let before = ops();
        let n = ringsteal_fs::copy(src, ctx.dir.join("copy")).await.unwrap();
        let requests = ops() - before;
        assert_eq!(n, expected.len() as u64);
        assert_eq!(std::fs::read(ctx.dir.join("copy")).unwrap(), expected);
        // Opens, statx, the copy's linked read and write pairs and closes: a handful, not
        // one pair per byte.
        assert!(
            requests < 40,
            "{requests} requests to copy {n} bytes of {src}"
        );
    });
}

/// Between two regular files, the kernel copies (`copy_file_range`, one job on the blocking
/// pool, as std's copy): no read or write of the contents goes through the ring. A sparse
/// source stays a correct copy (its holes read as zeros, as with std).
#[test]
fn copy_between_regular_files_is_one_copy_file_range_job() {
    on_every_shard_of(Config::new(1), "copy-in-kernel", |ctx| async move {
        let src = ctx.dir.join("src");
        std::fs::write(&src, pattern(3 << 20)).unwrap();
        let sparse = ctx.dir.join("sparse");
        let f = std::fs::File::create(&sparse).unwrap();
        f.set_len(8 << 20).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, b"middle", 4 << 20).unwrap();
        drop(f);
        let handle = ringsteal_rt::RuntimeHandle::current();
        for path in [&src, &sparse] {
            let before = handle.stats();
            let (a, b) = (ctx.dir.join("a"), ctx.dir.join("b"));
            copy_both(path, &a, &b, &format!("{path:?}")).await;
            let after = handle.stats();
            assert_eq!(
                after.blocking_spawned - before.blocking_spawned,
                1,
                "one job on the blocking pool"
            );
            // Open, statx and close on each side, a few more for the destination: far fewer
            // than one linked read + write pair per megabyte.
            let sqes = after.total().sqes_submitted - before.total().sqes_submitted;
            assert!(sqes < 12, "{sqes} requests for a copy in the kernel");
        }
    });
}
