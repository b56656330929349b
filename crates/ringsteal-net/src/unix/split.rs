//! The halves of a [`UnixStream`]: owned ones (`into_split`), usable from two tasks on
//! different shards at once, and borrowed ones (`split`).

use super::{SocketAddr, UnixStream};

stream_halves!(
    UnixStream,
    "UnixStream",
    r#"```
use ringsteal_net::UnixStream;

let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
rt.block_on(async {
    let (a, b) = UnixStream::pair()?;
    let (a_rd, a_wr) = a.into_split();
    a_wr.write_all(b"one way".to_vec()).await.0?;
    drop(a_wr); // shuts down a's write side: b reads end of stream after the bytes
    let (res, got) = b.read_exact(vec![0u8; 7]).await;
    res?;
    assert_eq!(got, b"one way");
    assert_eq!(b.read(Vec::with_capacity(8)).await.0?, 0);
    let (r, w) = b.split();
    w.write_all(b"back".to_vec()).await.0?;
    drop(r);
    let (res, got) = a_rd.read(Vec::with_capacity(8)).await;
    assert_eq!(&got[..res?], b"back");
    Ok::<(), std::io::Error>(())
})
.unwrap();
```"#
);

half_addrs!(OwnedReadHalf, SocketAddr, |a| Ok(SocketAddr::from_raw(a)));
half_addrs!(OwnedWriteHalf, SocketAddr, |a| Ok(SocketAddr::from_raw(a)));
half_addrs!(ReadHalf<'_>, SocketAddr, |a| Ok(SocketAddr::from_raw(a)));
half_addrs!(WriteHalf<'_>, SocketAddr, |a| Ok(SocketAddr::from_raw(a)));
