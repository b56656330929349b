#[ringsteal::main(crate = 5)]
async fn main() {}
