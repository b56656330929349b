//! [`ToSocketAddrs`]: what `bind`, `connect` and `send_to` accept, as in tokio. Addresses
//! given as values (`SocketAddr`, `(IpAddr, u16)`, `"127.0.0.1:80"`) never block; host
//! names (`"localhost:80"`) are resolved on the runtime's blocking pool.
//!
//! May not: block a shard.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use ringsteal_rt::RuntimeHandle;

/// Anything that names one or more socket addresses: `SocketAddr`, `SocketAddrV4/V6`,
/// `(IpAddr, u16)`, `(Ipv4Addr, u16)`, `(Ipv6Addr, u16)`, `&str` and `String`
/// (`"host:port"`), `(&str, u16)` and `(String, u16)`, `&[SocketAddr]`, and references to
/// these. Sealed: its method is private, so it can evolve.
///
/// A literal address is parsed in place; a host name is resolved with the system resolver
/// (`getaddrinfo`) on the blocking pool, so a slow DNS server never stalls a shard. A name
/// that does not resolve is an error.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let addrs: Vec<_> = ringsteal_net::lookup_host(("127.0.0.1", 80)).await?.collect();
///     assert_eq!(addrs, ["127.0.0.1:80".parse().unwrap()]);
///     let local: Vec<_> = ringsteal_net::lookup_host("localhost:80").await?.collect();
///     assert!(local.iter().all(|a| a.ip().is_loopback() && a.port() == 80));
///     Ok::<(), std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub trait ToSocketAddrs: sealed::ToSocketAddrsPriv {}

pub(crate) mod sealed {
    use std::io;
    use std::net::SocketAddr;

    /// What a [`ToSocketAddrs`](super::ToSocketAddrs) value needs to become addresses.
    #[derive(Debug)]
    pub enum Resolution {
        /// Known without a lookup.
        Ready(io::Result<Vec<SocketAddr>>),
        /// `host:port` for the resolver.
        Lookup(String),
    }

    /// The private half of [`ToSocketAddrs`](super::ToSocketAddrs).
    pub trait ToSocketAddrsPriv {
        /// What resolving this value takes.
        fn resolution(&self) -> Resolution;
    }
}

use sealed::{Resolution, ToSocketAddrsPriv};

/// The addresses `host` names, resolving a host name on the blocking pool.
///
/// # Errors
/// If the name does not resolve (or resolves to no address), or outside a ringsteal runtime
/// when a lookup is needed.
pub async fn lookup_host(host: impl ToSocketAddrs) -> io::Result<impl Iterator<Item = SocketAddr>> {
    resolve(&host).await.map(Vec::into_iter)
}

/// The addresses `addr` names (at least one).
pub(crate) async fn resolve<A: ToSocketAddrs + ?Sized>(addr: &A) -> io::Result<Vec<SocketAddr>> {
    let addrs = match addr.resolution() {
        Resolution::Ready(r) => r?,
        Resolution::Lookup(host) => lookup(host).await?,
    };
    if addrs.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the address resolved to no socket address",
        ));
    }
    Ok(addrs)
}

async fn lookup(host: String) -> io::Result<Vec<SocketAddr>> {
    let handle = RuntimeHandle::try_current().ok_or_else(|| {
        io::Error::other("resolving a host name needs a ringsteal runtime (its blocking pool)")
    })?;
    handle
        .spawn_blocking(move || {
            std::net::ToSocketAddrs::to_socket_addrs(&host)
                .map(Iterator::collect)
                .map_err(|e| io::Error::new(e.kind(), format!("resolving {host:?}: {e}")))
        })
        .await
        .map_err(|e| io::Error::other(format!("the resolver task failed: {e}")))?
}

/// The first address `addr` names, for calls that take one (`send_to`).
pub(crate) async fn resolve_one<A: ToSocketAddrs + ?Sized>(addr: &A) -> io::Result<SocketAddr> {
    Ok(resolve(addr).await?[0])
}

/// Tries `f` on each address in turn; the first success, or the last error.
pub(crate) async fn each_addr<A, T, F, Fut>(addr: &A, mut f: F) -> io::Result<T>
where
    A: ToSocketAddrs + ?Sized,
    F: FnMut(SocketAddr) -> Fut,
    Fut: std::future::Future<Output = io::Result<T>>,
{
    let mut last = None;
    for a in resolve(addr).await? {
        match f(a).await {
            Ok(v) => return Ok(v),
            Err(e) => last = Some(e),
        }
    }
    Err(last.expect("resolve yields at least one address"))
}

fn ready(addrs: Vec<SocketAddr>) -> Resolution {
    Resolution::Ready(Ok(addrs))
}

impl ToSocketAddrs for SocketAddr {}
impl ToSocketAddrsPriv for SocketAddr {
    fn resolution(&self) -> Resolution {
        ready(vec![*self])
    }
}

impl ToSocketAddrs for SocketAddrV4 {}
impl ToSocketAddrsPriv for SocketAddrV4 {
    fn resolution(&self) -> Resolution {
        ready(vec![(*self).into()])
    }
}

impl ToSocketAddrs for SocketAddrV6 {}
impl ToSocketAddrsPriv for SocketAddrV6 {
    fn resolution(&self) -> Resolution {
        ready(vec![(*self).into()])
    }
}

impl ToSocketAddrs for (IpAddr, u16) {}
impl ToSocketAddrsPriv for (IpAddr, u16) {
    fn resolution(&self) -> Resolution {
        ready(vec![SocketAddr::new(self.0, self.1)])
    }
}

impl ToSocketAddrs for (Ipv4Addr, u16) {}
impl ToSocketAddrsPriv for (Ipv4Addr, u16) {
    fn resolution(&self) -> Resolution {
        ready(vec![SocketAddr::new(self.0.into(), self.1)])
    }
}

impl ToSocketAddrs for (Ipv6Addr, u16) {}
impl ToSocketAddrsPriv for (Ipv6Addr, u16) {
    fn resolution(&self) -> Resolution {
        ready(vec![SocketAddr::new(self.0.into(), self.1)])
    }
}

impl ToSocketAddrs for str {}
impl ToSocketAddrsPriv for str {
    fn resolution(&self) -> Resolution {
        match self.parse::<SocketAddr>() {
            Ok(a) => ready(vec![a]),
            Err(_) => Resolution::Lookup(self.to_owned()),
        }
    }
}

impl ToSocketAddrs for String {}
impl ToSocketAddrsPriv for String {
    fn resolution(&self) -> Resolution {
        self.as_str().resolution()
    }
}

impl ToSocketAddrs for (&str, u16) {}
impl ToSocketAddrsPriv for (&str, u16) {
    fn resolution(&self) -> Resolution {
        match self.0.parse::<IpAddr>() {
            Ok(ip) => ready(vec![SocketAddr::new(ip, self.1)]),
            // A bare IPv6 address in brackets is not a host name either.
            Err(_) => Resolution::Lookup(format!("{}:{}", self.0, self.1)),
        }
    }
}

impl ToSocketAddrs for (String, u16) {}
impl ToSocketAddrsPriv for (String, u16) {
    fn resolution(&self) -> Resolution {
        (self.0.as_str(), self.1).resolution()
    }
}

impl ToSocketAddrs for [SocketAddr] {}
impl ToSocketAddrsPriv for [SocketAddr] {
    fn resolution(&self) -> Resolution {
        ready(self.to_vec())
    }
}

impl<T: ToSocketAddrs + ?Sized> ToSocketAddrs for &T {}
impl<T: ToSocketAddrsPriv + ?Sized> ToSocketAddrsPriv for &T {
    fn resolution(&self) -> Resolution {
        (**self).resolution()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready_addrs(r: Resolution) -> Vec<SocketAddr> {
        match r {
            Resolution::Ready(Ok(a)) => a,
            other => panic!("expected addresses without a lookup, got {other:?}"),
        }
    }

    #[test]
    fn literal_addresses_never_need_a_lookup() {
        let v4: SocketAddr = "10.0.0.1:80".parse().unwrap();
        assert_eq!(ready_addrs("10.0.0.1:80".resolution()), [v4]);
        assert_eq!(ready_addrs(("10.0.0.1", 80).resolution()), [v4]);
        assert_eq!(
            ready_addrs((Ipv4Addr::new(10, 0, 0, 1), 80).resolution()),
            [v4]
        );
        assert_eq!(ready_addrs(v4.resolution()), [v4]);
        let v6: SocketAddr = "[::1]:9".parse().unwrap();
        assert_eq!(ready_addrs("[::1]:9".resolution()), [v6]);
        assert_eq!(ready_addrs(("::1", 9).resolution()), [v6]);
        assert_eq!(ready_addrs([v4, v6][..].resolution()), [v4, v6]);
    }

    #[test]
    fn host_names_are_looked_up() {
        match ("localhost", 80).resolution() {
            Resolution::Lookup(h) => assert_eq!(h, "localhost:80"),
            other => panic!("{other:?}"),
        }
        match "example.invalid:1".resolution() {
            Resolution::Lookup(h) => assert_eq!(h, "example.invalid:1"),
            other => panic!("{other:?}"),
        }
    }
}
