//! What the attribute accepts as its function: an `async fn`, not generic, taking nothing or
//! one `RuntimeHandle` (and, for a `#[ringsteal::main]` function not named `main`, the
//! parameters its caller passes). Every error points at the offending token and says what is allowed.
//!
//! May not: parse the attribute's arguments (`args.rs`) or emit code (`expand.rs`).

use syn::spanned::Spanned;
use syn::{FnArg, GenericParam, ItemFn, Type, WherePredicate};

use crate::args::Kind;

/// Whether the function takes the runtime's handle.
pub(crate) enum Handle {
    None,
    Taken,
}

/// What the function's parameters are: the runtime's handle (first, if taken), then the
/// parameters its callers pass (a `#[ringsteal::main]` function not named `main` only).
pub(crate) struct Params {
    pub(crate) handle: Handle,
}

/// Checks `f` for `kind`; returns what its parameters are.
pub(crate) fn check(kind: Kind, f: &ItemFn) -> syn::Result<Params> {
    let attr = kind.attr();
    let sig = &f.sig;
    if sig.asyncness.is_none() {
        return Err(syn::Error::new(
            sig.fn_token.span,
            format!("{attr} goes on an `async fn`: add `async` before `fn`"),
        ));
    }
    if let Some(c) = &sig.constness {
        return Err(syn::Error::new(
            c.span,
            format!("{attr} cannot be used on a `const fn`"),
        ));
    }
    if let Some(u) = &sig.unsafety {
        return Err(syn::Error::new(
            u.span,
            format!("{attr} cannot be used on an `unsafe fn`: nothing calls it in an unsafe block"),
        ));
    }
    // A function whose caller passes parameters may borrow through them: its lifetime
    // parameters (and `where` clauses between lifetimes) are its own to have. Types and
    // constants need a caller to choose them, and `main` or a test has none.
    let passes_parameters = kind == Kind::Main && sig.ident != "main";
    let refused = sig
        .generics
        .params
        .iter()
        .find(|p| !(passes_parameters && matches!(p, GenericParam::Lifetime(_))));
    let refused_clause = sig.generics.where_clause.as_ref().filter(|w| {
        !(passes_parameters
            && w.predicates
                .iter()
                .all(|p| matches!(p, WherePredicate::Lifetime(_))))
    });
    if refused.is_some() || refused_clause.is_some() {
        // The first parameter refused, or else the `where` (a clause alone has no `<>` to
        // point at).
        let at = refused
            .map(Spanned::span)
            .or(refused_clause.map(|w| w.where_token.span))
            .unwrap_or_else(|| sig.generics.span());
        let message =
            match refused {
                Some(GenericParam::Lifetime(_)) => {
                    format!(
                "{attr} cannot be used on a function with lifetime parameters: {} takes no \
                 parameter to borrow from",
                if kind == Kind::Main { "`main`" } else { "a test" }
            )
                }
                _ if passes_parameters => {
                    format!("{attr} cannot be used on a generic function: make the types concrete")
                }
                _ => format!(
                    "{attr} cannot be used on a generic function: it has no caller to choose the \
                 types"
                ),
            };
        return Err(syn::Error::new(at, message));
    }
    if let Some(v) = &sig.variadic {
        return Err(syn::Error::new(
            v.span(),
            format!("{attr} cannot be used on a variadic function"),
        ));
    }
    if kind == Kind::Test {
        if let Some(a) = f.attrs.iter().find(|a| a.path().is_ident("test")) {
            return Err(syn::Error::new(
                a.path().span(),
                "#[ringsteal::test] already makes this a #[test]: remove this attribute",
            ));
        }
    }
    let what = match kind {
        Kind::Main => "`main`",
        Kind::Test => "a test",
    };
    let only_handle = format!(
        "{what} may take no parameter or one `RuntimeHandle` (the runtime it runs on), nothing else"
    );
    let mut params = sig.inputs.iter().peekable();
    let handle = match params.peek() {
        Some(FnArg::Typed(p)) if is_runtime_handle(&p.ty) => {
            params.next();
            Handle::Taken
        }
        _ => Handle::None,
    };
    // A function other than `main` under `#[ringsteal::main]` is called by the program (a
    // plain `main` that dispatches to it, as with tokio's): its parameters are passed on.
    let mut passed = 0;
    for p in params {
        match p {
            FnArg::Typed(_) if passes_parameters => passed += 1,
            FnArg::Receiver(r) if passes_parameters => {
                return Err(syn::Error::new(
                    r.span(),
                    format!("{attr} cannot be used on a method: make it a free function"),
                ))
            }
            FnArg::Receiver(r) => return Err(syn::Error::new(r.span(), only_handle)),
            FnArg::Typed(p) => {
                let at = if matches!(handle, Handle::None) && passed == 0 {
                    p.ty.span()
                } else {
                    p.span()
                };
                return Err(syn::Error::new(at, only_handle));
            }
        }
    }
    Ok(Params { handle })
}

/// True for `RuntimeHandle` and any path ending in it (`ringsteal::RuntimeHandle`). The
/// generated call passes a real `RuntimeHandle`, so an alias naming another type still fails,
/// as a type error.
pub(crate) fn is_runtime_handle(ty: &Type) -> bool {
    match ty {
        Type::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "RuntimeHandle" && s.arguments.is_empty()),
        Type::Group(g) => is_runtime_handle(&g.elem),
        Type::Paren(p) => is_runtime_handle(&p.elem),
        _ => false,
    }
}
