#[ringsteal::main]
fn main() {}
