#[ringsteal::test]
fn plain() {}

fn main() {}
