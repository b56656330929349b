//! Standard input and output as ringsteal files, for the examples that need a `File` rather
//! than `ringsteal::io::{stdin, stdout}`: `linked_cat` links its writes to reads by
//! descriptor, and `tee` writes to three outputs of one type.
//!
//! Owns: duplicating descriptors 0 and 1. May not: close them (each function duplicates, and
//! the duplicate is what the returned file closes).

use std::io;
use std::os::fd::AsFd;

use ringsteal::fs::File;

/// Standard output, duplicated, as a [`File`]: its `AsyncWriteOwned` writes go to the
/// descriptor's position (offset -1 of `IORING_OP_WRITE`), which is what a pipe, a terminal
/// or a redirected file all accept.
///
/// ```
/// use ringsteal::io::AsyncWriteOwned;
///
/// let rt = ringsteal::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let mut out = ringsteal_examples::stdio::stdout()?;
///     out.write_all(b"through the ring\n".to_vec()).await.0
/// })
/// .unwrap();
/// ```
pub fn stdout() -> io::Result<File> {
    let fd = io::stdout().as_fd().try_clone_to_owned()?;
    Ok(File::from_std(std::fs::File::from(fd)))
}

/// Standard input, duplicated, as a [`File`] read at its position.
pub fn stdin() -> io::Result<File> {
    let fd = io::stdin().as_fd().try_clone_to_owned()?;
    Ok(File::from_std(std::fs::File::from(fd)))
}
