//! [`DirBuilder`]: std's and tokio's builder for creating a directory with options.

use std::io;
use std::path::Path;

use ringsteal_rt::op;

use crate::cstr::cstr;
use crate::path_ops::create_dir_all_with_mode;

/// Creates directories with options, as std's and tokio's `DirBuilder`: whether missing
/// parents are created too, and the mode each new directory gets (before the umask), both
/// through `IORING_OP_MKDIRAT`.
///
/// ```
/// use std::os::unix::fs::PermissionsExt;
/// use ringsteal_fs::DirBuilder;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let root = std::env::temp_dir().join(format!("ringsteal-doc-dirb-{}", std::process::id()));
///     DirBuilder::new().recursive(true).mode(0o700).create(root.join("a/b")).await?;
///     let mode = ringsteal_fs::metadata(root.join("a/b")).await?.permissions().mode();
///     assert_eq!(mode & 0o777, 0o700);
///     // Not recursive: an existing directory is an error, as with `create_dir`.
///     let err = DirBuilder::new().create(root.join("a")).await.unwrap_err();
///     assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
///     ringsteal_fs::remove_dir_all(&root).await
/// })
/// .unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct DirBuilder {
    recursive: bool,
    mode: u32,
}

impl DirBuilder {
    /// A builder that creates one directory (its parent must exist) with mode `0o777`.
    pub fn new() -> Self {
        DirBuilder {
            recursive: false,
            mode: 0o777,
        }
    }

    /// Whether missing parents are created too (with the same mode), and an existing
    /// directory at the path is not an error, as [`create_dir_all`](crate::create_dir_all).
    pub fn recursive(&mut self, recursive: bool) -> &mut Self {
        self.recursive = recursive;
        self
    }

    /// The mode each directory is created with, before the process's umask (std's
    /// `DirBuilderExt::mode`, tokio's `DirBuilder::mode`).
    pub fn mode(&mut self, mode: u32) -> &mut Self {
        self.mode = mode;
        self
    }

    /// Creates the directory at `path` as configured.
    ///
    /// # Errors
    /// As [`create_dir`](crate::create_dir) (`AlreadyExists`, `NotFound` for a missing
    /// parent when not recursive, `PermissionDenied`) and
    /// [`create_dir_all`](crate::create_dir_all).
    pub async fn create(&self, path: impl AsRef<Path>) -> io::Result<()> {
        let path = path.as_ref();
        if self.recursive {
            create_dir_all_with_mode(path, self.mode).await
        } else {
            op::mkdirat(cstr(path)?, self.mode).await
        }
    }
}

impl Default for DirBuilder {
    fn default() -> Self {
        Self::new()
    }
}
