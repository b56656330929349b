#[ringsteal::main(wake = "doorbell")]
async fn main() {}
