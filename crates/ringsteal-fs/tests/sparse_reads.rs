//! `read` of a file whose size cannot be allocated (a sparse 1 TiB file on a machine with
//! far less memory) fails with `OutOfMemory`, as std's does, instead of aborting.

mod common;

use common::*;

/// Sparse: no blocks are allocated, so the file costs nothing on disk.
const HUGE: u64 = 1 << 40;

#[test]
fn reading_a_sparse_file_too_large_to_allocate_fails_like_std() {
    on_every_shard("sparse-read", |ctx| async move {
        let path = ctx.dir.join("sparse");
        std::fs::File::create(&path).unwrap().set_len(HUGE).unwrap();
        // Where 1 TiB can be reserved (overcommit), std would go on to fill it with zeros:
        // nothing to compare, and a risk to the machine.
        if Vec::<u8>::new().try_reserve_exact(HUGE as usize).is_ok() {
            eprintln!("this machine reserves 1 TiB: nothing to compare");
            return;
        }
        let std_res = std::fs::read(&path);
        if std_res.is_ok() {
            eprintln!("this machine allocated 1 TiB: nothing to compare");
            return;
        }
        assert_same_error(ringsteal_fs::read(&path).await, std_res, "read");
        assert_same_error(
            ringsteal_fs::read_to_string(&path).await,
            std::fs::read_to_string(&path),
            "read_to_string",
        );
    });
}
