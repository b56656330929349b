#[ringsteal::main]
async fn main(handle: ringsteal::RuntimeHandle, extra: u32) {
    let _ = (handle, extra);
}
