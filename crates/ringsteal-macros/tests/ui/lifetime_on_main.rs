#[ringsteal::main]
async fn main<'a>() {}

#[ringsteal::test]
async fn borrows<'a>() {}
