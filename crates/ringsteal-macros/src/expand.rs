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
    // The closure's parameter, at a mixed-site span: the user's body, inside the closure,
    // neither sees it nor has a parameter of that name shadowed by it.
    let handle = proc_macro2::Ident::new("__ringsteal_handle", proc_macro2::Span::mixed_site());
    // The runtime's handle, if taken, is not the caller's to pass: it comes out of the
    // signature and is bound, with its pattern and attributes, inside the body.
    let take_handle = match params.handle {
        Handle::None => quote!(),
        Handle::Taken => match outer.inputs.iter().next() {
            Some(FnArg::Typed(p)) => {
                let (attrs, pat, ty) = (&p.attrs, &p.pat, &p.ty);
                let bind = quote!(#(#attrs)* let #pat: #ty = #handle;);
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
    let body_tokens = quote!(#(#body)*);
    let (run, test_attr) = match args.kind {
        Kind::Main => (quote!(#krate::__private::run_main), quote!()),
        Kind::Test => (
            quote!(#krate::__private::run_test),
            quote!(#[::core::prelude::v1::test]),
        ),
    };
    // Both blocks take the braces of the user's body (their span): the compiler and clippy
    // then see the function as written, not as made by the macro, and their lints reach it
    // (an unused function, a missing doc, a lint inside the body), as with tokio's.
    let brace = block.brace_token;
    let mut inner = TokenStream::new();
    brace.surround(&mut inner, |t| {
        t.extend(take_handle);
        t.extend(body_tokens.clone());
    });
    let mut fn_body = TokenStream::new();
    brace.surround(&mut fn_body, |t| {
        // The call is located at the body's last statement, as tokio's is: a tail whose type
        // is not the function's return type is then reported there, not at the attribute.
        let (start, end) = last_stmt_spans(&body_tokens);
        let path = respan(run, proc_macro2::Span::call_site().located_at(start));
        let mut args = proc_macro2::Group::new(
            proc_macro2::Delimiter::Parenthesis,
            quote!(#builder, move |#handle| async move #inner),
        );
        args.set_span(proc_macro2::Span::call_site().located_at(end));
        // `return`, as tokio's: the call is at the user's last statement, and a tail call
        // would trip `clippy::implicit_return` there.
        t.extend(quote!(
            #[allow(clippy::needless_return)]
            {
                return #path #args;
            }
        ));
    });
    quote! {
        #test_attr
        #(#attrs)*
        #vis #outer #fn_body
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

/// `ts` with every token at `span`.
fn respan(ts: TokenStream, span: proc_macro2::Span) -> TokenStream {
    ts.into_iter()
        .map(|mut t| {
            t.set_span(span);
            t
        })
        .collect()
}

/// The first and last spans of the body's last statement (the tokens after the last `;`, or
/// the statement that `;` ends).
fn last_stmt_spans(body: &TokenStream) -> (proc_macro2::Span, proc_macro2::Span) {
    let tokens: Vec<proc_macro2::TokenTree> = body.clone().into_iter().collect();
    let semis: Vec<usize> = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| matches!(t, proc_macro2::TokenTree::Punct(p) if p.as_char() == ';'))
        .map(|(i, _)| i)
        .collect();
    let (from, to) = match semis.last() {
        Some(&l) if l + 1 < tokens.len() => (l + 1, tokens.len() - 1),
        Some(&l) => (semis.len().checked_sub(2).map_or(0, |k| semis[k] + 1), l),
        None if tokens.is_empty() => {
            return (
                proc_macro2::Span::call_site(),
                proc_macro2::Span::call_site(),
            )
        }
        None => (0, tokens.len() - 1),
    };
    (tokens[from].span(), tokens[to].span())
}
