//! Whole-file and path helpers with std's names and semantics: `read`, `write`,
//! `create_dir_all`, `remove_file`, `rename`, `metadata`...

use std::io;
use std::path::{Path, PathBuf};

use ringsteal_rt::buf::IoBuf;
use ringsteal_rt::op;

use crate::chunked_read;
use crate::cstr::cstr;
use crate::{File, Metadata};

/// Reads a whole file.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let path = std::env::temp_dir().join(format!("ringsteal-doc-read-{}", std::process::id()));
///     ringsteal_fs::write(&path, b"contents").await?;
///     assert_eq!(ringsteal_fs::read(&path).await?, b"contents");
///     assert_eq!(ringsteal_fs::read_to_string(&path).await?, "contents");
///     ringsteal_fs::remove_file(&path).await
/// })
/// .unwrap();
/// ```
pub async fn read(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    let file = File::open(path).await?;
    // As std: the size is only a hint, but the buffer for it is reserved up front, and a
    // size that cannot be allocated (a sparse 1 TiB file) fails with `OutOfMemory` instead of
    // aborting the process. A size beyond `usize` is one that cannot be allocated.
    let size = file
        .metadata()
        .await
        .map(|m| usize::try_from(m.len()).unwrap_or(usize::MAX))
        .unwrap_or(0);
    // A large file is read in concurrent chunks, off the shard's thread (chunked_read.rs);
    // the loop below then reads whatever is left, up to end of file.
    // One more than the size, so a file read at its exact size ends with one 0-byte read.
    let mut buf = if size >= chunked_read::CHUNKED_MIN {
        chunked_read::read_chunked(&file, size).await?
    } else {
        let mut buf = Vec::new();
        buf.try_reserve_exact(size.saturating_add(1).max(64))?;
        buf
    };
    loop {
        if buf.len() == buf.capacity() {
            buf.try_reserve(buf.capacity().max(64 * 1024))?;
        }
        let pos = buf.len() as u64;
        let (res, slice) = file.read_at(buf.slice(pos as usize..), pos).await;
        buf = slice.into_inner();
        match res {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    file.close().await?;
    Ok(buf)
}

/// Reads a whole file as UTF-8; invalid UTF-8 is an `InvalidData` error, as in std.
pub async fn read_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    String::from_utf8(read(path).await?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// Creates or truncates a file and writes `contents` to it (copied into an owned buffer).
pub async fn write(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> io::Result<()> {
    let file = File::create(path).await?;
    let (res, _) = file.write_all_at(contents.as_ref().to_vec(), 0).await;
    res?;
    file.close().await
}

/// Creates a directory (mode `0o777` before the umask).
pub async fn create_dir(path: impl AsRef<Path>) -> io::Result<()> {
    op::mkdirat(cstr(path.as_ref())?, 0o777).await
}

/// Creates a directory and every missing parent; an existing directory is not an error.
///
/// Follows std's rules exactly: a path whose `mkdir` fails for any reason other than a
/// missing parent is fine if it is a directory, and otherwise fails with the `mkdir` error
/// (so an existing file gives `AlreadyExists`, as in std).
pub async fn create_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    create_dir_all_with_mode(path.as_ref(), 0o777).await
}

/// [`create_dir_all`], each directory it creates made with `mode` (before the umask).
pub(crate) async fn create_dir_all_with_mode(path: &Path, mode: u32) -> io::Result<()> {
    if path.as_os_str().is_empty() {
        return Ok(());
    }
    // The ancestors that do not exist yet, deepest first.
    let mut missing: Vec<&Path> = Vec::new();
    let mut cur = path;
    loop {
        match op::mkdirat(cstr(cur)?, mode).await {
            Ok(()) => break,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                missing.push(cur);
                match cur.parent() {
                    // A relative path's last ancestor is "": nothing more to create.
                    Some(p) if p.as_os_str().is_empty() => break,
                    Some(p) => cur = p,
                    None => return Err(io::Error::other("failed to create whole tree")),
                }
            }
            Err(e) => {
                if is_dir(cur).await {
                    break;
                }
                return Err(e);
            }
        }
    }
    for p in missing.into_iter().rev() {
        if let Err(e) = op::mkdirat(cstr(p)?, mode).await {
            if !is_dir(p).await {
                return Err(e);
            }
        }
    }
    Ok(())
}

/// True if `path` is a directory (following symlinks); false on any error, as std's
/// `Path::is_dir`.
async fn is_dir(path: &Path) -> bool {
    metadata(path).await.is_ok_and(|m| m.is_dir())
}

/// Removes a file (or symlink).
pub async fn remove_file(path: impl AsRef<Path>) -> io::Result<()> {
    op::unlinkat(cstr(path.as_ref())?, 0).await
}

/// Removes an empty directory.
pub async fn remove_dir(path: impl AsRef<Path>) -> io::Result<()> {
    op::unlinkat(cstr(path.as_ref())?, libc::AT_REMOVEDIR).await
}

/// Renames `from` to `to`, replacing `to` if it exists (`rename(2)` rules).
pub async fn rename(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<()> {
    op::renameat(cstr(from.as_ref())?, cstr(to.as_ref())?, 0).await
}

/// Creates a hard link `link` to `original`.
pub async fn hard_link(original: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    op::linkat(cstr(original.as_ref())?, cstr(link.as_ref())?, 0).await
}

/// Creates a symbolic link `link` pointing at `original`.
pub async fn symlink(original: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    op::symlinkat(cstr(original.as_ref())?, cstr(link.as_ref())?).await
}

/// Metadata of a path, following symlinks.
pub async fn metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    op::statx_path(cstr(path.as_ref())?, true)
        .await
        .map(Metadata::from_statx)
}

/// Metadata of a path itself, not following a final symlink.
pub async fn symlink_metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    op::statx_path(cstr(path.as_ref())?, false)
        .await
        .map(Metadata::from_statx)
}

/// The absolute path with every symlink resolved (on the blocking pool: there is no opcode).
pub async fn canonicalize(path: impl AsRef<Path>) -> io::Result<PathBuf> {
    let path = path.as_ref().to_path_buf();
    crate::blocking::spawn_blocking(move || std::fs::canonicalize(path))?.await?
}

/// Sets the permissions of the file or directory at `path`, following symlinks, as std's
/// `set_permissions` (on the blocking pool: there is no opcode).
///
/// ```
/// use std::os::unix::fs::PermissionsExt;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let path = std::env::temp_dir().join(format!("ringsteal-doc-perm-{}", std::process::id()));
///     ringsteal_fs::write(&path, b"#!/bin/sh\n").await?;
///     ringsteal_fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).await?;
///     let mode = ringsteal_fs::metadata(&path).await?.permissions().mode();
///     assert_eq!(mode & 0o777, 0o751);
///     ringsteal_fs::remove_file(&path).await
/// })
/// .unwrap();
/// ```
pub async fn set_permissions(path: impl AsRef<Path>, perm: std::fs::Permissions) -> io::Result<()> {
    let path = path.as_ref().to_path_buf();
    crate::blocking::spawn_blocking(move || std::fs::set_permissions(path, perm))?.await?
}

/// The target a symlink points at, as std's `read_link` (on the blocking pool: there is no
/// opcode).
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let link = std::env::temp_dir().join(format!("ringsteal-doc-link-{}", std::process::id()));
///     ringsteal_fs::symlink("/etc/hostname", &link).await?;
///     assert_eq!(ringsteal_fs::read_link(&link).await?, std::path::Path::new("/etc/hostname"));
///     ringsteal_fs::remove_file(&link).await
/// })
/// .unwrap();
/// ```
pub async fn read_link(path: impl AsRef<Path>) -> io::Result<PathBuf> {
    let path = path.as_ref().to_path_buf();
    crate::blocking::spawn_blocking(move || std::fs::read_link(path))?.await?
}

/// Removes a directory and everything in it, as std's `remove_dir_all` (which guards
/// against symlink races; on the blocking pool).
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let dir = std::env::temp_dir().join(format!("ringsteal-doc-tree-{}", std::process::id()));
///     ringsteal_fs::create_dir_all(dir.join("a/b")).await?;
///     ringsteal_fs::write(dir.join("a/b/c"), b"c").await?;
///     ringsteal_fs::remove_dir_all(&dir).await?;
///     assert!(!ringsteal_fs::try_exists(&dir).await?);
///     Ok::<(), std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub async fn remove_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_path_buf();
    crate::blocking::spawn_blocking(move || std::fs::remove_dir_all(path))?.await?
}

/// True if the path exists (following symlinks); errors other than "not found" are returned.
pub async fn try_exists(path: impl AsRef<Path>) -> io::Result<bool> {
    match metadata(path).await {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}
