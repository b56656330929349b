//! `#[ringsteal::test]` as users write it: each argument reaches the runtime it builds, the
//! function may return a `Result` and take the runtime's handle, and a paused clock starts
//! paused. (`#[ringsteal::main]` runs in the README quick start and the crate docs; misuse is
//! checked by the compile-fail tests of `ringsteal-macros`.)

#![cfg(feature = "macros")]
// `keeps_parameter_attributes` compiles only if its parameter's `allow` reaches every
// function the attribute makes.
#![deny(non_snake_case)]

use std::time::Duration;

use ringsteal::time::{self, Instant};
use ringsteal::{IdleStrategy, RuntimeHandle, WakeMechanism};

#[ringsteal::test]
async fn without_arguments_there_is_one_shard_per_available_cpu() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(RuntimeHandle::current().shards(), cpus);
    assert_eq!(
        ringsteal::current_shard(),
        Some(0),
        "the test's thread is shard 0"
    );
}

#[ringsteal::test(shards = 3)]
async fn shards_sets_the_shard_count(handle: RuntimeHandle) {
    assert_eq!(handle.shards(), 3);
    let on_two = handle.spawn_with(ringsteal::Placement::Pinned(2), async {
        ringsteal::current_shard()
    });
    assert_eq!(on_two.await.unwrap(), Some(2));
}

// tokio's arguments, as a port brings them.
#[ringsteal::test(flavor = "multi_thread", worker_threads = 3)]
async fn tokio_worker_threads_sets_the_shard_count(handle: RuntimeHandle) {
    assert_eq!(handle.shards(), 3);
}

#[ringsteal::test(flavor = "current_thread")]
async fn tokio_current_thread_is_one_shard(handle: RuntimeHandle) {
    assert_eq!(handle.shards(), 1);
}

#[ringsteal::test(flavor = "current_thread", start_paused = true)]
async fn tokio_current_thread_with_a_paused_clock() {
    let start = ringsteal::time::Instant::now();
    ringsteal::time::sleep(std::time::Duration::from_secs(3600)).await;
    assert!(start.elapsed() >= std::time::Duration::from_secs(3600));
}

#[ringsteal::test(shards = 2, wake = "eventfd")]
async fn wake_eventfd_rings_only_eventfds(handle: RuntimeHandle) {
    // A wake of a sleeping shard 1 from shard 0: with MSG_RING it would count a msg_ring
    // doorbell; forced to the eventfd, only eventfd doorbells are counted.
    for _ in 0..20 {
        let t = handle.spawn_with(ringsteal::Placement::Pinned(1), async { 1 });
        assert_eq!(t.await.unwrap(), 1);
    }
    let stats = handle.stats();
    let msg_ring: u64 = stats.shards.iter().map(|s| s.msg_ring_doorbells).sum();
    let eventfd: u64 = stats.shards.iter().map(|s| s.eventfd_doorbells).sum();
    assert_eq!(msg_ring, 0);
    assert!(eventfd > 0, "{stats:?}");
}

#[ringsteal::test(shards = 1, idle = "spin(2ms)")]
async fn idle_spin_sets_the_budget() -> Result<(), ringsteal::JoinError> {
    let _ = (IdleStrategy::Park, WakeMechanism::Auto);
    assert_eq!(ringsteal::spawn(async { 5 }).await?, 5);
    Ok(())
}

#[ringsteal::test(shards = 1)]
async fn a_test_may_return_a_result() -> Result<(), std::io::Error> {
    ringsteal::time::sleep(Duration::from_micros(10)).await;
    Ok(())
}

#[ringsteal::test(start_paused = true)]
async fn start_paused_runs_a_single_shard_on_a_paused_clock(handle: RuntimeHandle) {
    assert_eq!(handle.shards(), 1);
    let start = Instant::now();
    let real = std::time::Instant::now();
    time::sleep(Duration::from_secs(7200)).await;
    assert_eq!(start.elapsed(), Duration::from_secs(7200));
    assert!(real.elapsed() < Duration::from_secs(30));
    assert_eq!(time::try_pause(), Err(time::ClockError::AlreadyPaused));
}

#[ringsteal::test(start_paused = false, shards = 2)]
async fn start_paused_false_leaves_the_clock_running() {
    assert_eq!(time::try_resume(), Err(time::ClockError::NotPaused));
}

#[ringsteal::test(crate = ringsteal, shards = 1)]
async fn crate_names_the_facade_path() {}

mod reexported {
    pub(crate) use ringsteal as rs;
}

#[ringsteal::test(crate = reexported::rs, shards = 1)]
async fn crate_accepts_a_reexported_path() {
    assert_eq!(reexported::rs::current_shard(), Some(0));
}

#[ringsteal::test(shards = 1)]
#[should_panic(expected = "the body panicked")]
async fn other_test_attributes_are_kept() {
    panic!("the body panicked");
}

#[ringsteal::test(shards = 1)]
#[ignore = "shows that #[ignore] is kept: it must never run"]
async fn ignore_is_kept() {
    unreachable!("an ignored test ran");
}

/// A `#[ringsteal::main]` function other than `main` takes the parameters its caller passes,
/// as tokio's does (a plain `main` that parses arguments, then runs the async part).
#[ringsteal::main(shards = 2)]
async fn serve(name: &str, (first, second): (u32, u32), mut hits: Vec<u32>) -> String {
    hits.push(first + second);
    let on = ringsteal::spawn(async { ringsteal::current_shard() })
        .await
        .unwrap();
    format!("{name}: {hits:?} on a shard: {}", on.is_some())
}

/// The same with the runtime's handle first, then the caller's parameters.
#[ringsteal::main(shards = 1)]
async fn with_handle(handle: RuntimeHandle, label: String) -> (String, usize) {
    (label, handle.shards())
}

/// A parameter's attributes stay on the plain function's parameter (another attribute macro
/// may read them): with the `allow` dropped there, this file would not compile.
#[ringsteal::main(shards = 1)]
async fn keeps_parameter_attributes(#[allow(non_snake_case)] Label: &str) -> usize {
    Label.len()
}

#[test]
fn a_main_attribute_on_another_function_passes_its_parameters() {
    assert_eq!(keeps_parameter_attributes("four"), 4);
    assert_eq!(
        serve("svc", (2, 3), vec![1]),
        "svc: [1, 5] on a shard: true"
    );
    assert_eq!(with_handle("h".to_string()), ("h".to_string(), 1));
}

/// The body runs as an async block inside the plain function, so an associated function's
/// body may name `Self`, and the function keeps its lifetime parameters.
struct Greeter {
    greeting: &'static str,
}

impl Greeter {
    const TIMES: usize = 2;

    #[ringsteal::main(shards = 1)]
    async fn greet<'a>(name: &'a str, punctuation: &'a str) -> String {
        let me = Self { greeting: "hello" };
        let times = ringsteal::spawn(async { Self::TIMES }).await.unwrap();
        format!("{} {name}{punctuation}", me.greeting).repeat(times)
    }
}

/// A parameter named like its function: nothing calls the function by name inside, so the
/// parameter shadows nothing.
#[ringsteal::main(shards = 1)]
async fn twice(twice: u32) -> u32 {
    twice * 2
}

/// A `cfg` on a parameter is rustc's to apply, as on any function: with the condition false,
/// the parameter (and the code using it) is not there.
#[ringsteal::main(shards = 1)]
async fn counted(#[cfg(any())] never: u32, items: &[u8]) -> usize {
    #[cfg(any())]
    let _ = never;
    items.len()
}

#[test]
fn a_main_attribute_keeps_self_lifetimes_cfg_and_parameter_names() {
    assert_eq!(Greeter::greet("rs", "!"), "hello rs!hello rs!");
    assert_eq!(twice(21), 42);
    assert_eq!(counted(b"abc"), 3);
}

/// Inner attributes at the start of a body apply to the function, as with tokio's
/// attributes (in an async block they would be refused): with this `allow` lost, this file
/// would not compile under its `deny`.
#[ringsteal::test(shards = 1)]
async fn inner_attributes_at_the_start_of_the_body_are_kept() {
    #![allow(non_snake_case)]
    let Unused = 1;
    assert_eq!(Unused, 1);
}

/// A function written by `macro_rules!` with a `$body:block` (which reaches the attribute
/// wrapped in an invisible group).
macro_rules! main_from_a_block {
    ($name:ident, $ret:ty, $body:block) => {
        #[ringsteal::main(shards = 1)]
        async fn $name() -> $ret $body
    };
}

main_from_a_block!(made_by_a_macro, u32, {
    ringsteal::spawn(async { 21 }).await.unwrap() * 2
});

#[test]
fn a_main_attribute_takes_a_body_written_by_a_macro() {
    assert_eq!(made_by_a_macro(), 42);
}

/// A function under the attribute called from inside a runtime fails at once, naming the
/// attribute, rather than building a runtime only to fail in its `block_on`.
#[test]
fn a_main_function_called_from_a_task_says_what_is_wrong() {
    let err = std::thread::spawn(|| {
        let rt = ringsteal::Runtime::builder().shards(1).build().unwrap();
        rt.block_on(async { twice(1) })
    })
    .join()
    .unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("#[ringsteal::main]"), "{msg}");
}

/// The expansion's own names are hidden from the body: a parameter may take one.
#[ringsteal::main(shards = 1)]
async fn add_one(__ringsteal_handle: u32) -> u32 {
    __ringsteal_handle + 1
}

#[test]
fn the_expansion_shadows_no_parameter() {
    assert_eq!(add_one(41), 42);
}
