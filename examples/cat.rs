//! `cat FILE`: a file to standard output, through the ring.
//!
//! Shows the owned-buffer loop at its simplest: one 64 KiB buffer travels to the kernel with
//! each read (`IORING_OP_READ` at an offset), comes back filled, travels again with the write
//! to standard output (`ringsteal::io::stdout()`), and comes back once more to be reused. No
//! copy, no second buffer.
//! (`linked_cat` does the same with each read and write linked in the kernel.)
//!
//! Try:
//!
//! ```text
//! cargo run --example cat -- Cargo.toml
//! cargo run --example cat -- /no/such/file    # an error and the usage line, status 1
//! ```

use std::io::ErrorKind;

use ringsteal_examples::cli;

const USAGE: &str = "cat FILE";

#[ringsteal::main(shards = 1)]
async fn main() {
    let args = cli::args(USAGE, 1);
    let path = cli::required(&args, 0, "the FILE to print", USAGE);
    let file = cli::open(path, USAGE).await;
    let stdout = ringsteal::io::stdout();

    let mut buf = Vec::with_capacity(64 * 1024);
    let mut pos = 0;
    loop {
        buf.clear();
        let (res, filled) = file.read_at(buf, pos).await;
        let n = match res {
            Ok(0) => break, // end of file
            Ok(n) => n,
            Err(e) => cli::fail(USAGE, format_args!("reading {path}: {e}")),
        };
        pos += n as u64;
        let (res, written) = stdout.write_all(filled).await;
        match res {
            Ok(()) => buf = written,
            // The reader went away (`cat FILE | head`): stop quietly, as cat(1) does.
            Err(e) if e.kind() == ErrorKind::BrokenPipe => std::process::exit(1),
            Err(e) => cli::fail(USAGE, format_args!("writing to standard output: {e}")),
        }
    }
}
