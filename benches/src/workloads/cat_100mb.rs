//! `cat_100mb`: read a warm 100 MB file from start to end into memory.
//!
//! One criterion iteration = one whole-file read returning a `Vec<u8>` of
//! [`crate::files::CAT_FILE_LEN`] bytes (the group reports
//! `Throughput::Bytes`). Each runtime uses its own whole-file helper where it
//! has one (`tokio::fs::read`, `compio::fs::read`, `spargio::fs::read`); the
//! floor is `std::fs::read`. The file is re-read before each timed run.

/// Panics unless `data` is the whole file.
pub fn check(data: &[u8]) {
    assert!(
        crate::files::check_whole(data, crate::files::CAT_FILE_LEN),
        "cat_100mb: wrong length or contents"
    );
}
