//! The code the attributes emit: the `async fn` becomes an inner function of a plain one that
//! builds the runtime from the arguments and runs it with `block_on`.
//!
//! May not: decide what is allowed (`args.rs`, `check.rs`).

use proc_macro2::TokenStream;
use quote::format_ident;
use quote::quote;
use syn::{parse_quote, Attribute, FnArg, Ident, ItemFn, Pat, Path, Type};

use crate::args::{Args, Idle, Kind, Wake};
use crate::check::{Handle, Params};

/// The plain function that replaces `f`.
pub(crate) fn expand(args: &Args, f: ItemFn, params: Params) -> TokenStream {
    let krate: Path = args
        .krate
        .clone()
        .unwrap_or_else(|| parse_quote!(::ringsteal));
    let builder = builder(&krate, args);
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = f;
    let name = sig.ident.clone();
    let inner = sig.clone();
    let mut outer = sig;
    outer.asyncness = None;
    // The parameters callers pass, renamed (the inner function keeps their patterns).
    let skip = usize::from(matches!(params.handle, Handle::Taken));
    // A plain name keeps its name (rustdoc shows it), any other pattern gets one. (check.rs
    // refuses receivers, so every parameter after the handle is a typed one.)
    // Attributes on a parameter stay on it (another attribute macro may read them: `#[case]`
    // under `rstest`, a lint's `allow`); check.rs refuses `cfg` there.
    let passed: Vec<(Vec<Attribute>, Ident, Type)> = outer
        .inputs
        .iter()
        .skip(skip)
        .take(params.passed)
        .enumerate()
        .filter_map(|(i, arg)| match arg {
            FnArg::Typed(p) => {
                let name = match &*p.pat {
                    Pat::Ident(id) if id.by_ref.is_none() && id.subpat.is_none() => {
                        id.ident.clone()
                    }
                    _ => format_ident!("__ringsteal_arg{}", i),
                };
                Some((p.attrs.clone(), name, (*p.ty).clone()))
            }
            FnArg::Receiver(_) => None,
        })
        .collect();
    outer.inputs = passed
        .iter()
        .map(|(attrs, name, ty)| -> FnArg { parse_quote!(#(#attrs)* #name: #ty) })
        .collect();
    let passed = passed.iter().map(|(_, name, _)| name);
    let call = match params.handle {
        Handle::None => quote!(move |_| #name(#(#passed),*)),
        Handle::Taken => {
            quote!(move |__ringsteal_handle| #name(__ringsteal_handle, #(#passed),*))
        }
    };
    let (run, test_attr) = match args.kind {
        Kind::Main => (quote!(#krate::__private::run_main), quote!()),
        Kind::Test => (
            quote!(#krate::__private::run_test),
            quote!(#[::core::prelude::v1::test]),
        ),
    };
    quote! {
        #test_attr
        #(#attrs)*
        #vis #outer {
            #inner #block
            #run(#builder, #call)
        }
    }
}

/// `Runtime::builder()` with the arguments applied.
fn builder(krate: &Path, args: &Args) -> TokenStream {
    let mut b = quote!(#krate::Runtime::builder());
    let paused = matches!(args.start_paused, Some((true, _)));
    match args.shards {
        Some((n, _)) => b.extend(quote!(.shards(#n))),
        // A paused clock needs a single shard; otherwise the builder's default applies: one
        // shard per available CPU.
        None if paused => b.extend(quote!(.shards(1))),
        None => {}
    }
    match args.idle {
        Some(Idle::Park) => b.extend(quote!(.idle(#krate::IdleStrategy::Park))),
        Some(Idle::Spin(nanos)) => b.extend(quote!(
            .idle(#krate::IdleStrategy::SpinThenPark(::core::time::Duration::from_nanos(#nanos)))
        )),
        None => {}
    }
    let wake = match args.wake {
        Some(Wake::Auto) => Some(quote!(Auto)),
        Some(Wake::MsgRing) => Some(quote!(MsgRing)),
        Some(Wake::EventFd) => Some(quote!(EventFd)),
        None => None,
    };
    if let Some(w) = wake {
        b.extend(quote!(.wake(#krate::WakeMechanism::#w)));
    }
    if paused {
        b.extend(quote!(.start_paused(true)));
    }
    b
}
