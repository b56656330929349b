//! `tee FILE1 FILE2`: standard input to standard output and to two files.
//!
//! Shows several writes in flight from one task: each chunk read from standard input goes to
//! the three outputs with three writes awaited together, so the slowest output sets the pace,
//! not the sum of the three. Each write owns its buffer while the kernel reads from it, so
//! three writes in flight need three buffers (reused from chunk to chunk).
//!
//! Try:
//!
//! ```text
//! seq 1 100000 | cargo run --example tee -- /tmp/a /tmp/b | tail -1; cmp /tmp/a /tmp/b
//! cargo run --example tee -- /tmp/a                  # a usage error: two files are needed
//! cargo run --example tee -- /no/such/dir/a /tmp/b   # an error and the usage line
//! ```

use ringsteal::fs::File;
use ringsteal::io::AsyncWriteOwned;
use ringsteal_examples::{cli, future::join_all, stdio};

const USAGE: &str =
    "tee FILE1 FILE2    (copies standard input to standard output, FILE1 and FILE2)";
const CHUNK: usize = 64 * 1024;

#[ringsteal::main(shards = 1)]
async fn main() {
    let args = cli::args(USAGE, 2);
    if args.len() != 2 {
        cli::usage_error(USAGE, "give exactly two files");
    }
    let mut files = Vec::new();
    for path in &args {
        match File::create(path).await {
            Ok(file) => files.push(file),
            Err(e) => cli::fail(USAGE, format_args!("cannot create {path}: {e}")),
        }
    }
    let input = ringsteal::io::stdin();
    // Standard output as a `File` (a duplicate of descriptor 1), so the three outputs are
    // one type.
    let stdout = stdio::stdout().unwrap_or_else(|e| cli::fail(USAGE, e));
    // The three outputs, each written at its own position.
    let outputs: [&File; 3] = [&stdout, &files[0], &files[1]];
    let mut spare = [Vec::with_capacity(CHUNK), Vec::with_capacity(CHUNK)];
    let mut chunk = Vec::with_capacity(CHUNK);
    let (mut total, mut rounds) = (0u64, 0u64);
    loop {
        chunk.clear();
        let (res, filled) = input.read(chunk).await;
        let n = match res {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => cli::fail(USAGE, format_args!("reading standard input: {e}")),
        };
        let [mut a, mut b] = spare;
        a.clear();
        a.extend_from_slice(&filled);
        b.clear();
        b.extend_from_slice(&filled);
        // Three writes, all submitted before any is awaited.
        let mut writers = outputs;
        let [w0, w1, w2] = &mut writers;
        let results = join_all([w0.write_all(filled), w1.write_all(a), w2.write_all(b)]).await;
        let mut bufs = Vec::with_capacity(3);
        for ((res, buf), name) in
            results
                .into_iter()
                .zip(["standard output", args[0].as_str(), args[1].as_str()])
        {
            if let Err(e) = res {
                cli::fail(USAGE, format_args!("writing {name}: {e}"));
            }
            bufs.push(buf);
        }
        let [first, second, third]: [Vec<u8>; 3] = bufs.try_into().expect("three buffers");
        (chunk, spare) = (first, [second, third]);
        total += n as u64;
        rounds += 1;
    }
    eprintln!("tee: {total} bytes to standard output and both files, in {rounds} rounds of three concurrent writes");
}
