//! The calls with no io_uring opcode, run on the blocking pool (`set_permissions`,
//! `File::set_permissions`, `read_link`, `remove_dir_all`), side by side with std: the same
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
