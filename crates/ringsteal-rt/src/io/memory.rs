//! The I/O traits for in-memory values, as std has `Read for &[u8]` and `Write for Vec<u8>`:
//! a byte slice is a source, a `Vec<u8>` a sink, and a `std::io::Cursor` a source with a
//! position to seek (of any bytes) and a sink (of a `Vec<u8>`, `&mut Vec<u8>`, `&mut [u8]`
//! or `Box<[u8]>`, as tokio's). Useful in tests and to collect output.
//!
//! May not: touch the kernel; runs under Miri.

use std::future::{ready, Future};
use std::io::{self, Cursor, Seek, SeekFrom};

use super::seek::AsyncSeek;
use super::traits::{AsyncReadOwned, AsyncWriteOwned};
use crate::buf::{initialised, BufResult, IoBuf, IoBufMut};

impl AsyncReadOwned for &[u8] {
    /// Copies from the front of the slice and advances it.
    fn read<B: IoBufMut>(&mut self, buf: B) -> impl Future<Output = BufResult<usize, B>> + Send {
        let (n, buf) = copy_into(self, buf);
        *self = &self[n..];
        ready((Ok(n), buf))
    }

    fn read_exact_from_memory(&mut self, dst: &mut [u8]) -> bool {
        let Some((now, rest)) = self.split_at_checked(dst.len()) else {
            return false;
        };
        dst.copy_from_slice(now);
        *self = rest;
        true
    }
}

/// Copies what fits of `from` to the start of `buf`; yields the count.
fn copy_into<B: IoBufMut>(from: &[u8], mut buf: B) -> (usize, B) {
    let n = from.len().min(buf.bytes_total());
    // SAFETY: `buf` is valid for bytes_total() >= n bytes of writes and is not borrowed from
    // `from`'s memory (it is owned); the n bytes are then initialised.
    unsafe {
        std::ptr::copy_nonoverlapping(from.as_ptr(), buf.stable_mut_ptr(), n);
        buf.set_init(n);
    }
    (n, buf)
}

impl<T: AsRef<[u8]> + Send> AsyncReadOwned for Cursor<T> {
    /// Copies from the position on and advances it, as std's `Read for Cursor`.
    fn read<B: IoBufMut>(&mut self, buf: B) -> impl Future<Output = BufResult<usize, B>> + Send {
        let bytes = self.get_ref().as_ref();
        let start = usize::try_from(self.position()).map_or(bytes.len(), |p| p.min(bytes.len()));
        let (n, buf) = copy_into(&bytes[start..], buf);
        // From the position as it was: one past the end stays where it is, as std's.
        self.set_position(self.position() + n as u64);
        ready((Ok(n), buf))
    }
}

/// `AsyncWriteOwned` for the cursors std writes through: at the position, as std's `Write`
/// for each (a vector's overwrites, then grows; a slice's stops at its end, where `write`
/// yields 0 and `write_all` fails with `WriteZero`), as tokio's are.
macro_rules! cursor_writer {
    ($($cursor:ty),+) => {$(
        impl AsyncWriteOwned for $cursor {
            fn write<B: IoBuf>(
                &mut self,
                buf: B,
            ) -> impl Future<Output = BufResult<usize, B>> + Send {
                let bytes = initialised(&buf);
                ready((io::Write::write(self, bytes), buf))
            }

            fn shutdown(&mut self) -> impl Future<Output = io::Result<()>> + Send {
                ready(Ok(()))
            }
        }
    )+};
}

cursor_writer!(
    Cursor<Vec<u8>>,
    Cursor<&mut Vec<u8>>,
    Cursor<&mut [u8]>,
    Cursor<Box<[u8]>>
);

impl<T: AsRef<[u8]> + Send> AsyncSeek for Cursor<T> {
    /// Moves the position, as std's `Seek for Cursor` (past the end is allowed).
    fn seek(&mut self, pos: SeekFrom) -> impl Future<Output = io::Result<u64>> + Send {
        ready(Seek::seek(self, pos))
    }
}

impl AsyncWriteOwned for Vec<u8> {
    /// Appends all of `buf`.
    fn write<B: IoBuf>(&mut self, buf: B) -> impl Future<Output = BufResult<usize, B>> + Send {
        let bytes = initialised(&buf);
        self.extend_from_slice(bytes);
        ready((Ok(bytes.len()), buf))
    }

    fn write_all_to_memory(&mut self, src: &[u8]) -> bool {
        self.extend_from_slice(src);
        true
    }

    fn shutdown(&mut self) -> impl Future<Output = io::Result<()>> + Send {
        ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::io::test_util::block_on;
    use crate::io::{BufReader, BufWriter};

    #[test]
    fn every_cursor_std_writes_through_writes_as_std_does() {
        fn both<C>(mut ours: C, mut theirs: C) -> (C, C)
        where
            C: AsyncWriteOwned + AsyncSeek + io::Write + Seek,
        {
            block_on(AsyncSeek::seek(&mut ours, SeekFrom::Start(2))).unwrap();
            Seek::seek(&mut theirs, SeekFrom::Start(2)).unwrap();
            for chunk in [&b"abc"[..], b"defgh", b"ij"] {
                let (n, _) = block_on(AsyncWriteOwned::write(&mut ours, chunk.to_vec()));
                assert_eq!(n.unwrap(), io::Write::write(&mut theirs, chunk).unwrap());
            }
            (ours, theirs)
        }
        let (ours, theirs) = both(Cursor::new(vec![b'.'; 4]), Cursor::new(vec![b'.'; 4]));
        assert_eq!(ours.get_ref(), theirs.get_ref());
        assert_eq!(ours.get_ref(), b"..abcdefghij");
        let (mut a, mut b) = (vec![b'.'; 4], vec![b'.'; 4]);
        both(Cursor::new(&mut a), Cursor::new(&mut b));
        assert_eq!(a, b);
        let (mut a, mut b) = ([b'.'; 8], [b'.'; 8]);
        both(Cursor::new(&mut a[..]), Cursor::new(&mut b[..]));
        assert_eq!((a, &a), (b, b"..abcdef"), "a slice stops at its end");
        let (ours, theirs) = both(
            Cursor::new(vec![b'.'; 6].into_boxed_slice()),
            Cursor::new(vec![b'.'; 6].into_boxed_slice()),
        );
        assert_eq!(ours.get_ref(), theirs.get_ref());

        let mut full = [0u8; 2];
        let (res, _) = block_on(Cursor::new(&mut full[..]).write_all(b"abc".to_vec()));
        assert_eq!(res.unwrap_err().kind(), io::ErrorKind::WriteZero);
        assert_eq!(&full, b"ab");
    }

    #[test]
    fn a_cursor_reads_writes_and_seeks_as_stds_does() {
        let mut ours = Cursor::new(b"0123456789".to_vec());
        let mut theirs = Cursor::new(b"0123456789".to_vec());
        for pos in [
            SeekFrom::Start(2),
            SeekFrom::Current(3),
            SeekFrom::End(-1),
            SeekFrom::End(4),
            SeekFrom::Start(0),
        ] {
            assert_eq!(
                block_on(AsyncSeek::seek(&mut ours, pos)).unwrap(),
                Seek::seek(&mut theirs, pos).unwrap()
            );
            let (n, got) = block_on(AsyncReadOwned::read(&mut ours, Vec::with_capacity(4)));
            let mut want = [0u8; 4];
            let m = io::Read::read(&mut theirs, &mut want).unwrap();
            assert_eq!((n.unwrap(), &got[..]), (m, &want[..m]), "after {pos:?}");
            let (n, _) = block_on(AsyncWriteOwned::write(&mut ours, b"ab".to_vec()));
            assert_eq!(n.unwrap(), io::Write::write(&mut theirs, b"ab").unwrap());
        }
        assert_eq!(ours.get_ref(), theirs.get_ref());
        // A position past the end reads nothing.
        block_on(AsyncSeek::seek(&mut ours, SeekFrom::Start(100))).unwrap();
        assert_eq!(
            block_on(AsyncReadOwned::read(&mut ours, Vec::with_capacity(4)))
                .0
                .unwrap(),
            0
        );
        assert!(block_on(AsyncSeek::seek(&mut ours, SeekFrom::Current(-1000))).is_err());
    }

    #[test]
    fn buffered_types_over_a_cursor_seek_from_the_callers_position() {
        let mut reader = BufReader::with_capacity(4, Cursor::new(b"abcdefghij".to_vec()));
        let (_, one) = block_on(reader.read(Vec::with_capacity(1)));
        assert_eq!(one, b"a");
        assert_eq!(reader.buffer(), b"bcd");
        assert_eq!(block_on(reader.stream_position()).unwrap(), 1);
        assert_eq!(
            reader.buffer(),
            b"bcd",
            "as std's, stream_position keeps the buffer"
        );
        assert_eq!(block_on(reader.seek(SeekFrom::Current(2))).unwrap(), 3);
        assert!(reader.buffer().is_empty());
        let (_, next) = block_on(reader.read(Vec::with_capacity(2)));
        assert_eq!(next, b"de");

        let mut writer = BufWriter::with_capacity(16, Cursor::new(Vec::new()));
        block_on(writer.write_all(b"hello".to_vec())).0.unwrap();
        assert_eq!(block_on(writer.seek(SeekFrom::Start(1))).unwrap(), 1);
        block_on(writer.write_all(b"E".to_vec())).0.unwrap();
        block_on(writer.flush()).unwrap();
        assert_eq!(writer.get_ref().get_ref(), b"hEllo");
    }
}
