// The mismatch is reported at the body's tail, where the mistake is, not only at the
// attribute.
#[ringsteal::main]
async fn compute() -> u32 {
    let s = "x";
    s
}

fn main() {
    let _ = compute();
}
