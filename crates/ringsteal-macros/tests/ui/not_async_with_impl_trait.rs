// A plain function under the attribute: the missing `async` is the only error (its
// `impl Trait` return type is not reported too).
#[ringsteal::main]
fn shown() -> impl std::fmt::Display {
    5
}

fn main() {
    println!("{}", shown());
}
