//! `linked_cat FILE`: `cat` with each read and its write linked in the kernel.
//!
//! `IOSQE_IO_LINK` chains two requests: the kernel starts the second only when the first
//! completed in full. `op::copy_linked` submits a read of the file into a buffer linked to a
//! write of that buffer to standard output, so each chunk costs one submission and no trip
//! through the program between the read and the write. The last, short chunk breaks the
//! chain (the kernel cancels the write after a short read), and is written on its own.
//! Compare `cat`, which waits for each read before it starts the write.
//!
//! Try:
//!
//! ```text
//! cargo run --example linked_cat -- Cargo.lock | cmp - Cargo.lock && echo same
//! ```

use std::io::ErrorKind;

use ringsteal::io::AsyncWriteOwned;
use ringsteal::op;
use ringsteal_examples::{cli, stdio};

const USAGE: &str = "linked_cat FILE";
const CHUNK: usize = 64 * 1024;

#[ringsteal::main(shards = 1)]
async fn main() {
    let args = cli::args(USAGE, 1);
    let path = cli::required(&args, 0, "the FILE to print", USAGE);
    let file = cli::open(path, USAGE).await;
    let mut stdout = stdio::stdout().unwrap_or_else(|e| cli::fail(USAGE, e));

    let (mut pos, mut linked, mut tails) = (0u64, 0u64, 0u64);
    let mut buf = Vec::with_capacity(CHUNK);
    loop {
        buf.clear();
        // Read CHUNK bytes at `pos`, then (linked) write them at stdout's position.
        let copy = op::copy_linked(
            file.shared_fd(),
            pos,
            stdout.shared_fd(),
            u64::MAX,
            buf,
            CHUNK,
        );
        let (res, filled) = copy.await;
        let (read, written) = match res {
            Ok(counts) => counts,
            Err(e) if e.kind() == ErrorKind::BrokenPipe => std::process::exit(1),
            Err(e) => cli::fail(USAGE, format_args!("copying {path}: {e}")),
        };
        linked += 1;
        pos += read as u64;
        // A short read (the end of the file) or a short write leaves bytes to write here.
        buf = filled;
        if written < read {
            tails += 1;
            let rest = buf[written..read].to_vec();
            match stdout.write_all(rest).await.0 {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::BrokenPipe => std::process::exit(1),
                Err(e) => cli::fail(USAGE, format_args!("writing to standard output: {e}")),
            }
        }
        if read == 0 {
            break; // end of file (a short read before it only breaks that one chain)
        }
    }
    eprintln!(
        "linked_cat: {pos} bytes in {linked} linked read+write submissions, {tails} plain write(s) for what a chain left"
    );
}
