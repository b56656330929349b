//! [`Features::get`] caches only an answer that cannot change: a first detection that finds
//! no free descriptor (`EMFILE`) fails, and the next call, once descriptors are free, detects
//! again and succeeds (a runtime build attempted while the table was full must not make the
//! runtime unbuildable for the rest of the process).
//!
//! One test in its own process: it lowers `RLIMIT_NOFILE`, which is process-wide.

mod common;

use common::{fill_fd_table, set_nofile};
use ringsteal_uring::{check_available, Features, Ring, Unavailable};

#[test]
fn a_detection_that_found_no_free_descriptor_is_tried_again_by_the_next_call() {
    let (filler, old) = fill_fd_table();
    let first = Features::get().map(drop);
    drop(filler);
    set_nofile(old.rlim_cur, old.rlim_max);

    let err = first.expect_err("no descriptor was free, detection must have failed");
    assert_eq!(err.cause(), &Unavailable::TooManyFiles, "{err}");

    Ring::new(8).expect("descriptors are free again");
    let second = Features::get();
    assert!(
        second.is_ok(),
        "the first detection's EMFILE was cached: {}",
        second.unwrap_err()
    );
    check_available().expect("io_uring is available now");
}
