//! # ringsteal-macros
//!
//! `#[ringsteal::main]` and `#[ringsteal::test]`: run an `async fn` on a
//! [ringsteal](https://github.com/ringsteal/ringsteal) runtime. Use them through the
//! `ringsteal` crate (its `macros` feature, on by default), not from this crate.
//!
//! Files: `args.rs` (the attribute's arguments), `check.rs` (what functions are accepted),
//! `expand.rs` (the code emitted).

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]

mod args;
mod check;
mod expand;

use proc_macro::TokenStream;
use syn::ItemFn;

use args::{Args, Kind};

/// Runs an `async fn` (usually `main`) on a ringsteal runtime.
///
/// ```
/// #[ringsteal::main]
/// async fn main() {
///     let answer = ringsteal::spawn(async { 6 * 7 }).await.unwrap();
///     assert_eq!(answer, 42);
/// }
/// ```
///
/// The function returns `()` or any `Result<(), E>` with `E: Debug` (as a plain `main` may),
/// and may take the [`RuntimeHandle`] of the runtime it runs on as its one parameter:
///
/// ```
/// use ringsteal::RuntimeHandle;
///
/// #[ringsteal::main(shards = 2, idle = "spin(100us)", wake = "auto")]
/// async fn main(runtime: RuntimeHandle) -> Result<(), ringsteal::JoinError> {
///     assert_eq!(runtime.shards(), 2);
///     let on = runtime.spawn_with(ringsteal::Placement::Pinned(1), async { ringsteal::current_shard() });
///     assert_eq!(on.await?, Some(1));
///     Ok(())
/// }
/// ```
///
/// On a function other than `main`, as with tokio's, the function keeps its other
/// parameters: it becomes a plain function that its caller (a plain `main` that reads the
/// command line, say) calls with them, and that runs its body on a new runtime. (A first
/// parameter of type `RuntimeHandle` is still the runtime's, not the caller's.) The
/// parameters, their patterns and attributes (`cfg` too) stay as written, and so may the
/// function's lifetime parameters; the body runs as an `async move` block inside the plain
/// function, as tokio's does, so an associated function may use `Self` in it.
///
/// ```
/// #[ringsteal::main(shards = 1)]
/// async fn run(greeting: &str, times: usize) -> String {
///     ringsteal::spawn(async {}).await.unwrap();
///     greeting.repeat(times)
/// }
///
/// fn main() {
///     assert_eq!(run("hi", 2), "hihi");
/// }
/// ```
///
/// # Arguments
///
/// | argument | values | default | builder call |
/// |---|---|---|---|
/// | `shards = N` | 1 to 4096 | one shard per available CPU | `shards(N)` |
/// | `idle = "..."` | `"park"`, `"spin"` (a 50 µs budget), `"spin(BUDGET)"` with `BUDGET` like `200us`, `2ms`, `500ns`, `1s` | `"park"` | `idle(IdleStrategy::Park)` or `idle(IdleStrategy::SpinThenPark(BUDGET))` |
/// | `wake = "..."` | `"auto"`, `"msg_ring"`, `"eventfd"` | `"auto"` | `wake(WakeMechanism::Auto / MsgRing / EventFd)` |
/// | `crate = path` | the path of the `ringsteal` crate, for crates that re-export it (`crate = my_lib::ringsteal`; a string `"my_lib::ringsteal"` works too) | `::ringsteal` | |
/// | `worker_threads = N` | tokio's name for `shards = N` (give one of the two) | | `shards(N)` |
/// | `flavor = "..."` | tokio's `"current_thread"` (one shard, the function's thread) or `"multi_thread"` (the default) | `"multi_thread"` | `shards(1)` for `"current_thread"` |
///
/// A port's `#[tokio::main(flavor = "multi_thread", worker_threads = 4)]` or
/// `#[tokio::test(flavor = "current_thread")]` keeps its arguments (ADR-0044); `"current_thread"`
/// with more than one shard is a compile error, as in tokio.
///
/// The thread that runs `main` is shard 0; the others are threads the runtime starts. If the
/// runtime cannot be built (io_uring refused, a bad setting), the program prints the error,
/// which names the cause and the fix, and exits with status 1.
///
/// # Compile errors
///
/// Misuse is a compile error at the offending token that says what is allowed: a function
/// that is not `async`, an unknown or repeated argument, a bad value, a function generic over
/// types or constants (or any generic `main` or test) or `unsafe`, a method (`self`), or on
/// `main` (or a test) parameters other than one `RuntimeHandle`. The function is then still
/// declared, as the attribute would have made it, so its callers show no errors of their own.
///
/// [`RuntimeHandle`]: https://docs.rs/ringsteal/latest/ringsteal/struct.RuntimeHandle.html
#[proc_macro_attribute]
pub fn main(args: TokenStream, item: TokenStream) -> TokenStream {
    expand(Kind::Main, args, item)
}

/// Makes an `async fn` a `#[test]` that runs on its own ringsteal runtime.
///
/// ```
/// #[ringsteal::test(shards = 2)]
/// async fn spawned_tasks_complete() {
///     let task = ringsteal::spawn(async { 1 + 1 });
///     assert_eq!(task.await.unwrap(), 2);
/// }
/// # fn main() {}
/// ```
///
/// It takes the arguments of [`macro@main`] and `start_paused = true`, which starts the
/// runtime's clock paused ([`ringsteal::time::pause`]): timers then complete as soon as the
/// runtime has nothing else to do, so hours of timeouts and retries take milliseconds. A
/// paused clock needs a single shard, so `start_paused = true` defaults to `shards = 1`, and
/// any other count is a compile error.
///
/// ```
/// use std::time::Duration;
/// use ringsteal::time::{sleep, Instant};
///
/// #[ringsteal::test(start_paused = true)]
/// async fn an_hour_passes_at_once() {
///     let start = Instant::now();
///     sleep(Duration::from_secs(3600)).await;
///     assert_eq!(start.elapsed(), Duration::from_secs(3600));
/// }
/// # fn main() {}
/// ```
///
/// The function may return `()` or a `Result<(), E: Debug>` (an `Err` fails the test) and
/// may take a `RuntimeHandle`. Other attributes (`#[ignore]`, `#[should_panic]`) go after
/// this one. If the runtime cannot be built, the test fails with the build error.
///
/// [`ringsteal::time::pause`]: https://docs.rs/ringsteal/latest/ringsteal/time/fn.pause.html
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    expand(Kind::Test, args, item)
}

fn expand(kind: Kind, args: TokenStream, item: TokenStream) -> TokenStream {
    let f: ItemFn = match syn::parse::Parser::parse(parse_fn_keeping_body, item.clone()) {
        Ok(f) => f,
        Err(e) => {
            // Not a function: the error, and the item as it was.
            let what = format!("{} goes on an `async fn`, not on this item", kind.attr());
            let e = syn::Error::new(e.span(), what);
            let mut out: TokenStream = e.into_compile_error().into();
            out.extend(item);
            return out;
        }
    };
    let mut parsed = Args::new(kind);
    let parser = syn::meta::parser(|meta| parsed.parse_one(meta));
    let checked = syn::parse::Parser::parse(parser, args)
        .and_then(|()| parsed.validate())
        .and_then(|()| check::check(kind, &f));
    match checked {
        Ok(params) => expand::expand(&parsed, f, params).into(),
        Err(e) => with_error(kind, e, &f),
    }
}

/// The error, and the function declared as the attribute would have made it (a safe plain
/// function, without the runtime's handle; `main` and a test without parameters) with a body
/// that never runs: its callers compile against it and show no errors of their own (nor
/// does a missing `main`, or `.await` outside `async`). A function refused for not being
/// `async` is already a plain one: it is kept as written (a stub's body would not have its
/// `impl Trait` return type).
fn with_error(kind: Kind, e: syn::Error, f: &ItemFn) -> TokenStream {
    if f.sig.asyncness.is_none() {
        let error = e.into_compile_error();
        return quote::quote! {
            #error
            #[allow(dead_code)]
            #f
        }
        .into();
    }
    let ItemFn {
        attrs, vis, sig, ..
    } = f;
    let mut sig = sig.clone();
    sig.asyncness = None;
    sig.unsafety = None;
    sig.constness = None;
    sig.variadic = None;
    if kind == Kind::Test || sig.ident == "main" {
        sig.inputs.clear();
        sig.generics = syn::Generics::default();
    } else if let Some(syn::FnArg::Typed(p)) = sig.inputs.first() {
        if check::is_runtime_handle(&p.ty) {
            sig.inputs = sig.inputs.into_iter().skip(1).collect();
        }
    }
    let error = e.into_compile_error();
    quote::quote! {
        #error
        #(#attrs)*
        #[allow(dead_code, unused_variables)]
        #vis #sig { ::core::unreachable!() }
    }
    .into()
}

/// The function, its body kept as tokens (parsed by rustc, not here). The body's inner
/// attributes (`#![allow(..)]` at its start) become the function's, as with tokio's: they
/// would be refused inside the async block the body becomes. `braced!` also takes a body
/// that `macro_rules!` passed as a `$body:block` (wrapped in an invisible group).
fn parse_fn_keeping_body(input: syn::parse::ParseStream<'_>) -> syn::Result<ItemFn> {
    let mut attrs = input.call(syn::Attribute::parse_outer)?;
    let vis: syn::Visibility = input.parse()?;
    let sig: syn::Signature = input.parse()?;
    let content;
    let brace_token = syn::braced!(content in input);
    for mut a in content.call(syn::Attribute::parse_inner)? {
        a.style = syn::AttrStyle::Outer;
        attrs.push(a);
    }
    let rest: proc_macro2::TokenStream = content.parse()?;
    let block = syn::Block {
        brace_token,
        stmts: vec![syn::Stmt::Expr(syn::Expr::Verbatim(rest), None)],
    };
    Ok(ItemFn {
        attrs,
        vis,
        sig,
        block: Box::new(block),
    })
}
