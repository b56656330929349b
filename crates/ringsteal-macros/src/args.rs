//! The attribute's arguments: `shards = N`, `idle = "..."`, `wake = "..."`, `crate = path` and,
//! on tests, `start_paused = true`; and tokio's `worker_threads = N` (`shards`) and
//! `flavor = "current_thread"` (one shard) or `"multi_thread"` (ADR-0044). Parsing only; every
//! error points at the offending token and says what is allowed.
//!
//! May not: look at the function the attribute is on (see `check.rs`) or emit code (`expand.rs`).

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::{Lit, LitBool, LitInt, LitStr, Path};

/// Which attribute is being expanded: the arguments allowed differ.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Main,
    Test,
}

impl Kind {
    pub(crate) fn attr(self) -> &'static str {
        match self {
            Kind::Main => "#[ringsteal::main]",
            Kind::Test => "#[ringsteal::test]",
        }
    }

    fn allowed(self) -> &'static str {
        match self {
            Kind::Main => "`shards`, `idle`, `wake` and `crate` (and tokio's `worker_threads` and `flavor`)",
            Kind::Test => "`shards`, `idle`, `wake`, `start_paused` and `crate` (and tokio's `worker_threads` and `flavor`)",
        }
    }
}

/// What an idle shard does (`IdleStrategy`).
pub(crate) enum Idle {
    Park,
    /// Spin for this many nanoseconds, then park.
    Spin(u64),
}

/// How shards wake each other (`WakeMechanism`).
pub(crate) enum Wake {
    Auto,
    MsgRing,
    EventFd,
}

/// tokio's runtime flavors, as a port writes them.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// One shard: the thread that runs the function.
    CurrentThread,
    /// The default: one shard per available CPU, or `worker_threads`.
    MultiThread,
}

/// The spin budget of a bare `idle = "spin"`, as `Builder::idle`'s documentation suggests.
pub(crate) const DEFAULT_SPIN_NANOS: u64 = 50_000;

/// The parsed arguments.
pub(crate) struct Args {
    pub(crate) kind: Kind,
    pub(crate) shards: Option<(usize, Span)>,
    pub(crate) idle: Option<Idle>,
    pub(crate) wake: Option<Wake>,
    pub(crate) krate: Option<Path>,
    pub(crate) start_paused: Option<(bool, Span)>,
    /// tokio's `flavor`, resolved into `shards` by [`validate`](Self::validate).
    flavor: Option<(Flavor, Span)>,
    /// The name the shard count was given under (`shards` or tokio's `worker_threads`).
    shards_name: &'static str,
}

impl Args {
    pub(crate) fn new(kind: Kind) -> Self {
        Self {
            kind,
            shards: None,
            idle: None,
            wake: None,
            krate: None,
            start_paused: None,
            flavor: None,
            shards_name: "shards",
        }
    }

    /// Parses one `name = value` argument (called by `syn::meta::parser` for each).
    pub(crate) fn parse_one(&mut self, meta: ParseNestedMeta<'_>) -> syn::Result<()> {
        let Some(name) = meta.path.get_ident().map(|i| i.to_string()) else {
            return Err(meta.error(format!(
                "unknown argument; {} takes {}",
                self.kind.attr(),
                self.kind.allowed()
            )));
        };
        let duplicate = || {
            meta.error(format!(
                "`{name}` is given twice; give each argument at most once"
            ))
        };
        match name.as_str() {
            // tokio's `worker_threads` is the same count: ringsteal's threads are its shards
            // (the function's thread being shard 0).
            "shards" | "worker_threads" => {
                if self.shards.is_some() {
                    if self.shards_name != name {
                        return Err(meta.error(
                            "`worker_threads` is tokio's name for `shards`: give one of them",
                        ));
                    }
                    return Err(duplicate());
                }
                let help = format!("`{name}` takes a whole number, e.g. `{name} = 2`");
                let lit: LitInt = value(&meta, &help)?;
                let n: usize = lit
                    .base10_parse()
                    .map_err(|_| syn::Error::new(lit.span(), &help))?;
                if n == 0 || n > 4096 {
                    return Err(syn::Error::new(
                        lit.span(),
                        format!("`{name}` must be between 1 and 4096 (leave it out for one shard per available CPU)"),
                    ));
                }
                self.shards = Some((n, lit.span()));
                self.shards_name = if name == "shards" {
                    "shards"
                } else {
                    "worker_threads"
                };
            }
            "flavor" => {
                if self.flavor.is_some() {
                    return Err(duplicate());
                }
                let lit: LitStr = value(&meta, FLAVOR_HELP)?;
                let flavor = match lit.value().as_str() {
                    "current_thread" => Flavor::CurrentThread,
                    "multi_thread" => Flavor::MultiThread,
                    _ => return Err(syn::Error::new(lit.span(), FLAVOR_HELP)),
                };
                self.flavor = Some((flavor, lit.span()));
            }
            "idle" => {
                if self.idle.is_some() {
                    return Err(duplicate());
                }
                let lit: LitStr = value(&meta, IDLE_HELP)?;
                self.idle = Some(parse_idle(&lit)?);
            }
            "wake" => {
                if self.wake.is_some() {
                    return Err(duplicate());
                }
                let lit: LitStr = value(&meta, WAKE_HELP)?;
                self.wake = Some(match lit.value().as_str() {
                    "auto" => Wake::Auto,
                    "msg_ring" => Wake::MsgRing,
                    "eventfd" => Wake::EventFd,
                    _ => return Err(syn::Error::new(lit.span(), WAKE_HELP)),
                });
            }
            "crate" => {
                if self.krate.is_some() {
                    return Err(duplicate());
                }
                let input = meta.value()?;
                let path = if input.peek(LitStr) {
                    let lit: LitStr = input.parse()?;
                    lit.parse::<Path>().map_err(|_| {
                        syn::Error::new(
                            lit.span(),
                            "`crate` must name a path, e.g. `crate = my_lib::ringsteal`",
                        )
                    })?
                } else {
                    Path::parse_mod_style(input).map_err(|e| {
                        syn::Error::new(
                            e.span(),
                            "`crate` must name a path, e.g. `crate = my_lib::ringsteal`",
                        )
                    })?
                };
                self.krate = Some(path);
            }
            "start_paused" if self.kind == Kind::Test => {
                if self.start_paused.is_some() {
                    return Err(duplicate());
                }
                let lit: LitBool = value(&meta, "`start_paused` takes `true` or `false`")?;
                self.start_paused = Some((lit.value, lit.span()));
            }
            "start_paused" => return Err(meta.error(
                "`start_paused` is for #[ringsteal::test] only: a program's clock is never paused",
            )),
            _ => {
                return Err(meta.error(format!(
                    "unknown argument `{name}`; {} takes {}",
                    self.kind.attr(),
                    self.kind.allowed()
                )))
            }
        }
        Ok(())
    }

    /// Checks that hold across arguments, and resolves tokio's `flavor` into `shards`.
    pub(crate) fn validate(&mut self) -> syn::Result<()> {
        match (self.flavor, self.shards) {
            (Some((Flavor::CurrentThread, _)), Some((n, span))) if n > 1 => {
                return Err(syn::Error::new(
                    span,
                    format!(
                        "`flavor = \"current_thread\"` is one shard: leave `{}` out, or use \
                         `flavor = \"multi_thread\"`",
                        self.shards_name
                    ),
                ));
            }
            (Some((Flavor::CurrentThread, span)), None) => self.shards = Some((1, span)),
            (Some((Flavor::MultiThread, span)), _)
                if matches!(self.start_paused, Some((true, _))) =>
            {
                return Err(syn::Error::new(
                    span,
                    "a paused clock needs a single shard: use `flavor = \"current_thread\"` with `start_paused = true`, as tokio does",
                ));
            }
            _ => {}
        }
        if let (Some((true, _)), Some((n, span))) = (self.start_paused, self.shards) {
            if n > 1 {
                return Err(syn::Error::new(
                    span,
                    "a paused clock needs a single shard: use `shards = 1` (or leave `shards` out) with `start_paused = true`",
                ));
            }
        }
        Ok(())
    }
}

const FLAVOR_HELP: &str = "`flavor` takes tokio's \"current_thread\" (one shard) or \
     \"multi_thread\" (one shard per available CPU, or `worker_threads`/`shards`)";
const IDLE_HELP: &str = "`idle` takes \"park\", \"spin\" (a 50us budget) or \"spin(BUDGET)\" \
     with a budget such as 200us, 2ms or 500ns";
const WAKE_HELP: &str = "`wake` takes \"auto\", \"msg_ring\" or \"eventfd\"";

/// Reads `= <literal of type T>`, or fails at the value with `help`.
fn value<T: syn::parse::Parse>(meta: &ParseNestedMeta<'_>, help: &str) -> syn::Result<T> {
    let input = meta.value().map_err(|_| meta.error(help))?;
    let lit: Lit = input.parse().map_err(|e| syn::Error::new(e.span(), help))?;
    let span = lit.span();
    match syn::parse2::<T>(quote::ToTokens::into_token_stream(lit)) {
        Ok(v) => Ok(v),
        Err(_) => Err(syn::Error::new(span, help)),
    }
}

fn parse_idle(lit: &LitStr) -> syn::Result<Idle> {
    let text = lit.value();
    let err = || syn::Error::new(lit.span(), IDLE_HELP);
    match text.as_str() {
        "park" => return Ok(Idle::Park),
        "spin" => return Ok(Idle::Spin(DEFAULT_SPIN_NANOS)),
        _ => {}
    }
    let budget = text
        .strip_prefix("spin(")
        .and_then(|rest| rest.strip_suffix(')'))
        .ok_or_else(err)?
        .trim();
    let nanos = parse_duration_nanos(budget).ok_or_else(err)?;
    if nanos == 0 {
        return Err(syn::Error::new(
            lit.span(),
            "a spin budget of zero never spins: use `idle = \"park\"`",
        ));
    }
    Ok(Idle::Spin(nanos))
}

/// `200us`, `2ms`, `500ns`, `1s` (also `µs`) in nanoseconds.
pub(crate) fn parse_duration_nanos(text: &str) -> Option<u64> {
    let digits = text.find(|c: char| !c.is_ascii_digit())?;
    let (n, unit) = text.split_at(digits);
    let n: u64 = n.parse().ok()?;
    let scale = match unit.trim() {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => return None,
    };
    n.checked_mul(scale)
}

#[cfg(test)]
mod tests {
    use super::parse_duration_nanos;

    #[test]
    fn spin_budgets_read_with_their_unit() {
        assert_eq!(parse_duration_nanos("500ns"), Some(500));
        assert_eq!(parse_duration_nanos("200us"), Some(200_000));
        assert_eq!(parse_duration_nanos("200µs"), Some(200_000));
        assert_eq!(parse_duration_nanos("2ms"), Some(2_000_000));
        assert_eq!(parse_duration_nanos("1s"), Some(1_000_000_000));
    }

    #[test]
    fn spin_budgets_without_a_known_unit_are_refused() {
        for bad in [
            "",
            "50",
            "us",
            "5 minutes",
            "1.5ms",
            "-3us",
            "99999999999999999999ns",
        ] {
            assert_eq!(parse_duration_nanos(bad), None, "{bad:?}");
        }
    }
}
