#[ringsteal::main(flavor = "local")]
async fn main() {}

#[ringsteal::test(flavor = "current_thread", worker_threads = 4)]
async fn current_thread_with_four_workers() {}

#[ringsteal::test(shards = 2, worker_threads = 2)]
async fn both_names() {}

#[ringsteal::test(flavor = "multi_thread", start_paused = true)]
async fn paused_on_many() {}
