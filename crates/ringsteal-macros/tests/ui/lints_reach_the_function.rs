// The compiler's lints see the function as the user wrote it: an unused one is reported.
#![deny(dead_code)]

#[ringsteal::main]
async fn never_called() {}

fn main() {}
