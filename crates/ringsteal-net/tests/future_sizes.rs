//! The futures a stream makes once per call stay small. A future is copied whole each time it
//! is moved into place (into the state of the future that awaits it), once per call, and into
//! memory a server with many connections has not touched since that connection's last
//! request: in `http::serve`, 768 bytes for `write_all_then_read` as an `async fn`, 520 for
//! `write_all` (ADR-0041). The bounds leave room for compiler changes, not for a return to
//! those sizes.

use std::mem::size_of_val;

use ringsteal_net::UnixStream;
use ringsteal_rt::buf::IoBuf;

#[test]
fn a_streams_per_call_futures_stay_small() {
    let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    rt.block_on(async {
        let (a, _b) = UnixStream::pair().unwrap();
        let buf = || Vec::<u8>::with_capacity(64).slice(..);
        let pair = a.write_all_then_read(b"reply".to_vec(), buf());
        assert!(
            size_of_val(&pair) <= 256,
            "write_all_then_read: {}",
            size_of_val(&pair)
        );
        let write_all = a.write_all(b"reply".to_vec());
        assert!(
            size_of_val(&write_all) <= 448,
            "write_all: {}",
            size_of_val(&write_all)
        );
        let read = a.read(buf());
        assert!(size_of_val(&read) <= 320, "read: {}", size_of_val(&read));
    });
}
