#[ringsteal::main]
async unsafe fn main() {}
