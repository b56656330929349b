#[ringsteal::test(start_paused = true, shards = 2)]
async fn paused_on_two_shards() {}

#[ringsteal::test(start_paused = "yes")]
async fn not_a_bool() {}

fn main() {}
