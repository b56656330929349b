//! `File::seek` / `rewind` / `stream_position`, `try_clone` and `into_std` against std: the
//! same moves over the same bytes give the same positions and reads; a relative seek after an
//! abandoned read counts from the reader's position (as tokio's `File` does with its
//! read-ahead); a pipe refuses to seek as std says; a clone shares the position; a std file
//! taken back reads on from the reader's position, and `try_into_std` refuses while the file
//! is in use.
//!
//! Every test runs on each shard of a one-shard and a two-shard runtime.

mod common;

use std::future::Future;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::FromRawFd;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Wake, Waker};

use common::*;
use ringsteal_fs::{File, OpenOptions};
use ringsteal_rt::io::{AsyncReadOwned, AsyncWriteOwned};

const TEN: &[u8] = b"0123456789";

/// A new pipe: (read end, write end).
fn pipe() -> (std::fs::File, std::fs::File) {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: pipe2 just made both descriptors, and nothing else owns them.
    unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    }
}

/// Polls `fut` once (its request is submitted), then drops it: a `select!` loser.
fn poll_once_and_drop<F: Future>(fut: F) {
    struct Ignore;
    impl Wake for Ignore {
        fn wake(self: Arc<Self>) {}
    }
    let fut: Pin<&mut F> = pin!(fut);
    let _ = fut.poll(&mut Context::from_waker(&Waker::from(Arc::new(Ignore))));
}

/// Abandons reads of 4 bytes at the position of `f` until one kept what it read (see
/// `cursor_io.rs`: on some filesystems the cancel can win instead).
async fn abandon_a_read_that_keeps_its_bytes(f: &File) {
    for _ in 0..1000 {
        poll_once_and_drop(AsyncReadOwned::read(&mut &*f, Vec::with_capacity(4)));
        // A stream_position would drop the kept bytes: ask the lane instead.
        let lane = f.splice_source().unwrap().lane().clone();
        drop(lane.acquire().await);
        if lane.has_leftover() {
            return;
        }
    }
    panic!("no abandoned read ever kept its bytes");
}

#[test]
fn seeks_land_where_std_lands_and_reads_follow() {
    on_every_shard("seek-like-std", |ctx| async move {
        let (ours, theirs) = (ctx.dir.join("ours"), ctx.dir.join("theirs"));
        std::fs::write(&ours, TEN).unwrap();
        std::fs::write(&theirs, TEN).unwrap();
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&ours)
            .await
            .unwrap();
        let mut s = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&theirs)
            .unwrap();
        let moves = [
            SeekFrom::Start(3),
            SeekFrom::Current(2),
            SeekFrom::Current(-4),
            SeekFrom::End(-2),
            SeekFrom::End(4), // past the end: the write below leaves a hole
            SeekFrom::Start(0),
        ];
        for (i, pos) in moves.into_iter().enumerate() {
            assert_eq!(f.seek(pos).await.unwrap(), s.seek(pos).unwrap(), "{pos:?}");
            if i == 4 {
                let (res, _) = f.write_all(b"END".to_vec()).await;
                res.unwrap();
                s.write_all(b"END").unwrap();
                assert_eq!(f.stream_position().await.unwrap(), 17);
                continue;
            }
            let (res, got) = f.read(Vec::with_capacity(3)).await;
            let mut want = [0u8; 3];
            let n = s.read(&mut want).unwrap();
            assert_eq!((res.unwrap(), &got[..]), (n, &want[..n]), "after {pos:?}");
        }
        assert_eq!(
            std::fs::read(&ours).unwrap(),
            std::fs::read(&theirs).unwrap()
        );
        f.rewind().await.unwrap();
        assert_eq!(f.stream_position().await.unwrap(), 0);

        // A negative position is refused as std refuses it.
        let ours = f.seek(SeekFrom::Current(-1)).await.unwrap_err();
        s.rewind().unwrap();
        let theirs = s.seek(SeekFrom::Current(-1)).unwrap_err();
        assert_eq!(ours.kind(), theirs.kind());
        assert_eq!(ours.raw_os_error(), theirs.raw_os_error());
        // And a start past i64::MAX, which lseek cannot take.
        let err = f.seek(SeekFrom::Start(u64::MAX)).await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    });
}

#[test]
fn a_seek_after_an_abandoned_read_counts_from_the_readers_position() {
    on_every_shard("seek-after-abandoned-read", |ctx| async move {
        let path = ctx.dir.join("f");
        std::fs::write(&path, TEN).unwrap();
        let mut f = File::open(&path).await.unwrap();
        abandon_a_read_that_keeps_its_bytes(&f).await;
        // The kernel is at 4; the reader has taken nothing.
        assert_eq!(f.stream_position().await.unwrap(), 0);
        abandon_a_read_that_keeps_its_bytes(&f).await;
        assert_eq!(f.seek(SeekFrom::Current(2)).await.unwrap(), 2);
        let (res, got) = f.read(Vec::with_capacity(3)).await;
        assert_eq!((res.unwrap(), &got[..]), (3, &b"234"[..]));
    });
}

#[test]
fn a_seek_refused_after_an_abandoned_read_moves_nothing_as_stds() {
    on_every_shard("seek refused after abandoned read", |ctx| async move {
        let path = ctx.dir.join("f");
        std::fs::write(&path, TEN).unwrap();
        for bad in [SeekFrom::Start(u64::MAX), SeekFrom::Current(i64::MIN)] {
            let mut theirs = std::fs::File::open(&path).unwrap();
            let std_err = theirs.seek(bad).unwrap_err();
            let f = File::open(&path).await.unwrap();
            abandon_a_read_that_keeps_its_bytes(&f).await;
            let err = f.seek(bad).await.unwrap_err();
            assert_eq!(err.kind(), std_err.kind(), "{bad:?}");
            let (res, got) = AsyncReadOwned::read(&mut &f, Vec::with_capacity(4)).await;
            res.unwrap();
            assert_eq!(got, b"0123", "{bad:?}: the refused seek moved the position");
        }
    });
}

#[test]
fn a_pipe_refuses_to_seek_as_std_says_and_keeps_what_was_read() {
    on_every_shard("seek-pipe", |_ctx| async move {
        let (rx, mut tx) = pipe();
        let theirs = rx
            .try_clone()
            .unwrap()
            .seek(SeekFrom::Start(0))
            .unwrap_err();
        tx.write_all(b"abc").unwrap();
        let mut f = File::from_std(rx);
        let (res, got) = f.read(Vec::with_capacity(1)).await;
        assert_eq!((res.unwrap(), &got[..]), (1, &b"a"[..]));
        let ours = f.seek(SeekFrom::Start(0)).await.unwrap_err();
        assert_eq!(ours.raw_os_error(), theirs.raw_os_error());
        assert_eq!(ours.raw_os_error(), Some(libc::ESPIPE));
        let (res, got) = f.read(Vec::with_capacity(8)).await;
        assert_eq!((res.unwrap(), &got[..]), (2, &b"bc"[..]));
    });
}

#[test]
fn a_pipe_with_a_read_in_flight_refuses_seek_set_len_and_sync_at_once_as_std() {
    // A read waiting for data holds the read lane for as long as no data comes: calls that
    // a pipe refuses must not wait for it (std answers them at once).
    on_every_shard("pipe calls beside a waiting read", |_ctx| async move {
        let (rx, mut tx) = pipe();
        let f = std::rc::Rc::new(File::from_std(rx));
        let reader = {
            let f = f.clone();
            ringsteal_rt::spawn_local(async move {
                AsyncReadOwned::read(&mut &*f, Vec::with_capacity(8)).await
            })
        };
        // The read is in flight once the lane is held.
        let lane = f.splice_source().unwrap().lane().clone();
        while !lane.is_held() {
            ringsteal_rt::yield_now().await;
        }
        let guard = std::time::Duration::from_secs(20);
        let seek = ringsteal_rt::time::timeout(guard, f.seek(SeekFrom::Current(0))).await;
        let err = seek.expect("seek waited for the read").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ESPIPE));
        let set_len = ringsteal_rt::time::timeout(guard, f.set_len(0)).await;
        let err = set_len.expect("set_len waited for the read").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
        let sync = ringsteal_rt::time::timeout(guard, f.sync_all()).await;
        let err = sync.expect("sync_all waited").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
        // The read still gets what comes.
        tx.write_all(b"late").unwrap();
        let (res, got) = reader.await.unwrap();
        assert_eq!((res.unwrap(), &got[..]), (4, &b"late"[..]));
    });
}

#[test]
fn a_clone_shares_the_position_and_outlives_the_original() {
    on_every_shard("try-clone", |ctx| async move {
        let path = ctx.dir.join("f");
        std::fs::write(&path, TEN).unwrap();
        let f = File::open(&path).await.unwrap();
        let mut clone = f.try_clone().await.unwrap();
        f.seek(SeekFrom::Start(6)).await.unwrap();
        drop(f);
        let (res, got) = clone.read(Vec::with_capacity(8)).await;
        assert_eq!((res.unwrap(), &got[..]), (4, &b"6789"[..]));
    });
}

/// A file of [`TEN`] whose reader took two bytes, and whose abandoned read kept more.
async fn two_read_and_more_kept(ctx: &Ctx) -> File {
    let path = ctx.dir.join("f");
    std::fs::write(&path, TEN).unwrap();
    let mut f = File::open(&path).await.unwrap();
    let (res, _) = f.read_exact(Vec::with_capacity(2)).await;
    res.unwrap();
    abandon_a_read_that_keeps_its_bytes(&f).await;
    f
}

#[test]
fn a_std_file_taken_back_reads_on_from_the_readers_position() {
    on_every_shard("into-std", |ctx| async move {
        let f = two_read_and_more_kept(&ctx).await;
        let mut s = f.into_std().await.unwrap();
        let mut rest = String::new();
        s.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "23456789");
    });
}

#[test]
fn try_into_std_refuses_while_in_use_and_then_reads_on_from_the_readers_position() {
    on_every_shard("try-into-std", |ctx| async move {
        let f = two_read_and_more_kept(&ctx).await;
        // An operation made on it holds the descriptor: the file comes back, unchanged.
        let pending = f.read_at(Vec::with_capacity(1), 9);
        let f = f.try_into_std().expect_err("an operation holds it");
        let (res, last) = pending.await;
        assert_eq!((res.unwrap(), &last[..]), (1, &b"9"[..]));
        // Alone again, it converts, giving back the bytes the abandoned read kept.
        let mut s = f.try_into_std().expect("nothing holds it");
        let mut rest = String::new();
        s.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "23456789");
    });
}
