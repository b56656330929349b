#[ringsteal::main]
struct Main;

fn main() {}
