//! Runs the examples' code as tests, so an example that breaks fails `cargo test`.

#[path = "../subprocess.rs"]
#[allow(dead_code)] // its `main` is the example binary's entry point
mod subprocess;

#[test]
fn the_subprocess_example_runs() {
    subprocess::run().expect("the subprocess example");
}

#[path = "../http_server/parse.rs"]
#[allow(dead_code, unreachable_pub)] // items the server does not use; see the example's main
mod parse;
#[path = "../http_server/server.rs"]
#[allow(unreachable_pub)]
mod server;

/// The http_server example's server answers a keep-alive GET, a pipelined pair and a
/// closing request on one connection, with either way of reading.
#[test]
fn the_http_server_example_serves_requests() {
    use ringsteal::net::{TcpListener, TcpStream};
    for reads in [server::Reads::Single, server::Reads::RecvStream] {
        let rt = ringsteal::Runtime::builder().shards(2).build().unwrap();
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await?;
            let addr = listener.local_addr()?;
            ringsteal::spawn(server::serve(listener, reads));
            let c = TcpStream::connect(addr).await?;
            let hello = "HTTP/1.1 200 OK\r\nServer: ringsteal-example\r\n\
                         Content-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, world!";
            let get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
            let close = "GET /bytes/3 HTTP/1.1\r\nConnection: close\r\n\r\n";
            c.write_all(format!("{get}{get}{get}{close}").into_bytes())
                .await
                .0?;
            let mut got = Vec::new();
            loop {
                let (res, buf) = c.read(Vec::with_capacity(4096)).await;
                if res? == 0 {
                    break; // the server closed after the last response
                }
                got.extend_from_slice(&buf);
            }
            let want = format!(
                "{hello}{hello}{hello}HTTP/1.1 200 OK\r\nServer: ringsteal-example\r\n\
                 Content-Type: text/plain\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc"
            );
            assert_eq!(String::from_utf8_lossy(&got), want, "{reads:?}");
            Ok::<(), std::io::Error>(())
        })
        .unwrap();
    }
}
