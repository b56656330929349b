//! File times before the epoch with a fractional second: `{tv_sec: -2, tv_nsec: 5e8}` is
//! 1.5 s before 1970, and ringsteal's metadata must say what std's does.

mod common;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use common::*;

/// Sets the file's access and modification times.
fn set_times(path: &Path, atime: (i64, i64), mtime: (i64, i64)) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    let ts = [
        libc::timespec {
            tv_sec: atime.0,
            tv_nsec: atime.1,
        },
        libc::timespec {
            tv_sec: mtime.0,
            tv_nsec: mtime.1,
        },
    ];
    // SAFETY: a valid C string and two timespecs, both living across the call.
    let rc = unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), ts.as_ptr(), 0) };
    assert_eq!(rc, 0, "utimensat: {}", std::io::Error::last_os_error());
}

#[test]
fn times_before_the_epoch_with_nanoseconds_match_std() {
    on_every_shard("pre-epoch-times", |ctx| async move {
        let path = ctx.dir.join("old");
        std::fs::write(&path, b"x").unwrap();
        for (atime, mtime) in [
            ((-2, 500_000_000), (-1, 1)),
            ((-86_400 * 365, 999_999_999), (-3, 250_000_000)),
            ((1, 5), (0, 0)),
        ] {
            set_times(&path, atime, mtime);
            let std_meta = std::fs::metadata(&path).unwrap();
            let ours = ringsteal_fs::metadata(&path).await.unwrap();
            assert_eq!(
                ours.modified().unwrap(),
                std_meta.modified().unwrap(),
                "{mtime:?}"
            );
            assert_eq!(
                ours.accessed().unwrap(),
                std_meta.accessed().unwrap(),
                "{atime:?}"
            );
        }
    });
}
