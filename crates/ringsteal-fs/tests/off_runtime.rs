//! Every fs call polled where no ringsteal runtime runs (a plain thread, polled by hand with
//! a std `Wake` waker) completes at once with an error saying that ringsteal I/O must be
//! polled on a ringsteal shard. None panics, none stays pending forever.

mod common;

use std::future::Future;
use std::io;
use std::path::Path;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake};

use ringsteal_fs::{File, OpenOptions};

use common::*;

struct NoopWake;

impl Wake for NoopWake {
    fn wake(self: Arc<Self>) {}
}

/// Polls `fut` once by hand; it must be ready.
fn poll_by_hand<F: Future>(fut: F, what: &str) -> F::Output {
    let waker = Arc::new(NoopWake).into();
    let mut cx = Context::from_waker(&waker);
    match pin!(fut).poll(&mut cx) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("{what}: pending off the runtime; nothing would ever wake it"),
    }
}

fn assert_off_runtime<T: std::fmt::Debug>(res: io::Result<T>, what: &str) {
    let err = res.expect_err(what);
    assert!(
        err.to_string()
            .contains("must be polled on a ringsteal shard"),
        "{what}: the error does not say where it must run: {err}"
    );
}

#[test]
fn every_fs_call_polled_off_the_runtime_fails_with_an_error_naming_ringsteal_shards() {
    watchdog("off runtime", || {
        let dir = TempDir::new("off-runtime");
        let file = dir.join("file");
        std::fs::write(&file, b"data").unwrap();
        let p: &Path = &file;
        macro_rules! off {
            ($what:literal, $call:expr) => {
                assert_off_runtime(poll_by_hand($call, $what), $what)
            };
        }
        off!("File::open", File::open(p));
        off!("File::create", File::create(dir.join("new")));
        off!("File::create_new", File::create_new(dir.join("new")));
        off!("OpenOptions::open", OpenOptions::new().read(true).open(p));
        off!("read", ringsteal_fs::read(p));
        off!("read_to_string", ringsteal_fs::read_to_string(p));
        off!("write", ringsteal_fs::write(p, b"x"));
        off!("create_dir", ringsteal_fs::create_dir(dir.join("d")));
        off!(
            "create_dir_all",
            ringsteal_fs::create_dir_all(dir.join("d/e"))
        );
        off!("remove_file", ringsteal_fs::remove_file(p));
        off!("remove_dir", ringsteal_fs::remove_dir(dir.path()));
        off!("rename", ringsteal_fs::rename(p, dir.join("moved")));
        off!("hard_link", ringsteal_fs::hard_link(p, dir.join("hard")));
        off!("symlink", ringsteal_fs::symlink(p, dir.join("sym")));
        off!("metadata", ringsteal_fs::metadata(p));
        off!("symlink_metadata", ringsteal_fs::symlink_metadata(p));
        off!("try_exists", ringsteal_fs::try_exists(p));
        off!("canonicalize", ringsteal_fs::canonicalize(p));
        off!("read_dir", ringsteal_fs::read_dir(dir.path()));
        off!("copy", ringsteal_fs::copy(p, dir.join("copy")));

        // A File made from std off the runtime: its calls fail the same way.
        let f = File::from_std(
            std::fs::File::options()
                .read(true)
                .write(true)
                .open(p)
                .unwrap(),
        );
        let (res, buf) = poll_by_hand(f.read_at(vec![1u8; 2], 0), "read_at");
        assert_off_runtime(res, "read_at");
        assert_eq!(buf, [1, 1], "read_at gives the buffer back");
        let (res, buf) = poll_by_hand(f.read_exact_at(vec![2u8; 2], 0), "read_exact_at");
        assert_off_runtime(res, "read_exact_at");
        assert_eq!(buf, [2, 2]);
        let (res, buf) = poll_by_hand(f.write_at(b"ab".to_vec(), 0), "write_at");
        assert_off_runtime(res, "write_at");
        assert_eq!(buf, b"ab");
        let (res, buf) = poll_by_hand(f.write_all_at(b"cd".to_vec(), 0), "write_all_at");
        assert_off_runtime(res, "write_all_at");
        assert_eq!(buf, b"cd");
        let (res, _) = poll_by_hand(f.readv_at(vec![Vec::with_capacity(2)], 0), "readv_at");
        assert_off_runtime(res, "readv_at");
        let (res, _) = poll_by_hand(f.writev_at(vec![b"e".to_vec()], 0), "writev_at");
        assert_off_runtime(res, "writev_at");
        off!("sync_all", f.sync_all());
        off!("sync_data", f.sync_data());
        off!("fallocate", f.fallocate(0, 10, 0));
        off!("set_len", f.set_len(1));
        off!("File::metadata", f.metadata());
        off!("close", f.close());

        // Nothing happened to the files.
        assert_eq!(std::fs::read(p).unwrap(), b"data");
        assert_eq!(
            snapshot(dir.path()).len(),
            1,
            "an off-runtime call changed the directory"
        );
    });
}

/// A `ReadDir` whose batch could not be read (here: queued on the blocking pool when the
/// runtime shut down, so its task was cancelled) reports that error once; polled again, it
/// ends (`Ok(None)`) instead of panicking on a finished task.
#[test]
fn a_read_dir_whose_batch_failed_reports_the_error_once_and_then_ends() {
    use std::sync::{Condvar, Mutex};
    use std::time::Duration;

    watchdog("read_dir after an error", || {
        let dir = TempDir::new("read-dir-error");
        std::fs::write(dir.join("a"), b"a").unwrap();
        let rt = ringsteal_rt::Runtime::builder()
            .shards(1)
            .max_blocking_threads(1)
            .build()
            .unwrap();
        // Holds the pool's only thread until opened.
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let mut entries = rt.block_on(async {
            let mut entries = ringsteal_fs::read_dir(dir.path()).await.unwrap();
            let (started, g) = (Arc::new(Mutex::new(false)), gate.clone());
            let s = started.clone();
            drop(ringsteal_rt::spawn_blocking(move || {
                *s.lock().unwrap() = true;
                let (open, cv) = &*g;
                let _open = cv.wait_while(open.lock().unwrap(), |o| !*o).unwrap();
            }));
            while !*started.lock().unwrap() {
                ringsteal_rt::yield_now().await;
            }
            // The batch read is queued behind the busy thread.
            let first = std::future::poll_fn(|cx| Poll::Ready(entries.poll_next_entry(cx))).await;
            assert!(first.is_pending());
            entries
        });
        // Queued work is dropped at shutdown; the busy thread is waited for only briefly.
        rt.shutdown_timeout(Duration::from_millis(100));
        let (open, cv) = &*gate;
        *open.lock().unwrap() = true;
        cv.notify_all();
        let err = poll_by_hand(entries.next_entry(), "the cancelled batch").unwrap_err();
        assert!(err.to_string().contains("cancelled"), "{err}");
        let again = poll_by_hand(entries.next_entry(), "polled again after the error");
        assert!(matches!(again, Ok(None)), "{again:?}");
    });
}
