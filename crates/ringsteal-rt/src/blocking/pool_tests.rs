//! Pool internals a public API cannot see: the join handles of retired threads.

use std::time::Duration;

use crate::Runtime;

/// A thread that retires takes its join handle with it, so a pool whose threads come and go
/// keeps no more handles than it has threads.
#[test]
fn retired_threads_leave_no_join_handles_behind() {
    let rt = Runtime::builder()
        .shards(1)
        .blocking_keep_alive(Duration::from_millis(1))
        .build()
        .unwrap();
    let shared = rt.shared();
    let pool = &shared.blocking;
    for round in 0..20 {
        // Wait (on the pool's own exit signal) for every thread to retire, then start one.
        let mut st = pool.state.lock();
        while st.threads > 0 {
            pool.exited.wait(&mut st);
        }
        assert!(
            st.handles.len() <= st.threads,
            "round {round}: {} join handles kept for {} threads",
            st.handles.len(),
            st.threads
        );
        drop(st);
        rt.block_on(rt.handle().spawn_blocking(|| ())).unwrap();
    }
}
