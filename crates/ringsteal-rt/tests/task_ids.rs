//! Task ids, as tokio's `task::Id`: the same id from the handle, the abort handle, the task
//! itself, its destructor and its `JoinError`; unique across shards, blocking threads and
//! threads outside the runtime; `join_next_with_id`.

mod common;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use common::{hang_guard, quiet_intentional_panics};
use ringsteal_rt::task::{self, Id, TaskGroup};
use ringsteal_rt::{Placement, Runtime};
use std::time::Duration;

fn runtime(shards: usize) -> Runtime {
    Runtime::builder().shards(shards).build().expect("runtime")
}

#[test]
fn a_task_sees_the_id_its_handles_report() {
    let rt = runtime(2);
    rt.block_on(async {
        assert_eq!(task::try_id(), None, "block_on's future is not a task");
        for placement in [Placement::Pinned(1), Placement::Stealable] {
            let handle = ringsteal_rt::spawn_with(placement, async { task::id() });
            let (id, abort_id) = (handle.id(), handle.abort_handle().id());
            assert_eq!(id, abort_id);
            assert_eq!(handle.await.unwrap(), id);
        }
        let local = ringsteal_rt::spawn_local(async { task::id() });
        let id = local.id();
        assert_eq!(local.await.unwrap(), id);
        let blocking = ringsteal_rt::spawn_blocking(task::try_id);
        let id = blocking.id();
        assert_eq!(blocking.await.unwrap(), Some(id));
    });
    assert_eq!(task::try_id(), None, "nothing is polled here any more");
}

#[test]
fn ids_are_unique_across_every_thread_that_spawns() {
    const PER_SPAWNER: usize = 2_000;
    let rt = runtime(2);
    let handle = rt.handle();
    // A thread outside the runtime spawns through the handle while both shards spawn too.
    let outside = std::thread::spawn(move || {
        (0..PER_SPAWNER)
            .map(|_| handle.spawn(async { task::id() }).id())
            .collect::<Vec<Id>>()
    });
    let inside = rt.block_on(async {
        let mut spawners = Vec::new();
        for shard in 0..2 {
            spawners.push(ringsteal_rt::spawn_with(
                Placement::Pinned(shard),
                async move {
                    let mut ids = Vec::new();
                    for _ in 0..PER_SPAWNER {
                        let h = ringsteal_rt::spawn(async { task::id() });
                        let id = h.id();
                        assert_eq!(h.await.unwrap(), id);
                        ids.push(id);
                    }
                    ids
                },
            ));
        }
        let mut all = Vec::new();
        for s in spawners {
            all.extend(s.await.unwrap());
        }
        all
    });
    let mut seen = HashSet::new();
    for id in inside.into_iter().chain(outside.join().unwrap()) {
        assert!(seen.insert(id), "{id} handed out twice");
    }
    assert_eq!(seen.len(), 3 * PER_SPAWNER);
}

#[test]
fn a_failed_task_names_itself_in_its_join_error_and_its_destructor() {
    quiet_intentional_panics();
    struct RecordOnDrop(Arc<Mutex<Option<Id>>>);
    impl Drop for RecordOnDrop {
        fn drop(&mut self) {
            *self.0.lock().unwrap() = task::try_id();
        }
    }
    let rt = runtime(1);
    rt.block_on(async {
        let panicked = ringsteal_rt::spawn(async { panic!("intentional") });
        let id = panicked.id();
        let err = panicked.await.unwrap_err();
        assert!(err.is_panic());
        assert_eq!(err.id(), id);
        assert!(err.to_string().contains(&id.to_string()), "{err}");

        let dropped_as = Arc::new(Mutex::new(None));
        let guard = RecordOnDrop(dropped_as.clone());
        let aborted = ringsteal_rt::spawn(async move {
            let _guard = guard;
            std::future::pending::<()>().await
        });
        ringsteal_rt::yield_now().await; // it starts, so its future is dropped as a task
        let id = aborted.id();
        aborted.abort();
        let err = aborted.await.unwrap_err();
        assert!(err.is_cancelled());
        assert_eq!(err.id(), id);
        assert_eq!(*dropped_as.lock().unwrap(), Some(id));
    });
}

#[test]
fn join_next_with_id_pairs_each_output_with_its_task() {
    hang_guard("join_next_with_id", Duration::from_secs(60), || {
        runtime(2).block_on(async {
            let mut group = TaskGroup::new();
            let mut expected = std::collections::HashMap::new();
            for i in 0..64u32 {
                let abort = group.spawn(async move { (task::id(), i) });
                expected.insert(abort.id(), i);
            }
            while let Some(joined) = group.join_next_with_id().await {
                let (id, (inside, i)) = joined.unwrap();
                assert_eq!(id, inside);
                assert_eq!(expected.remove(&id), Some(i));
            }
            assert!(expected.is_empty());

            let abort = group.spawn(std::future::pending::<(Id, u32)>());
            abort.abort();
            let err = group.join_next_with_id().await.unwrap().unwrap_err();
            assert_eq!(err.id(), abort.id());
            assert!(group.try_join_next_with_id().is_none());
        });
    });
}
