// A typo inside the body is reported where it is, and only once: the attribute still
// applies to the function.
#[ringsteal::main]
async fn main() {
    let x = ;
}
