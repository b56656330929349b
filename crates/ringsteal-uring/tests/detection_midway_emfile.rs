//! A detection that runs out of descriptors after its first ring (every trial ring and socket
//! then fails with `EMFILE`) fails, rather than report the features it could not try as
//! missing; and nothing of it is cached, so the next call reports what the kernel has.
//!
//! One test in its own process: it lowers `RLIMIT_NOFILE`, which is process-wide.

mod common;

use common::{fill_fd_table, set_nofile};
use ringsteal_uring::abi::{IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_SINGLE_ISSUER};
use ringsteal_uring::{Features, Unavailable};

#[test]
fn a_detection_that_runs_out_of_descriptors_midway_fails_instead_of_reporting_features_missing() {
    // What this kernel accepts, detected with descriptors to spare (not cached).
    let truth = Features::detect().expect("io_uring is available");
    let wanted = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    if !truth.setup_flag_accepted(wanted) {
        eprintln!("skipped: this kernel has no DEFER_TASKRUN (6.1)");
        return;
    }
    let (mut filler, old) = fill_fd_table();
    // Exactly one descriptor free: enough for the detection's first ring, not its trials.
    filler.pop();
    let first = Features::get().map(Features::setup_flags);
    drop(filler);
    set_nofile(old.rlim_cur, old.rlim_max);

    let err = first.expect_err("the trials had no descriptor: detection must fail");
    assert_eq!(err.cause(), &Unavailable::TooManyFiles, "{err}");
    let f = Features::get().expect("descriptors are free again");
    assert!(
        f.setup_flag_accepted(wanted),
        "SINGLE_ISSUER|DEFER_TASKRUN reported refused (setup flags {:#x}; the kernel accepts \
         {:#x})",
        f.setup_flags(),
        truth.setup_flags()
    );
    assert_eq!(f.setup_flags(), truth.setup_flags());
    assert_eq!(f.multishot_accept(), truth.multishot_accept());
    assert_eq!(f.multishot_recv(), truth.multishot_recv());
    assert_eq!(f.pbuf_ring(), truth.pbuf_ring());
}
