// The function is refused, but still declared as the attribute would have made it: the
// calls below compile against it, so the attribute's error is the only one.
#[ringsteal::main]
async fn run<T: Default>(label: &str, times: u32) -> T {
    let _ = (label, times);
    T::default()
}

#[ringsteal::main]
async unsafe fn serve(handle: ringsteal::RuntimeHandle, port: u16) -> u16 {
    let _ = handle;
    port
}

fn main() {
    let n: u32 = run("x", 2);
    let port: u16 = serve(8080);
    let _ = (n, port);
}
