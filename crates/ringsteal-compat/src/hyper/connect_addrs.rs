//! Connecting to the addresses a name resolved to, as hyper-util's `HttpConnector` does:
//! the addresses of the first one's family in turn, each with an equal share of what is left
//! of the connect timeout, and, if the name also has addresses of the other family, those in
//! turn too, started once the first family has had the happy-eyeballs delay without
//! connecting (RFC 8305's idea; hyper-util's default delay is 300 ms) or as soon as it has
//! failed. The first connection wins; the other attempt is dropped, which closes its socket.
//!
//! So a name whose IPv6 address drops packets (a host with a broken IPv6 route) connects
//! over IPv4 after the delay, instead of after the kernel's SYN retries (about two minutes).
//!
//! May not: resolve names (the connector does) or retry after all attempts failed.

use std::future::{poll_fn, Future};
use std::io;
use std::net::SocketAddr;
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use ringsteal_net::TcpStream;
use ringsteal_rt::time::Instant;

/// The end of a connect timeout: its instant, and the whole timeout (for the message).
pub(super) type Deadline = Option<(Instant, Duration)>;

/// Connects to one of `addrs`, racing the second address family after `delay` (`None`:
/// every address in turn, whatever its family).
pub(super) async fn connect(
    addrs: &[SocketAddr],
    delay: Option<Duration>,
    deadline: Deadline,
) -> io::Result<TcpStream> {
    let first_family = match addrs.first() {
        Some(first) => first.is_ipv4(),
        None => return Err(no_address()),
    };
    let (preferred, fallback): (Vec<SocketAddr>, Vec<SocketAddr>) =
        addrs.iter().partition(|a| a.is_ipv4() == first_family);
    match delay {
        Some(delay) if !fallback.is_empty() => {
            race(
                in_turn(&preferred, deadline),
                in_turn(&fallback, deadline),
                delay,
            )
            .await
        }
        _ => in_turn(addrs, deadline).await,
    }
}

/// `preferred`, and `fallback` once `preferred` has run for `delay` or failed: the first
/// connection either makes. Both failed: the preferred family's error, as hyper-util's.
async fn race(
    preferred: impl Future<Output = io::Result<TcpStream>>,
    fallback: impl Future<Output = io::Result<TcpStream>>,
    delay: Duration,
) -> io::Result<TcpStream> {
    let mut preferred = pin!(preferred);
    // Not polled before it starts, so no socket exists for it until then.
    let mut fallback = pin!(fallback);
    let mut head_start = pin!(ringsteal_rt::time::sleep(delay));
    let mut started = false;
    let (mut preferred_failed, mut fallback_failed) = (None, None);
    poll_fn(|cx| {
        if preferred_failed.is_none() {
            if let Poll::Ready(got) = preferred.as_mut().poll(cx) {
                match got {
                    Ok(stream) => return Poll::Ready(Ok(stream)),
                    Err(e) => preferred_failed = Some(e),
                }
            }
        }
        if !started {
            started = preferred_failed.is_some() || head_start.as_mut().poll(cx).is_ready();
        }
        if started && fallback_failed.is_none() {
            if let Poll::Ready(got) = fallback.as_mut().poll(cx) {
                match got {
                    Ok(stream) => return Poll::Ready(Ok(stream)),
                    Err(e) => fallback_failed = Some(e),
                }
            }
        }
        match (preferred_failed.take(), fallback_failed.is_some()) {
            (Some(e), true) => Poll::Ready(Err(e)),
            (failed, _) => {
                preferred_failed = failed;
                Poll::Pending
            }
        }
    })
    .await
}

/// Tries each of `addrs` in turn, each with an equal share of what is left of `deadline`,
/// as hyper-util's does: an address that drops its packets leaves time for the next.
async fn in_turn(addrs: &[SocketAddr], deadline: Deadline) -> io::Result<TcpStream> {
    let mut last = None;
    for (i, addr) in addrs.iter().enumerate() {
        let share = deadline.map(|(end, limit)| {
            // One reading of the clock: the share then ends by `end`, never past it.
            let now = Instant::now();
            let left = end.saturating_duration_since(now);
            (now + left / (addrs.len() - i) as u32, limit)
        });
        match within(share, TcpStream::connect(*addr)).await {
            Ok(stream) => return Ok(stream),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(no_address))
}

/// Runs `connecting` until `deadline`.
pub(super) async fn within<T>(
    deadline: Deadline,
    connecting: impl Future<Output = io::Result<T>>,
) -> io::Result<T> {
    match deadline {
        None => connecting.await,
        Some((end, limit)) => ringsteal_rt::time::timeout_at(end, connecting)
            .await
            .unwrap_or_else(|_| {
                Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("connecting took longer than the {limit:?} connect timeout"),
                ))
            }),
    }
}

fn no_address() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "the name resolved to no address")
}

#[cfg(test)]
mod tests {
    use super::*;

    use ringsteal_net::{TcpListener, TcpSocket};

    /// Generous: only a hang guard.
    const GUARD: Duration = Duration::from_secs(20);

    /// A listener on `[::1]` whose accept queue is full, so that the kernel drops every
    /// further SYN: a connect to it neither succeeds nor fails for minutes, as to an address
    /// behind a broken route. The returned values must live as long as the test needs that.
    fn black_hole() -> (TcpListener, std::net::TcpStream, SocketAddr) {
        let socket = TcpSocket::new_v6().unwrap();
        socket.bind("[::1]:0".parse().unwrap()).unwrap();
        // A backlog of 0 queues one connection; the next SYN finds the queue full.
        let listener = socket.listen(0).unwrap();
        let addr = listener.local_addr().unwrap();
        let filler = std::net::TcpStream::connect(addr).unwrap();
        (listener, filler, addr)
    }

    fn on_a_runtime(body: impl std::future::Future<Output = ()>) {
        let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
        rt.block_on(async {
            ringsteal_rt::time::timeout(GUARD, body)
                .await
                .expect("a connect hung");
        });
    }

    #[test]
    fn an_address_that_drops_packets_gives_way_to_the_other_family_after_the_delay() {
        on_a_runtime(async {
            let (_hole, _filler, hole) = black_hole();
            let good = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let good_addr = good.local_addr().unwrap();
            let started = Instant::now();
            let delay = Duration::from_millis(50);
            let stream = connect(&[hole, good_addr], Some(delay), None)
                .await
                .unwrap();
            assert_eq!(stream.peer_addr().unwrap(), good_addr);
            assert!(
                started.elapsed() >= delay,
                "the fallback did not wait its turn"
            );
            // Without the race the black hole holds the connect (a short timeout shows
            // it, where waiting for the kernel would take minutes).
            let deadline = Some((Instant::now() + delay, delay));
            let err = connect(&[hole], Some(delay), deadline).await.unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        });
    }

    #[test]
    fn a_family_that_fails_at_once_starts_the_other_at_once() {
        on_a_runtime(async {
            // A port nobody listens on: refused at once.
            let closed = std::net::TcpListener::bind("[::1]:0").unwrap();
            let refused = closed.local_addr().unwrap();
            drop(closed);
            let good = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let good_addr = good.local_addr().unwrap();
            // A delay far longer than the guard: only a refusal can start the fallback.
            let stream = connect(&[refused, good_addr], Some(GUARD * 10), None)
                .await
                .unwrap();
            assert_eq!(stream.peer_addr().unwrap(), good_addr);
            // Both refused: the preferred family's error.
            drop(good);
            let err = connect(&[refused, good_addr], Some(GUARD * 10), None)
                .await
                .unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
            // No delay: in turn, whatever the family.
            let err = connect(&[refused, good_addr], None, None)
                .await
                .unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
            assert_eq!(
                connect(&[], None, None).await.unwrap_err().kind(),
                io::ErrorKind::NotFound
            );
        });
    }
}
