//! The data files of the fs benchmarks, and keeping them warm in the page cache.
//!
//! The bench host evicts page-cache pages that were not touched recently (a
//! DAMON pageout scheme, see `shared/measuring.md`), even with plenty of free
//! memory. A "warm cache" benchmark must therefore re-read its file right
//! before each timed run: [`DataFile::warm_if_stale`] does that (outside the
//! timed region) and checks with `mincore(2)` that the file really is resident.
//!
//! Every 4 KiB block starts with its block number (u64, little endian) and is
//! filled with a pattern derived from it, so a read can be checked cheaply
//! ([`check_block`]): a benchmark that silently read nothing, or the wrong
//! offset, fails instead of reporting a fast time.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Block size of the random-read benchmarks and of the file pattern.
pub const BLOCK: usize = 4096;
/// Size of the random-read file: 64 MiB.
pub const RANDOM_FILE_LEN: u64 = 64 * 1024 * 1024;
/// Size of the `cat_100mb` file: 100 MB (decimal, as in the issue).
pub const CAT_FILE_LEN: u64 = 100_000_000;
/// A file is re-read before a timed run if its last warm-up is older than this.
pub const WARM_INTERVAL: Duration = Duration::from_millis(1000);
/// Fraction of pages that must be resident after a warm-up.
pub const MIN_RESIDENT: f64 = 0.99;
/// Full reads [`DataFile::warm`] makes before it gives up on [`MIN_RESIDENT`].
pub const WARM_ATTEMPTS: usize = 3;

/// Directory holding the data files: `$RINGSTEAL_BENCH_DIR`, or
/// `<temp dir>/ringsteal-bench-data`. It must be on a real disk file system
/// (not tmpfs) for the page-cache figures to mean anything.
pub fn data_dir() -> PathBuf {
    std::env::var_os("RINGSTEAL_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("ringsteal-bench-data"))
}

/// One data file, created on first use and kept warm on request.
#[derive(Debug)]
pub struct DataFile {
    path: PathBuf,
    len: u64,
    last_warm: Mutex<Option<Instant>>,
}

impl DataFile {
    fn create(name: &str, len: u64) -> Self {
        let dir = data_dir();
        fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
        let path = dir.join(name);
        ensure_contents(&path, len).unwrap_or_else(|e| panic!("prepare {}: {e}", path.display()));
        Self {
            path,
            len,
            last_warm: Mutex::new(None),
        }
    }

    /// Path of the file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Length of the file in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Always false: data files are never empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of whole 4 KiB blocks.
    pub fn blocks(&self) -> u64 {
        self.len / BLOCK as u64
    }

    /// Reads the whole file (so every page is in the page cache) and checks
    /// with `mincore` that at least [`MIN_RESIDENT`] of it is resident. The
    /// host's eviction can take pages while the read runs; the file is read
    /// again, up to [`WARM_ATTEMPTS`] times, before the check fails.
    pub fn warm(&self) {
        let mut resident = 0.0;
        for _ in 0..WARM_ATTEMPTS {
            self.read_whole();
            resident = resident_fraction(&self.path).expect("mincore");
            if resident >= MIN_RESIDENT {
                break;
            }
        }
        assert!(
            resident >= MIN_RESIDENT,
            "{} is only {:.1}% resident after {WARM_ATTEMPTS} full reads: the page cache is \
             not holding it, so a warm-cache benchmark would measure the disk",
            self.path.display(),
            resident * 100.0
        );
        *self.last_warm.lock().unwrap() = Some(Instant::now());
    }

    /// Reads the file from start to end, checking its length.
    fn read_whole(&self) {
        let mut f = File::open(&self.path).expect("open data file");
        let mut buf = vec![0u8; 1 << 20];
        let mut total = 0u64;
        loop {
            let n = f.read(&mut buf).expect("read data file");
            if n == 0 {
                break;
            }
            total += n as u64;
        }
        assert_eq!(
            total,
            self.len,
            "{} has the wrong length",
            self.path.display()
        );
    }

    /// [`DataFile::warm`] unless the file was warmed less than
    /// [`WARM_INTERVAL`] ago. Call it before every timed run, outside the timed
    /// region (for example at the top of a criterion `iter_custom` closure).
    pub fn warm_if_stale(&self) {
        let stale = match *self.last_warm.lock().unwrap() {
            Some(t) => t.elapsed() > WARM_INTERVAL,
            None => true,
        };
        if stale {
            self.warm();
        }
    }

    /// Opens the file read-only with std (for floors and blocking-pool peers).
    pub fn open_std(&self) -> File {
        File::open(&self.path).expect("open data file")
    }
}

/// The 64 MiB file of `fs_read_4k_qd1` / `fs_read_4k_qd32`.
pub fn random_read_file() -> &'static DataFile {
    static F: OnceLock<DataFile> = OnceLock::new();
    F.get_or_init(|| DataFile::create("random-64MiB.dat", RANDOM_FILE_LEN))
}

/// The 100 MB file of `cat_100mb`.
pub fn cat_file() -> &'static DataFile {
    static F: OnceLock<DataFile> = OnceLock::new();
    F.get_or_init(|| DataFile::create("cat-100MB.dat", CAT_FILE_LEN))
}

/// Expected byte `j` (`8 <= j < BLOCK`) of block `block`.
#[inline]
fn pattern_byte(block: u64, j: usize) -> u8 {
    (block as u8).wrapping_mul(31).wrapping_add(j as u8)
}

/// Fills `buf` (at most one block long) with the contents of block `block`.
fn fill_block(block: u64, buf: &mut [u8]) {
    let header = block.to_le_bytes();
    for (j, b) in buf.iter_mut().enumerate() {
        *b = if j < 8 {
            header[j]
        } else {
            pattern_byte(block, j)
        };
    }
}

/// Checks that `buf` holds the whole 4 KiB block that starts at `offset`.
#[allow(clippy::manual_is_multiple_of)] // `is_multiple_of` needs Rust 1.87
pub fn check_block(buf: &[u8], offset: u64) -> bool {
    let block = offset / BLOCK as u64;
    offset % BLOCK as u64 == 0
        && buf.len() == BLOCK
        && buf[..8] == block.to_le_bytes()
        && buf[BLOCK - 1] == pattern_byte(block, BLOCK - 1)
}

/// Checks a whole-file read: length and a sample of blocks.
pub fn check_whole(data: &[u8], len: u64) -> bool {
    if data.len() as u64 != len {
        return false;
    }
    let blocks = len / BLOCK as u64;
    let step = (blocks / 64).max(1);
    (0..blocks).step_by(step as usize).all(|b| {
        let off = (b * BLOCK as u64) as usize;
        check_block(&data[off..off + BLOCK], off as u64)
    })
}

fn ensure_contents(path: &Path, len: u64) -> io::Result<()> {
    if let Ok(f) = File::open(path) {
        if f.metadata()?.len() == len {
            let mut first = vec![0u8; BLOCK];
            let last_block = len / BLOCK as u64 - 1;
            let mut last = vec![0u8; BLOCK];
            f.read_exact_at(&mut first, 0)?;
            f.read_exact_at(&mut last, last_block * BLOCK as u64)?;
            if check_block(&first, 0) && check_block(&last, last_block * BLOCK as u64) {
                return Ok(());
            }
        }
    }
    let tmp = path.with_extension("tmp");
    {
        let f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        let mut w = BufWriter::with_capacity(1 << 20, f);
        let mut block = vec![0u8; BLOCK];
        let mut written = 0u64;
        let mut b = 0u64;
        while written < len {
            let n = (len - written).min(BLOCK as u64) as usize;
            fill_block(b, &mut block[..n]);
            w.write_all(&block[..n])?;
            written += n as u64;
            b += 1;
        }
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    }
    fs::rename(&tmp, path)
}

/// Fraction of the file's pages that are in the page cache (`mincore(2)`).
pub fn resident_fraction(path: &Path) -> io::Result<f64> {
    let f = File::open(path)?;
    let len = f.metadata()?.len() as usize;
    if len == 0 {
        return Ok(1.0);
    }
    // SAFETY: sysconf has no memory-safety preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    // SAFETY: a fresh read-only shared mapping of a file we hold open; the
    // arguments are valid and the result is checked against MAP_FAILED.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let pages = len.div_ceil(page);
    let mut vec = vec![0u8; pages];
    // SAFETY: `addr..addr+len` is the mapping created above and `vec` has one
    // byte per page of it, as mincore requires.
    let rc = unsafe { libc::mincore(addr, len, vec.as_mut_ptr()) };
    let err = io::Error::last_os_error();
    // SAFETY: unmapping exactly the mapping created above; nothing borrows it.
    unsafe { libc::munmap(addr, len) };
    if rc != 0 {
        return Err(err);
    }
    let resident = vec.iter().filter(|&&b| b & 1 == 1).count();
    Ok(resident as f64 / pages as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_pattern_round_trips() {
        let mut buf = vec![0u8; BLOCK];
        fill_block(1234, &mut buf);
        assert!(check_block(&buf, 1234 * BLOCK as u64));
        assert!(!check_block(&buf, 1235 * BLOCK as u64));
    }
}
