//! The attribute's arguments: `shards = N`, `idle = "..."`, `wake = "..."`, `crate = path` and,
//! on tests, `start_paused = true`. Parsing only; every error points at the offending token and
//! says what is allowed.
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
            Kind::Main => "`shards`, `idle`, `wake` and `crate`",
            Kind::Test => "`shards`, `idle`, `wake`, `start_paused` and `crate`",
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
            "shards" => {
                if self.shards.is_some() {
                    return Err(duplicate());
                }
                let lit: LitInt = value(&meta, SHARDS_HELP)?;
                let n: usize = lit
                    .base10_parse()
                    .map_err(|_| syn::Error::new(lit.span(), SHARDS_HELP))?;
                if n == 0 || n > 4096 {
                    return Err(syn::Error::new(
                        lit.span(),
                        "`shards` must be between 1 and 4096 (leave it out for one shard per available CPU)",
                    ));
                }
                self.shards = Some((n, lit.span()));
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
            // tokio's arguments, which a port brings along: say what they are here.
            "flavor" => return Err(meta.error(
                "ringsteal has no runtime flavors: every runtime is a set of shards; for tokio's \
                 `current_thread` write `shards = 1`, for `multi_thread` leave it out (one shard \
                 per available CPU) or write `shards = N`",
            )),
            "worker_threads" => return Err(meta.error(
                "ringsteal's threads are its shards: write `shards = N` for tokio's `worker_threads = N`",
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

    /// Checks that hold across arguments.
    pub(crate) fn validate(&self) -> syn::Result<()> {
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

const SHARDS_HELP: &str = "`shards` takes a whole number, e.g. `shards = 2`";
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
