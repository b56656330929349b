//! Workload parameters and result checks, one module per workload (issue 6; the stream
//! workloads of the networking suite, issue 12, in `net_streams`).
//!
//! Each module states what one criterion iteration is, its sizes, and a check
//! every implementation (peer, floor, and later ringsteal) runs on its result,
//! so that no implementation can report a time for work it did not do.

pub mod cat_100mb;
pub mod fanout_fanin;
pub mod fs_read_4k;
pub mod idle_wake_latency;
pub mod net_streams;
pub mod ping_pong_rtt;
pub mod sleep_precision;
pub mod spawn_join;
pub mod steal_imbalance;
pub mod timer_churn;
