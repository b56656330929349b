//! `read_dir` and `DirEntry` against std's, side by side on the same directory: the names,
//! inode numbers, paths and types listed, and what `DirEntry::metadata` describes — the
//! entry of the directory the listing opened (std's `fstatat(dirfd, name)`), even after that
//! directory was moved and another took its path.
//!
//! Every test runs on each shard of a one-shard and a two-shard runtime.

mod common;

use common::*;

#[test]
fn read_dir_lists_names_inodes_paths_and_types_like_std() {
    on_every_shard("read-dir-list", |ctx| async move {
        let dir = ctx.dir.join("d");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("file"), b"abc").unwrap();
        std::fs::create_dir(dir.join("sub")).unwrap();
        std::os::unix::fs::symlink("file", dir.join("link")).unwrap();
        for i in 0..100 {
            // More than one batch of 64.
            std::fs::write(dir.join(format!("n{i}")), b"").unwrap();
        }

        let mut theirs: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let ft = e.file_type().unwrap();
                let ino = std::os::unix::fs::DirEntryExt::ino(&e);
                (
                    e.file_name(),
                    e.path(),
                    ino,
                    ft.is_file(),
                    ft.is_dir(),
                    ft.is_symlink(),
                )
            })
            .collect();
        let mut ours = Vec::new();
        let mut entries = ringsteal_fs::read_dir(&dir).await.unwrap();
        while let Some(e) = entries.next_entry().await.unwrap() {
            let ft = e.file_type().unwrap();
            let meta = e.metadata().await.unwrap();
            assert_eq!(meta.ino(), e.ino(), "{:?}", e.path());
            assert_eq!(meta.file_type(), ft, "{:?}", e.path());
            ours.push((
                e.file_name(),
                e.path(),
                e.ino(),
                ft.is_file(),
                ft.is_dir(),
                ft.is_symlink(),
            ));
        }
        theirs.sort();
        ours.sort();
        assert_eq!(ours, theirs);
    });
}

#[test]
fn dir_entry_metadata_describes_the_listed_entry_after_the_directory_moved_like_std() {
    on_every_shard("read-dir-moved", |ctx| async move {
        let (a, moved) = (ctx.dir.join("a"), ctx.dir.join("moved"));
        std::fs::create_dir(&a).unwrap();
        std::fs::write(a.join("entry"), b"twelve bytes").unwrap();

        let std_entry = std::fs::read_dir(&a).unwrap().next().unwrap().unwrap();
        let mut listing = ringsteal_fs::read_dir(&a).await.unwrap();
        let ours = listing.next_entry().await.unwrap().unwrap();

        // The directory moves; another one, with an entry of the same name, takes its path.
        std::fs::rename(&a, &moved).unwrap();
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(a.join("entry")).unwrap();

        let theirs = std_entry.metadata().unwrap();
        assert!(theirs.is_file() && theirs.len() == 12, "std: {theirs:?}");
        let meta = ours.metadata().await.unwrap();
        assert!(
            meta.is_file() && meta.len() == 12,
            "described another file: {meta:?}"
        );
        assert!(ours.file_type().unwrap().is_file());
        // The path is still the one the listing was given, as std's.
        assert_eq!(ours.path(), std_entry.path());
    });
}
