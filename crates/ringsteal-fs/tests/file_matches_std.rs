//! `File` and `OpenOptions` against std, side by side on twin files in the same scratch
//! directory: every open mode, every read and write call, sync, fallocate, set_len, metadata
//! and close give what std (or libc, for `fallocate`) gives for the same input: the same
//! values, the same file contents afterwards, and errors of the same kind and errno.
//!
//! Every test runs on each shard of a one-shard and a two-shard runtime.

mod common;

use std::alloc::Layout;
use std::future::Future;
use std::io::{IoSlice, IoSliceMut, Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::ptr::NonNull;

use ringsteal_fs::{File, OpenOptions};
use ringsteal_rt::buf::{IoBuf, IoBufMut};
use ringsteal_rt::{Feature, RuntimeHandle};

use common::*;

#[test]
fn file_is_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<File>();
}

#[test]
fn open_reads_what_std_reads() {
    on_every_shard("open", |ctx| async move {
        let path = ctx.dir.join("f");
        let data = pattern(10_000);
        std::fs::write(&path, &data).unwrap();
        let ours = File::open(&path).await.unwrap();
        let std = std::fs::File::open(&path).unwrap();
        for (pos, len) in [(0, 100), (4090, 20), (9_990, 100), (10_000, 8), (20_000, 8)] {
            let (res, buf) = ours.read_at(Vec::with_capacity(len), pos).await;
            let mut sbuf = vec![0u8; len];
            let n = std.read_at(&mut sbuf, pos).unwrap();
            assert_eq!(res.unwrap(), n, "read_at({pos}, {len})");
            assert_eq!(buf, &sbuf[..n]);
        }
        // Read-only, as std's File::open.
        let (res, _) = ours.write_at(b"x".to_vec(), 0).await;
        assert_same_error(res, std.write_at(b"x", 0), "write through File::open");
        ours.close().await.unwrap();
    });
}

#[test]
fn create_creates_or_truncates_like_std() {
    on_every_shard("create", |ctx| async move {
        for existing in [false, true] {
            let (a, b) = (
                ctx.dir.join(format!("a{existing}")),
                ctx.dir.join(format!("b{existing}")),
            );
            if existing {
                std::fs::write(&a, b"old contents").unwrap();
                std::fs::write(&b, b"old contents").unwrap();
            }
            let ours = File::create(&a).await.unwrap();
            let std = std::fs::File::create(&b).unwrap();
            let (res, _) = ours.write_at(b"new".to_vec(), 0).await;
            assert_eq!(res.unwrap(), std.write_at(b"new", 0).unwrap());
            // Write-only, as std's File::create.
            let (res, _) = ours.read_at(Vec::with_capacity(4), 0).await;
            assert_same_error(
                res,
                std.read_at(&mut [0; 4], 0),
                "read through File::create",
            );
            ours.close().await.unwrap();
            drop(std);
        }
        assert_eq!(snapshot_pairs(ctx.dir.path()), Vec::<String>::new());
    });
}

#[test]
fn create_new_creates_a_file_and_refuses_an_existing_one_like_std() {
    on_every_shard("create-new", |ctx| async move {
        let (a, b) = (ctx.dir.join("a"), ctx.dir.join("b"));
        let ours = File::create_new(&a).await.unwrap();
        let std = std::fs::File::create_new(&b).unwrap();
        let (res, _) = ours.write_at(b"abc".to_vec(), 0).await;
        assert_eq!(res.unwrap(), std.write_at(b"abc", 0).unwrap());
        // Readable too, as std's create_new.
        let (res, buf) = ours.read_at(Vec::with_capacity(8), 0).await;
        let mut sbuf = [0u8; 8];
        assert_eq!(res.unwrap(), std.read_at(&mut sbuf, 0).unwrap());
        assert_eq!(buf, &sbuf[..3]);
        assert_same_error(
            File::create_new(&a).await,
            std::fs::File::create_new(&b),
            "create_new of an existing file",
        );
        assert_eq!(snapshot_pairs(ctx.dir.path()), Vec::<String>::new());
    });
}

/// The six boolean options, from the bits of `n`.
fn options_from_bits(n: u32) -> [bool; 6] {
    std::array::from_fn(|i| n & (1 << i) != 0)
}

#[test]
fn every_open_options_combination_behaves_like_std() {
    on_every_shard("oo-sweep", |ctx| async move {
        for bits in 0..64 {
            let [read, write, append, truncate, create, create_new] = options_from_bits(bits);
            for existing in [false, true] {
                let what = format!(
                    "read {read} write {write} append {append} truncate {truncate} \
                     create {create} create_new {create_new}, file exists: {existing}"
                );
                let a = ctx.dir.join(format!("a-{bits}-{existing}"));
                let b = ctx.dir.join(format!("b-{bits}-{existing}"));
                if existing {
                    std::fs::write(&a, b"original").unwrap();
                    std::fs::write(&b, b"original").unwrap();
                }
                let ours = OpenOptions::new()
                    .read(read)
                    .write(write)
                    .append(append)
                    .truncate(truncate)
                    .create(create)
                    .create_new(create_new)
                    .open(&a)
                    .await;
                let std = std::fs::OpenOptions::new()
                    .read(read)
                    .write(write)
                    .append(append)
                    .truncate(truncate)
                    .create(create)
                    .create_new(create_new)
                    .open(&b);
                assert_same_outcome(&ours, &std, &what);
                if let (Ok(ours), Ok(std)) = (ours, std) {
                    let (res, buf) = ours.read_at(Vec::with_capacity(64), 0).await;
                    let mut sbuf = [0u8; 64];
                    let sres = std.read_at(&mut sbuf, 0);
                    assert_same_outcome(&res, &sres, &format!("{what}: read_at"));
                    if let (Ok(n), Ok(m)) = (res, sres) {
                        assert_eq!(buf, &sbuf[..m], "{what}: read_at");
                        assert_eq!(n, m);
                    }
                    let (res, _) = ours.write_at(b"XY".to_vec(), 2).await;
                    assert_same_result(res, std.write_at(b"XY", 2), &format!("{what}: write_at"));
                    ours.close().await.unwrap();
                }
                assert_eq!(
                    std::fs::read(&a).ok(),
                    std::fs::read(&b).ok(),
                    "{what}: the files differ afterwards"
                );
            }
        }
        assert_eq!(snapshot_pairs(ctx.dir.path()), Vec::<String>::new());
    });
}

#[test]
fn mode_sets_the_permissions_of_a_created_file_like_std() {
    on_every_shard("mode", |ctx| async move {
        for mode in [0o600, 0o640, 0o755, 0o777, 0o400, 0o4750, 0o1777] {
            let (a, b) = (
                ctx.dir.join(format!("a{mode:o}")),
                ctx.dir.join(format!("b{mode:o}")),
            );
            let ours = OpenOptions::new()
                .write(true)
                .create(true)
                .mode(mode)
                .open(&a)
                .await
                .unwrap();
            let _std = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .mode(mode)
                .open(&b)
                .unwrap();
            let ours_mode = ours.metadata().await.unwrap().permissions().mode() & 0o7777;
            let std_mode = std::fs::metadata(&b).unwrap().permissions().mode() & 0o7777;
            assert_eq!(ours_mode, std_mode, "mode {mode:o}");
        }
        // mode applies only to files the open creates.
        let (a, b) = (ctx.dir.join("a-exists"), ctx.dir.join("b-exists"));
        std::fs::write(&a, b"").unwrap();
        std::fs::write(&b, b"").unwrap();
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o700)
            .open(&a)
            .await
            .unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o700)
            .open(&b)
            .unwrap();
        assert_eq!(snapshot_pairs(ctx.dir.path()), Vec::<String>::new());
    });
}

#[test]
fn custom_flags_reach_open_like_std() {
    on_every_shard("custom-flags", |ctx| async move {
        let file = ctx.dir.join("file");
        std::fs::write(&file, b"data").unwrap();
        let link = ctx.dir.join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let cases: [(&str, &Path, i32); 4] = [
            ("O_NOFOLLOW on a symlink", &link, libc::O_NOFOLLOW),
            ("O_DIRECTORY on a file", &file, libc::O_DIRECTORY),
            ("O_NOFOLLOW on a file", &file, libc::O_NOFOLLOW),
            (
                "O_NOATIME | O_NOCTTY on a file",
                &file,
                libc::O_NOATIME | libc::O_NOCTTY,
            ),
        ];
        for (what, path, flags) in cases {
            let ours = OpenOptions::new()
                .read(true)
                .custom_flags(flags)
                .open(path)
                .await;
            let std = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(flags)
                .open(path);
            assert_same_outcome(&ours, &std, what);
        }
        // Access-mode bits in custom_flags are ignored, as in std: read-only stays read-only.
        let ours = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_RDWR)
            .open(&file)
            .await
            .unwrap();
        let std = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_RDWR)
            .open(&file)
            .unwrap();
        let (res, _) = ours.write_at(b"x".to_vec(), 0).await;
        assert_same_error(res, std.write_at(b"x", 0), "O_RDWR in custom_flags");
    });
}

/// A heap buffer aligned for `O_DIRECT`.
struct Aligned {
    ptr: NonNull<u8>,
    len: usize,
    init: usize,
}

const DIRECT_ALIGN: usize = 4096;

impl Aligned {
    fn new(len: usize) -> Self {
        let layout = Layout::from_size_align(len, DIRECT_ALIGN).unwrap();
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).expect("allocation failed");
        Self { ptr, len, init: 0 }
    }

    fn filled(data: &[u8]) -> Self {
        let mut b = Self::new(data.len());
        // SAFETY: the allocation has room for `data.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), b.ptr.as_ptr(), data.len()) };
        b.init = data.len();
        b
    }

    fn as_slice(&self) -> &[u8] {
        // SAFETY: the first `init` bytes are initialised (allocated zeroed, in fact).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.init) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len, DIRECT_ALIGN).unwrap();
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) };
    }
}

// SAFETY: the buffer owns its allocation exclusively; nothing else points into it.
unsafe impl Send for Aligned {}

// SAFETY: a heap allocation that does not move when the value moves; `init` bytes are
// initialised.
unsafe impl IoBuf for Aligned {
    fn stable_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }
    fn bytes_init(&self) -> usize {
        self.init
    }
    fn bytes_total(&self) -> usize {
        self.len
    }
}

// SAFETY: writable over its whole length.
unsafe impl IoBufMut for Aligned {
    fn stable_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
    unsafe fn set_init(&mut self, pos: usize) {
        self.init = self.init.max(pos);
    }
}

#[test]
fn o_direct_reads_and_writes_aligned_buffers_and_refuses_unaligned_ones_like_std() {
    on_every_shard("direct", |ctx| async move {
        let path = ctx.dir.join("direct");
        let data = pattern(3 * DIRECT_ALIGN);
        std::fs::write(&path, &data).unwrap();
        let std = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(&path);
        let ours = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(&path)
            .await;
        let (ours, std) = match std {
            Err(e) => {
                // The scratch file system has no O_DIRECT: the refusal is std's.
                println!("O_DIRECT is not supported here: {e}");
                return assert_same_error(ours, Err::<(), _>(e), "O_DIRECT open");
            }
            Ok(std) => (ours.expect("O_DIRECT open (std succeeded)"), std),
        };
        // SAFETY: F_GETFL on a descriptor the File keeps open.
        let fl = unsafe { libc::fcntl(ours.as_raw_fd(), libc::F_GETFL) };
        assert_ne!(fl & libc::O_DIRECT, 0, "O_DIRECT did not reach open");

        let (res, buf) = ours
            .read_at(Aligned::new(DIRECT_ALIGN), DIRECT_ALIGN as u64)
            .await;
        assert_eq!(res.unwrap(), DIRECT_ALIGN);
        assert_eq!(buf.as_slice(), &data[DIRECT_ALIGN..2 * DIRECT_ALIGN]);

        let new = pattern(DIRECT_ALIGN + 7)[7..].to_vec();
        let (res, _) = ours.write_at(Aligned::filled(&new), 0).await;
        assert_eq!(res.unwrap(), DIRECT_ALIGN);
        let mut check = Aligned::new(DIRECT_ALIGN);
        // SAFETY: the pointer is valid for `len` bytes and aligned for O_DIRECT.
        let n = unsafe { libc::pread(std.as_raw_fd(), check.ptr.as_ptr().cast(), DIRECT_ALIGN, 0) };
        assert_eq!(n, DIRECT_ALIGN as isize);
        check.init = DIRECT_ALIGN;
        assert_eq!(check.as_slice(), &new[..]);

        // A misaligned buffer and a misaligned offset are refused as std's pread refuses them.
        let mut unaligned = vec![0u8; DIRECT_ALIGN + 1];
        let std_err = std.read_at(&mut unaligned[1..], 0);
        let (res, _) = ours.read_at(unaligned.slice(1..), 0).await;
        assert_same_error(res, std_err, "O_DIRECT read into a misaligned buffer");
        let mut aligned = Aligned::new(DIRECT_ALIGN);
        // SAFETY: as above, at a misaligned file offset.
        let n = unsafe {
            libc::pread(
                std.as_raw_fd(),
                aligned.ptr.as_ptr().cast(),
                DIRECT_ALIGN,
                100,
            )
        };
        let std_res = if n < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(n as usize)
        };
        aligned.init = 0;
        let (res, _) = ours.read_at(aligned, 100).await;
        assert_same_result(res, std_res, "O_DIRECT read at a misaligned offset");
    });
}

#[test]
fn read_at_and_read_exact_at_match_std() {
    on_every_shard("read", |ctx| async move {
        let path = ctx.dir.join("f");
        let data = pattern(5000);
        std::fs::write(&path, &data).unwrap();
        let ours = File::open(&path).await.unwrap();
        let std = std::fs::File::open(&path).unwrap();
        for (pos, len) in [
            (0, 5000),
            (0, 6000),
            (100, 0),
            (4999, 1),
            (4999, 2),
            (5000, 1),
            (9000, 9),
        ] {
            let (res, buf) = ours.read_exact_at(Vec::with_capacity(len), pos).await;
            let mut sbuf = vec![0u8; len];
            let sres = std.read_exact_at(&mut sbuf, pos);
            assert_same_outcome(&res, &sres, &format!("read_exact_at({pos}, {len})"));
            if res.is_ok() {
                assert_eq!(buf, sbuf);
            }
            let (res, buf) = ours.read_at(vec![0u8; len].slice(..), pos).await;
            let sres = std.read_at(&mut sbuf, pos);
            let buf = buf.into_inner();
            assert_eq!(
                res.as_ref().ok(),
                sres.as_ref().ok(),
                "read_at({pos}, {len})"
            );
            assert_eq!(buf, sbuf, "read_at({pos}, {len})");
        }
    });
}

#[test]
fn write_at_and_write_all_at_match_std() {
    on_every_shard("write", |ctx| async move {
        let (a, b) = (ctx.dir.join("a"), ctx.dir.join("b"));
        let ours = File::create(&a).await.unwrap();
        let std = std::fs::File::create(&b).unwrap();
        let chunk = pattern(3000);
        for (pos, len) in [(0, 3000), (10, 5), (5000, 100), (3000, 0), (1, 2999)] {
            let (res, _) = ours.write_at(chunk[..len].to_vec(), pos).await;
            assert_same_result(res, std.write_at(&chunk[..len], pos), "write_at");
            let (res, buf) = ours.write_all_at(chunk[..len].to_vec(), pos + 7).await;
            assert_same_result(
                res,
                std.write_all_at(&chunk[..len], pos + 7),
                "write_all_at",
            );
            assert_eq!(buf, &chunk[..len], "write_all_at gives the buffer back");
        }
        ours.close().await.unwrap();
        drop(std);
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    });
}

#[test]
fn append_sends_every_write_to_the_end_like_std() {
    on_every_shard("append", |ctx| async move {
        let (a, b) = (ctx.dir.join("a"), ctx.dir.join("b"));
        std::fs::write(&a, b"start;").unwrap();
        std::fs::write(&b, b"start;").unwrap();
        let ours = OpenOptions::new().append(true).open(&a).await.unwrap();
        let mut std = std::fs::OpenOptions::new().append(true).open(&b).unwrap();
        // At the file position, as std's write, and at an offset, as std's write_at (which
        // on Linux appends for O_APPEND files too).
        let (res, _) = ours.write_at(b"one;".to_vec(), u64::MAX).await;
        assert_same_result(res, std.write(b"one;"), "append at the position");
        let (res, _) = ours.write_at(b"two;".to_vec(), 0).await;
        assert_same_result(res, std.write_at(b"two;", 0), "append at offset 0");
        let (res, _) = ours.write_all_at(b"three;".to_vec(), 2).await;
        assert_same_result(res, std.write_all_at(b"three;", 2), "append write_all_at");
        ours.close().await.unwrap();
        drop(std);
        assert_eq!(std::fs::read(&a).unwrap(), b"start;one;two;three;");
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    });
}

#[test]
fn readv_at_and_writev_at_match_std_vectored_io() {
    on_every_shard("vectored", |ctx| async move {
        let (a, b) = (ctx.dir.join("a"), ctx.dir.join("b"));
        let ours = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&a)
            .await
            .unwrap();
        let mut std = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&b)
            .unwrap();
        let parts: [&[u8]; 3] = [b"alpha,", b"", b"beta,gamma"];
        let (res, _) = ours
            .writev_at(parts.iter().map(|p| p.to_vec()).collect::<Vec<_>>(), 3)
            .await;
        std.seek(SeekFrom::Start(3)).unwrap();
        let slices: Vec<IoSlice<'_>> = parts.iter().map(|p| IoSlice::new(p)).collect();
        assert_same_result(res, std.write_vectored(&slices), "writev_at");

        let (res, bufs) = ours
            .readv_at(
                vec![
                    Vec::with_capacity(4),
                    Vec::with_capacity(5),
                    Vec::with_capacity(100),
                ],
                1,
            )
            .await;
        let (mut x, mut y, mut z) = ([0u8; 4], [0u8; 5], [0u8; 100]);
        std.seek(SeekFrom::Start(1)).unwrap();
        let n = std
            .read_vectored(&mut [
                IoSliceMut::new(&mut x),
                IoSliceMut::new(&mut y),
                IoSliceMut::new(&mut z),
            ])
            .unwrap();
        assert_eq!(res.unwrap(), n, "readv_at");
        let ours_bytes = bufs.concat();
        let std_bytes = [&x[..], &y[..], &z[..]].concat();
        assert_eq!(ours_bytes, &std_bytes[..n]);
        let mut rest = Vec::new();
        std.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty());
        ours.close().await.unwrap();
        drop(std);
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    });
}

#[test]
fn sync_all_and_sync_data_succeed_or_fail_like_std() {
    on_every_shard("sync", |ctx| async move {
        let path = ctx.dir.join("f");
        let ours = File::create(&path).await.unwrap();
        let (res, _) = ours.write_all_at(b"durable".to_vec(), 0).await;
        res.unwrap();
        let std = std::fs::File::options().write(true).open(&path).unwrap();
        assert_same_result(ours.sync_all().await, std.sync_all(), "sync_all");
        assert_same_result(ours.sync_data().await, std.sync_data(), "sync_data");
        // Read-only descriptors can be synced too.
        let ro = File::open(&path).await.unwrap();
        let std_ro = std::fs::File::open(&path).unwrap();
        assert_same_result(ro.sync_all().await, std_ro.sync_all(), "sync_all read-only");
        // A pipe cannot.
        let (std_pipe, _tx) = pipe();
        let std_err = std_pipe.sync_all();
        let ours_pipe = File::from_std(std_pipe);
        assert_same_error(ours_pipe.sync_all().await, std_err, "sync_all of a pipe");
    });
}

/// `fallocate(2)` on a std file, the reference for `File::fallocate` (std has no such call).
fn libc_fallocate(f: &std::fs::File, offset: u64, len: u64, mode: i32) -> std::io::Result<()> {
    // SAFETY: fallocate on a descriptor `f` keeps open; no memory is passed.
    let rc = unsafe { libc::fallocate(f.as_raw_fd(), mode, offset as i64, len as i64) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[test]
fn fallocate_allocates_and_punches_like_the_system_call() {
    on_every_shard("fallocate", |ctx| async move {
        let (a, b) = (ctx.dir.join("a"), ctx.dir.join("b"));
        let data = pattern(20_000);
        std::fs::write(&a, &data).unwrap();
        std::fs::write(&b, &data).unwrap();
        let ours = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&a)
            .await
            .unwrap();
        let std = std::fs::File::options()
            .read(true)
            .write(true)
            .open(&b)
            .unwrap();
        let cases = [
            ("extend", 0, 65_536, 0),
            ("keep size", 65_536, 65_536, libc::FALLOC_FL_KEEP_SIZE),
            (
                "punch a hole",
                4096,
                8192,
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            ),
            ("zero a range", 100, 50, libc::FALLOC_FL_ZERO_RANGE),
            ("punch without keep size", 0, 10, libc::FALLOC_FL_PUNCH_HOLE),
            ("zero length", 0, 0, 0),
            ("unknown mode bits", 0, 10, 0x4000_0000),
        ];
        for (what, offset, len, mode) in cases {
            assert_same_result(
                ours.fallocate(offset, len, mode).await,
                libc_fallocate(&std, offset, len, mode),
                what,
            );
            let (ma, mb) = (ours.metadata().await.unwrap(), std.metadata().unwrap());
            assert_eq!(ma.len(), mb.len(), "{what}: size");
            assert_eq!(ma.blocks(), mb.blocks(), "{what}: blocks allocated");
        }
        // Read-only descriptor.
        let ro = File::open(&a).await.unwrap();
        let std_ro = std::fs::File::open(&b).unwrap();
        assert_same_error(
            ro.fallocate(0, 10, 0).await,
            libc_fallocate(&std_ro, 0, 10, 0),
            "fallocate through a read-only descriptor",
        );
        drop((ours, std));
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    });
}

#[test]
fn set_len_truncates_and_extends_like_std() {
    on_every_shard("set-len", |ctx| async move {
        let (a, b) = (ctx.dir.join("a"), ctx.dir.join("b"));
        let data = pattern(10_000);
        std::fs::write(&a, &data).unwrap();
        std::fs::write(&b, &data).unwrap();
        let ours = OpenOptions::new().write(true).open(&a).await.unwrap();
        let std = std::fs::File::options().write(true).open(&b).unwrap();
        for len in [3, 0, 100_000, 4096, 4096, u64::MAX, 1 << 62] {
            assert_same_result(
                ours.set_len(len).await,
                std.set_len(len),
                &format!("set_len({len})"),
            );
            assert_eq!(
                std::fs::read(&a).unwrap(),
                std::fs::read(&b).unwrap(),
                "set_len({len})"
            );
        }
        let ro = File::open(&a).await.unwrap();
        let std_ro = std::fs::File::open(&b).unwrap();
        assert_same_error(ro.set_len(1).await, std_ro.set_len(1), "set_len read-only");
    });
}

/// `set_len` goes through `IORING_OP_FTRUNCATE` where the runtime's feature set has it and
/// through `ftruncate(2)` on the blocking pool otherwise. Taking the feature away in the
/// builder forces the fallback on any kernel; both paths give std's results.
#[test]
fn set_len_takes_the_blocking_pool_only_without_ftruncate() {
    // A runtime with every feature, entered below inside the other's tasks.
    let full = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    for config in [Config::new(1), Config::new(1).without(Feature::Ftruncate)] {
        let full = full.handle();
        on_every_shard_of(config, "set-len-paths", move |ctx| {
            let full = full.clone();
            async move {
                let rt = RuntimeHandle::current();
                let native = rt.features().supports(Feature::Ftruncate);
                if config.without.is_some() {
                    assert!(!native, "the builder took FTRUNCATE away");
                }
                {
                    // The op goes to this shard's ring whatever runtime is entered: it is this
                    // runtime's feature set that counts.
                    let _entered = full.enter();
                    assert_eq!(ringsteal_rt::op::ftruncate_available(), native);
                }
                let (a, b) = (ctx.dir.join("a"), ctx.dir.join("b"));
                std::fs::write(&a, pattern(5000)).unwrap();
                std::fs::write(&b, pattern(5000)).unwrap();
                let ours = OpenOptions::new().write(true).open(&a).await.unwrap();
                let std = std::fs::File::options().write(true).open(&b).unwrap();
                for len in [7, 9000] {
                    let before = rt.stats().blocking_spawned;
                    assert_same_result(ours.set_len(len).await, std.set_len(len), "set_len");
                    let on_pool = rt.stats().blocking_spawned - before;
                    assert_eq!(
                        on_pool,
                        u64::from(!native),
                        "set_len({len}), native: {native}"
                    );
                    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
                }
            }
        });
    }
}

fn assert_same_metadata(ours: &ringsteal_fs::Metadata, std: &std::fs::Metadata, what: &str) {
    assert_eq!(ours.len(), std.len(), "{what}: len");
    assert_eq!(ours.is_empty(), std.len() == 0, "{what}: is_empty");
    assert_eq!(ours.is_file(), std.is_file(), "{what}: is_file");
    assert_eq!(ours.is_dir(), std.is_dir(), "{what}: is_dir");
    assert_eq!(ours.is_symlink(), std.is_symlink(), "{what}: is_symlink");
    assert_eq!(
        ours.file_type().is_fifo(),
        std::os::unix::fs::FileTypeExt::is_fifo(&std.file_type())
    );
    assert_eq!(ours.permissions(), std.permissions(), "{what}: permissions");
    assert_eq!(ours.mode(), std.mode(), "{what}: mode");
    assert_eq!(
        ours.modified().ok(),
        std.modified().ok(),
        "{what}: modified"
    );
    assert_eq!(
        ours.accessed().ok(),
        std.accessed().ok(),
        "{what}: accessed"
    );
    assert_eq!(ours.created().ok(), std.created().ok(), "{what}: created");
    assert_eq!(ours.ino(), std.ino(), "{what}: ino");
    assert_eq!(ours.dev(), std.dev(), "{what}: dev");
    assert_eq!(ours.nlink(), std.nlink(), "{what}: nlink");
    assert_eq!(ours.uid(), std.uid(), "{what}: uid");
    assert_eq!(ours.gid(), std.gid(), "{what}: gid");
    assert_eq!(ours.blksize(), std.blksize(), "{what}: blksize");
    assert_eq!(ours.blocks(), std.blocks(), "{what}: blocks");
}

#[test]
fn metadata_of_an_open_file_matches_std() {
    on_every_shard("file-metadata", |ctx| async move {
        let path = ctx.dir.join("f");
        std::fs::write(&path, pattern(12_345)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let ours = File::open(&path).await.unwrap();
        let std = std::fs::File::open(&path).unwrap();
        assert_same_metadata(
            &ours.metadata().await.unwrap(),
            &std.metadata().unwrap(),
            "file",
        );
        let dir = File::open(ctx.dir.path()).await.unwrap();
        let std_dir = std::fs::File::open(ctx.dir.path()).unwrap();
        assert_same_metadata(
            &dir.metadata().await.unwrap(),
            &std_dir.metadata().unwrap(),
            "dir",
        );
    });
}

#[test]
fn close_succeeds_and_releases_the_file() {
    on_every_shard("close", |ctx| async move {
        let path = ctx.dir.join("f");
        let file = File::create(&path).await.unwrap();
        let (res, _) = file.write_all_at(b"closed".to_vec(), 0).await;
        res.unwrap();
        file.close().await.unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"closed");
        // A file adopted from std closes too.
        let adopted = File::from_std(std::fs::File::open(&path).unwrap());
        adopted.close().await.unwrap();
    });
}

#[test]
fn close_while_an_op_is_in_flight_keeps_the_descriptor_open_until_the_op_completes() {
    on_every_shard("close-in-flight", |_ctx| async move {
        let (rx, mut tx) = pipe();
        let file = File::from_std(rx);
        let mut read = std::pin::pin!(file.read_at(Vec::with_capacity(16), u64::MAX));
        // Submit the read, then close the file under it.
        let polled =
            std::future::poll_fn(|cx| std::task::Poll::Ready(read.as_mut().poll(cx))).await;
        assert!(polled.is_pending());
        // Close waits for the read (here polled by hand, since this task also holds the read).
        let mut closing = std::pin::pin!(file.close());
        let polled =
            std::future::poll_fn(|cx| std::task::Poll::Ready(closing.as_mut().poll(cx))).await;
        assert!(polled.is_pending(), "close waits for the read in flight");
        // The read still reads from the pipe, not from whatever reused the number.
        let writer = std::thread::spawn(move || tx.write_all(b"still open").unwrap());
        let (res, buf) = read.await;
        writer.join().unwrap();
        assert_eq!(res.unwrap(), 10);
        assert_eq!(buf, b"still open");
        closing.await.expect("the close, once the read let go");
    });
}

/// Pairs `a*`/`b*` in a directory and lists how each pair differs (contents, mode, kind).
fn snapshot_pairs(dir: &Path) -> Vec<String> {
    let entries = snapshot(dir);
    let mut diffs = Vec::new();
    for a in entries
        .iter()
        .filter(|e| e.path.to_string_lossy().starts_with('a'))
    {
        let twin = format!("b{}", &a.path.to_string_lossy()[1..]);
        match entries.iter().find(|e| e.path.to_string_lossy() == twin) {
            None => diffs.push(format!("{} has no twin {twin}", a.path.display())),
            Some(b) => {
                if (a.kind, a.mode, &a.content) != (b.kind, b.mode, &b.content) {
                    diffs.push(format!("{a:?} != {b:?}"));
                }
            }
        }
    }
    diffs
}

#[test]
fn read_exact_at_and_write_all_at_at_the_file_position_continue_where_each_part_ended() {
    on_every_shard("file-position", |ctx| async move {
        // u64::MAX means "at the file position" (which each read or write advances): an
        // exact read that needs several reads keeps reading at the position, like std's
        // sequential read_exact.
        let path = ctx.dir.join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        let ours = File::open(&path).await.unwrap();
        let mut std = std::fs::File::open(&path).unwrap();
        let (res, buf) = ours.read_exact_at(Vec::with_capacity(4), u64::MAX).await;
        let mut sbuf = [0u8; 4];
        assert_same_result(res, std.read_exact(&mut sbuf), "read_exact at the position");
        assert_eq!(buf, sbuf);
        // Needs a second read, which finds the end of the file: UnexpectedEof, as std.
        let (res, _) = ours.read_exact_at(Vec::with_capacity(100), u64::MAX).await;
        assert_same_error(
            res,
            std.read_exact(&mut [0u8; 100]),
            "read_exact past the end",
        );

        // A pipe: the data arrives in two parts, the exact read gets both, in order.
        let (rx, mut tx) = pipe();
        tx.write_all(b"first;").unwrap();
        let rx = File::from_std(rx);
        let writer = std::thread::spawn(move || {
            tx.write_all(b"second").unwrap();
            tx
        });
        let (res, buf) = rx.read_exact_at(Vec::with_capacity(12), u64::MAX).await;
        res.unwrap();
        assert_eq!(buf, b"first;second");
        drop(writer.join().unwrap());

        // A write larger than the pipe's buffer, drained by a reader meanwhile: however the
        // kernel splits it, all of it arrives, in order.
        let (rx, tx) = pipe();
        let data = pattern(1 << 20);
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            let mut rx = rx;
            rx.read_to_end(&mut got).unwrap();
            got
        });
        let tx = File::from_std(tx);
        let (res, _) = tx.write_all_at(data.clone(), u64::MAX).await;
        res.unwrap();
        tx.close().await.unwrap();
        assert!(
            reader.join().unwrap() == data,
            "the pipe delivered other bytes"
        );
    });
}
