#[ringsteal::main(shards = 2, shards = 4)]
async fn main() {}
