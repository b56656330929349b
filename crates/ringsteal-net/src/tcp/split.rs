//! The halves of a [`TcpStream`]: owned ones (`into_split`), usable from two tasks on
//! different shards at once, and borrowed ones (`split`).

use super::TcpStream;
use crate::sockopt;

stream_halves!(
    TcpStream,
    "TcpStream",
    r#"```
use ringsteal_net::{TcpListener, TcpStream};

let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
rt.block_on(async {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let client = TcpStream::connect(listener.local_addr()?).await?;
    let (server, _) = listener.accept().await?;

    // Owned halves: the reader runs on shard 1, the writer here on shard 0.
    let (rd, wr) = server.into_split();
    let echo = ringsteal_rt::spawn_with(ringsteal_rt::Placement::Pinned(1), async move {
        let (n, buf) = rd.read(Vec::with_capacity(16)).await;
        (n.unwrap(), buf)
    });
    client.write_all(b"ping".to_vec()).await.0?;
    let (n, buf) = echo.await.unwrap();
    wr.write_all(buf).await.0?;
    let (res, back) = client.read_exact(vec![0u8; n]).await;
    res?;
    assert_eq!(back, b"ping");

    // Borrowed halves of a stream that is not consumed.
    let (r, w) = client.split();
    drop((r, w));
    Ok::<(), std::io::Error>(())
})
.unwrap();
```"#
);

impl OwnedWriteHalf {
    stream_zc_methods!();
}

impl WriteHalf<'_> {
    stream_zc_methods!();
}

half_addrs!(OwnedReadHalf, std::net::SocketAddr, sockopt::ip);
half_addrs!(OwnedWriteHalf, std::net::SocketAddr, sockopt::ip);
half_addrs!(ReadHalf<'_>, std::net::SocketAddr, sockopt::ip);
half_addrs!(WriteHalf<'_>, std::net::SocketAddr, sockopt::ip);
