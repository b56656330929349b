//! The calls with no io_uring opcode, run on the blocking pool (`set_permissions`,
//! `File::set_permissions`, `File::set_times`, `read_link`, `remove_dir_all`), side by side
//! with std: the same
//! results and the same errors. On each shard of every runtime configuration.

mod common;

use std::fs::Permissions;
use std::os::unix::fs::PermissionsExt;

use common::*;

#[test]
fn permissions_links_and_tree_removal_match_std() {
    on_every_shard("blocking pool calls", |ctx| async move {
        let file = ctx.dir.join("f");
        std::fs::write(&file, b"x").unwrap();
        ringsteal_fs::set_permissions(&file, Permissions::from_mode(0o751))
            .await
            .unwrap();
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o751
        );
        let opened = ringsteal_fs::File::open(&file).await.unwrap();
        opened
            .set_permissions(Permissions::from_mode(0o640))
            .await
            .unwrap();
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o640
        );
        let missing = ctx.dir.join("missing");
        assert_same_error(
            ringsteal_fs::set_permissions(&missing, Permissions::from_mode(0o600)).await,
            std::fs::set_permissions(&missing, Permissions::from_mode(0o600)),
            "set_permissions of a missing file",
        );

        // Times, set through the open file as std sets them on a twin.
        let twin = ctx.dir.join("twin");
        std::fs::write(&twin, b"x").unwrap();
        let then = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::new(1_234_567_890, 5);
        let earlier = then - std::time::Duration::from_secs(86_400);
        let times = std::fs::FileTimes::new()
            .set_accessed(earlier)
            .set_modified(then);
        opened.set_times(times).await.unwrap();
        std::fs::File::options()
            .write(true)
            .open(&twin)
            .unwrap()
            .set_times(times)
            .unwrap();
        let (ours, std) = (
            std::fs::metadata(&file).unwrap(),
            std::fs::metadata(&twin).unwrap(),
        );
        assert_eq!(ours.modified().unwrap(), then);
        assert_eq!(ours.accessed().unwrap(), earlier);
        assert_eq!(
            (ours.modified().unwrap(), ours.accessed().unwrap()),
            (std.modified().unwrap(), std.accessed().unwrap())
        );
        // Only the modification time: the access time stays.
        let later = then + std::time::Duration::from_secs(86_400);
        opened.set_modified(later).await.unwrap();
        let meta = std::fs::metadata(&file).unwrap();
        assert_eq!(
            (meta.modified().unwrap(), meta.accessed().unwrap()),
            (later, earlier)
        );

        let link = ctx.dir.join("l");
        std::os::unix::fs::symlink("f", &link).unwrap();
        assert_same_result(
            ringsteal_fs::read_link(&link).await,
            std::fs::read_link(&link),
            "read_link",
        );
        assert_same_error(
            ringsteal_fs::read_link(&file).await,
            std::fs::read_link(&file),
            "read_link of a file that is not a link",
        );

        let tree = ctx.dir.join("tree");
        std::fs::create_dir_all(tree.join("a/b/c")).unwrap();
        std::fs::write(tree.join("a/b/c/d"), b"d").unwrap();
        std::os::unix::fs::symlink(&file, tree.join("a/to-f")).unwrap();
        ringsteal_fs::remove_dir_all(&tree).await.unwrap();
        assert!(!tree.exists());
        assert!(file.exists(), "a link's target outside the tree stays");
        assert_same_error(
            ringsteal_fs::remove_dir_all(&tree).await,
            std::fs::remove_dir_all(&tree),
            "remove_dir_all of a missing tree",
        );
    });
}
