//! The code the attributes emit: the `async fn` becomes a plain function (the same name,
//! parameters and return type) that builds the runtime from the arguments and runs the body,
//! as an `async move` block, with `block_on`.
//!
//! An async block rather than an inner `async fn` (as tokio's attributes do): the body stays
//! inside the function it was written in, so `Self` in an associated function, the
//! function's lifetime parameters and its parameters' patterns all mean what they meant,
//! and no call names the function (a parameter of the same name cannot shadow it).
//!
//! May not: decide what is allowed (`args.rs`, `check.rs`).

use proc_macro2::TokenStream;
use quote::quote;
use syn::{parse_quote, FnArg, ItemFn, Path};

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
    let mut outer = sig;
    outer.asyncness = None;
    // The runtime's handle, if taken, is not the caller's to pass: it comes out of the
    // signature and is bound, with its pattern and attributes, inside the body.
    let take_handle = match params.handle {
        Handle::None => quote!(),
        Handle::Taken => match outer.inputs.iter().next() {
            Some(FnArg::Typed(p)) => {
                let (attrs, pat, ty) = (&p.attrs, &p.pat, &p.ty);
                let bind = quote!(#(#attrs)* let #pat: #ty = __ringsteal_handle;);
                outer.inputs = outer.inputs.into_iter().skip(1).collect();
                bind
            }
            // check.rs takes a handle only as a typed first parameter.
            _ => quote!(),
        },
    };
    // Every other parameter stays as written (pattern, type, attributes): the block moves
    // what it uses.
    let body = block.stmts;
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
            #run(#builder, move |__ringsteal_handle| async move {
                #take_handle
                #(#body)*
            })
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
