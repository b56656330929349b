#[ringsteal::main(flavor = "current_thread")]
async fn main() {}

#[ringsteal::test(worker_threads = 4)]
async fn four_workers() {}
