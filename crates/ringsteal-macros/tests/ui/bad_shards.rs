#[ringsteal::test(shards = 0)]
async fn zero() {}

#[ringsteal::test(shards = "two")]
async fn a_string() {}

#[ringsteal::test(shards = -1)]
async fn negative() {}

#[ringsteal::test(shards)]
async fn no_value() {}

fn main() {}
