//! `BufReader<File>` and `BufWriter<File>` seek as std's (and tokio's) do: a reader drops what
//! it buffered and counts a relative move from the caller's position, not the file's; a
//! writer writes out what it buffered first. The same moves and reads over the same bytes,
//! side by side with std's buffered types.
//!
//! Every test runs on each shard of a one-shard and a two-shard runtime.

mod common;

use std::io::{BufRead, Read, Seek, SeekFrom, Write};

use common::*;
use ringsteal_fs::{File, OpenOptions};
use ringsteal_rt::io::{AsyncReadOwned, AsyncSeek, AsyncWriteOwned, BufReader, BufWriter};

fn numbered_lines() -> Vec<u8> {
    (0..200)
        .flat_map(|i| format!("line {i}\n").into_bytes())
        .collect()
}

#[test]
fn a_buffered_reader_seeks_as_stds_does() {
    on_every_shard("bufreader-seek", |ctx| async move {
        let path = ctx.dir.join("lines");
        std::fs::write(&path, numbered_lines()).unwrap();
        let mut ours = BufReader::with_capacity(64, File::open(&path).await.unwrap());
        let mut theirs = std::io::BufReader::with_capacity(64, std::fs::File::open(&path).unwrap());
        let moves = [
            SeekFrom::Current(0),
            SeekFrom::Current(-3),
            SeekFrom::Current(40),
            SeekFrom::Start(100),
            SeekFrom::End(-20),
            SeekFrom::Current(-100),
            SeekFrom::Start(0),
        ];
        for pos in moves {
            // A line first, so that the buffers hold more than the caller took.
            let (mut a, mut b) = (String::new(), String::new());
            ours.read_line(&mut a).await.unwrap();
            theirs.read_line(&mut b).unwrap();
            assert_eq!(a, b, "before {pos:?}");
            assert!(!ours.buffer().is_empty(), "the reader has bytes buffered");
            let at = ours.seek(pos).await.unwrap();
            assert_eq!(at, theirs.seek(pos).unwrap(), "{pos:?}");
            assert!(ours.buffer().is_empty(), "a seek drops the buffer");
            let (res, got) = ours.read(Vec::with_capacity(7)).await;
            let mut want = [0u8; 7];
            let n = theirs.read(&mut want).unwrap();
            assert_eq!((res.unwrap(), &got[..]), (n, &want[..n]), "after {pos:?}");
        }
        assert_eq!(
            ours.stream_position().await.unwrap(),
            theirs.stream_position().unwrap()
        );
        ours.rewind().await.unwrap();
        let (res, all) = ours.read_to_end(Vec::new()).await;
        assert_eq!(
            (res.unwrap(), all),
            (numbered_lines().len(), numbered_lines())
        );
        // A move before the start is refused, as std's is, and leaves the reader usable.
        ours.rewind().await.unwrap();
        theirs.rewind().unwrap();
        let a = ours.seek(SeekFrom::Current(-1)).await.unwrap_err();
        let b = theirs.seek(SeekFrom::Current(-1)).unwrap_err();
        assert_eq!(a.raw_os_error(), b.raw_os_error());
        let mut line = String::new();
        ours.read_line(&mut line).await.unwrap();
        assert_eq!(line, "line 0\n");
    });
}

#[test]
fn a_buffered_writer_writes_out_what_it_holds_before_it_seeks() {
    on_every_shard("bufwriter-seek", |ctx| async move {
        let (a, b) = (ctx.dir.join("ours"), ctx.dir.join("theirs"));
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .open(&a)
            .await
            .unwrap();
        let mut ours = BufWriter::with_capacity(64, file);
        let mut theirs = std::io::BufWriter::with_capacity(64, std::fs::File::create(&b).unwrap());
        ours.write_all(b"hello, world".to_vec()).await.0.unwrap();
        theirs.write_all(b"hello, world").unwrap();
        assert!(!ours.buffer().is_empty(), "the bytes are still buffered");
        let at = ours.seek(SeekFrom::Start(7)).await.unwrap();
        assert_eq!(at, theirs.seek(SeekFrom::Start(7)).unwrap());
        assert!(ours.buffer().is_empty(), "written out before the move");
        ours.write_all(b"there".to_vec()).await.0.unwrap();
        theirs.write_all(b"there").unwrap();
        assert_eq!(
            ours.stream_position().await.unwrap(),
            theirs.stream_position().unwrap()
        );
        ours.seek(SeekFrom::End(0)).await.unwrap();
        theirs.seek(SeekFrom::End(0)).unwrap();
        ours.write_all(b"!".to_vec()).await.0.unwrap();
        theirs.write_all(b"!").unwrap();
        ours.flush().await.unwrap();
        theirs.flush().unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"hello, there!");
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    });
}

/// Generic code over the trait, as over tokio's `AsyncSeekExt`: a `&File` seeks too.
#[test]
fn generic_code_seeks_a_file_through_the_trait() {
    async fn last_bytes<F: AsyncSeek + AsyncReadOwned>(f: &mut F, n: i64) -> Vec<u8> {
        f.seek(SeekFrom::End(-n)).await.unwrap();
        f.read_to_end(Vec::new()).await.1
    }
    on_every_shard("seek-generic", |ctx| async move {
        let path = ctx.dir.join("ten");
        std::fs::write(&path, b"0123456789").unwrap();
        let file = File::open(&path).await.unwrap();
        assert_eq!(last_bytes(&mut &file, 3).await, b"789");
        let mut file = file;
        assert_eq!(last_bytes(&mut file, 10).await, b"0123456789");
    });
}
