#[ringsteal::main(shards = 1)]
async fn run(name: &str, #[cfg(feature = "verbose")] verbose: bool) -> usize {
    name.len()
}

fn main() {}
