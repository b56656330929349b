//! A write at the file position that the kernel ends short (here at the file size limit, as
//! on a full disk) leaves the position after the bytes it wrote, so the next write fails
//! rather than overwrite them. io_uring reports such a write, finished by its worker after
//! the error, as the bytes written but leaves the position where the write began: a
//! `write_all` of 16 MiB onto an 8 MiB file system returned `Ok`, the file holding the
//! buffer's second half (a review found it). A test binary of its own: it lowers the
//! process's file size limit (`RLIMIT_FSIZE`, with `SIGXFSZ` ignored, so a write past it
//! fails with `EFBIG`).

mod common;

use common::*;
use ringsteal_fs::{File, OpenOptions};
use ringsteal_rt::io::AsyncWriteOwned;

/// The file size limit the test sets.
const LIMIT: usize = 1 << 20;

fn limit_file_size() {
    // SAFETY: ignoring SIGXFSZ and lowering this process's soft file size limit touch no
    // memory of ours; `lim` is a valid rlimit read back from the kernel first.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        let mut lim: libc::rlimit = std::mem::zeroed();
        assert_eq!(libc::getrlimit(libc::RLIMIT_FSIZE, &mut lim), 0);
        lim.rlim_cur = LIMIT as libc::rlim_t;
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &lim), 0);
    }
}

#[test]
fn writes_cut_short_at_the_file_size_limit_leave_the_position_after_their_bytes() {
    limit_file_size();
    on_every_shard("short-writes", |ctx| async move {
        let data = pattern(3 * LIMIT);

        // `write_all`: the bytes up to the limit, then the limit's error.
        let path = ctx.dir.join("all");
        let mut file = File::create(&path).await.unwrap();
        let (res, _) = file.write_all(data.clone()).await;
        let err = res.expect_err("write_all past the file size limit");
        assert_eq!(err.raw_os_error(), Some(libc::EFBIG), "{err}");
        assert_eq!(file.stream_position().await.unwrap(), LIMIT as u64);
        drop(file);
        let on_disk = std::fs::read(&path).unwrap();
        assert!(
            on_disk == data[..LIMIT],
            "the file is not the buffer's start"
        );

        // One `write`: what it reports written, with the position after it; the next fails.
        let path = ctx.dir.join("one");
        let mut file = File::create(&path).await.unwrap();
        let (res, _) = file.write(data.clone()).await;
        assert_eq!(res.unwrap(), LIMIT);
        assert_eq!(file.stream_position().await.unwrap(), LIMIT as u64);
        let (res, _) = file.write(data.clone()).await;
        assert_eq!(res.unwrap_err().raw_os_error(), Some(libc::EFBIG));
        drop(file);
        assert!(std::fs::read(&path).unwrap() == data[..LIMIT]);

        // Appending: the bytes go at the end, and so does the position.
        let path = ctx.dir.join("append");
        std::fs::write(&path, &data[..10]).unwrap();
        let mut file = OpenOptions::new().append(true).open(&path).await.unwrap();
        let (res, _) = file.write_all(data[10..].to_vec()).await;
        assert_eq!(res.unwrap_err().raw_os_error(), Some(libc::EFBIG));
        assert_eq!(file.stream_position().await.unwrap(), LIMIT as u64);
        drop(file);
        assert!(std::fs::read(&path).unwrap() == data[..LIMIT]);
    });
}
