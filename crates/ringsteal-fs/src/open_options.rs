//! [`OpenOptions`]: how to open a file, with std's rules for which combinations are valid.

use std::io;
use std::path::Path;

use ringsteal_rt::op;

use crate::cstr::cstr;
use crate::fifo;
use crate::File;

/// Options and flags to open a file with, like [`std::fs::OpenOptions`].
///
/// ```
/// use ringsteal_fs::OpenOptions;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let dir = std::env::temp_dir().join(format!("ringsteal-doc-oo-{}", std::process::id()));
///     let file = OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&dir).await?;
///     let (res, _) = file.write_at(b"hi".to_vec(), 0).await;
///     assert_eq!(res?, 2);
///     std::fs::remove_file(&dir)
/// })
/// .unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct OpenOptions {
    read: bool,
    write: bool,
    append: bool,
    truncate: bool,
    create: bool,
    create_new: bool,
    mode: u32,
    custom_flags: i32,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl OpenOptions {
    /// All options off; mode `0o666` (before the umask).
    pub fn new() -> Self {
        Self {
            read: false,
            write: false,
            append: false,
            truncate: false,
            create: false,
            create_new: false,
            mode: 0o666,
            custom_flags: 0,
        }
    }

    /// Open for reading.
    pub fn read(&mut self, read: bool) -> &mut Self {
        self.read = read;
        self
    }

    /// Open for writing.
    pub fn write(&mut self, write: bool) -> &mut Self {
        self.write = write;
        self
    }

    /// Open for appending (writes go to the end; implies write access).
    pub fn append(&mut self, append: bool) -> &mut Self {
        self.append = append;
        self
    }

    /// Truncate to zero length (needs write access).
    pub fn truncate(&mut self, truncate: bool) -> &mut Self {
        self.truncate = truncate;
        self
    }

    /// Create the file if it does not exist (needs write or append access).
    pub fn create(&mut self, create: bool) -> &mut Self {
        self.create = create;
        self
    }

    /// Create the file, failing if it exists (`O_EXCL`); `create` and `truncate` are ignored.
    pub fn create_new(&mut self, create_new: bool) -> &mut Self {
        self.create_new = create_new;
        self
    }

    /// Permission bits for a created file (before the umask).
    pub fn mode(&mut self, mode: u32) -> &mut Self {
        self.mode = mode;
        self
    }

    /// Extra `open(2)` flags (e.g. `libc::O_DIRECT`, `libc::O_NOFOLLOW`); the access mode bits
    /// are ignored (use `read`/`write`/`append`).
    pub fn custom_flags(&mut self, flags: i32) -> &mut Self {
        self.custom_flags = flags;
        self
    }

    fn access_mode(&self) -> io::Result<i32> {
        Ok(match (self.read, self.write, self.append) {
            (true, false, false) => libc::O_RDONLY,
            (false, true, false) => libc::O_WRONLY,
            (true, true, false) => libc::O_RDWR,
            (false, _, true) => libc::O_WRONLY | libc::O_APPEND,
            (true, _, true) => libc::O_RDWR | libc::O_APPEND,
            (false, false, false) => {
                return Err(invalid(
                    "must specify at least one of read, write, or append access",
                ))
            }
        })
    }

    fn creation_mode(&self) -> io::Result<i32> {
        match (self.write, self.append) {
            (true, false) => {}
            (false, false) => {
                if self.truncate || self.create || self.create_new {
                    return Err(invalid(
                        "creating or truncating a file requires write or append access",
                    ));
                }
            }
            (_, true) => {
                if self.truncate && !self.create_new {
                    return Err(invalid(
                        "creating or truncating a file requires write or append access",
                    ));
                }
            }
        }
        Ok(match (self.create, self.truncate, self.create_new) {
            (false, false, false) => 0,
            (true, false, false) => libc::O_CREAT,
            (false, true, false) => libc::O_TRUNC,
            (true, true, false) => libc::O_CREAT | libc::O_TRUNC,
            (_, _, true) => libc::O_CREAT | libc::O_EXCL,
        })
    }

    /// The `open(2)` flags these options stand for.
    pub(crate) fn flags(&self) -> io::Result<i32> {
        Ok(self.access_mode()? | self.creation_mode()? | (self.custom_flags & !libc::O_ACCMODE))
    }

    /// Opens `path` with these options (`IORING_OP_OPENAT`). A named pipe (FIFO) opened
    /// without `O_NONBLOCK` waits for its other end, as with std: a reader for a writer, a
    /// writer for a reader (that wait runs on the blocking pool).
    pub async fn open(&self, path: impl AsRef<Path>) -> io::Result<File> {
        let path = path.as_ref();
        let flags = self.flags()?;
        let fd = match op::openat(None, cstr(path)?, flags, self.mode).await {
            Ok(fd) => fd,
            Err(e) if fifo::writer_without_reader(&e, flags) => {
                fifo::open_blocking(path, flags, self.mode).await?
            }
            Err(e) => return Err(e),
        };
        let early = fifo::reader_opened_early(&fd, flags)?;
        let file = File::from_owned(fd);
        if early {
            fifo::wait_for_writer(file.shared_fd()).await?;
        }
        Ok(file)
    }
}

fn invalid(msg: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}
