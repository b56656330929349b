//! What the installed `linux/io_uring.h` defines: every macro, every enum member, and every
//! struct with its fields, read from the preprocessor's output (`cc -E -dD`), so comments,
//! `#if` blocks and helper macros such as `__DECLARE_FLEX_ARRAY` are already resolved.
//!
//! Owns: finding the header through the C compiler and listing its names. May not: decide what
//! a name means for Rust; the comparison lives in `compare.rs`.

use std::path::PathBuf;

use super::cc;

/// A struct the header defines.
#[derive(Debug, Clone)]
pub(crate) struct CStruct {
    pub(crate) name: String,
    pub(crate) fields: Vec<CField>,
}

/// One field of a header struct. Members of anonymous unions and structs are flattened, as C
/// itself names them (`sqe->addr2`, `sqe->cmd_op`); a member of a *named* nested aggregate is
/// `outer.inner`.
#[derive(Debug, Clone)]
pub(crate) struct CField {
    pub(crate) name: String,
    /// Declared with `[N]` (or `[]`).
    pub(crate) array: bool,
    /// A flexible array member (`[]`): it has an offset and an element size, but no `sizeof`.
    pub(crate) flex: bool,
    /// Its (element) type is a struct or union, so it has no signedness.
    pub(crate) aggregate: bool,
}

/// Everything the header defines, in header order.
#[derive(Debug, Default)]
pub(crate) struct Header {
    pub(crate) path: PathBuf,
    pub(crate) macros: Vec<String>,
    pub(crate) enum_members: Vec<String>,
    pub(crate) structs: Vec<CStruct>,
}

impl Header {
    /// True if the header defines `name` as a macro or an enum member.
    pub(crate) fn defines(&self, name: &str) -> bool {
        self.macros.iter().any(|m| m == name) || self.enum_members.iter().any(|m| m == name)
    }
}

/// Preprocesses `#include <linux/io_uring.h>` and lists what that one file defines.
///
/// Panics with an explanation (install `linux-libc-dev`) when the header cannot be found: a
/// missing header is a broken machine, not a reason to skip the check.
pub(crate) fn read() -> Header {
    let out = cc::preprocess("#include <linux/io_uring.h>\n").unwrap_or_else(|err| {
        panic!(
            "could not preprocess <linux/io_uring.h>: {err}\n\
             The ABI test needs the kernel's userspace headers. Install them with \
             `apt-get install linux-libc-dev` (Debian/Ubuntu; `kernel-headers` on Fedora, \
             `linux-api-headers` on Arch) and a C compiler (`apt-get install gcc`)."
        )
    });
    let mut header = Header::default();
    let mut in_header = false;
    let mut code = String::new();
    for line in out.lines() {
        if let Some(file) = line_marker_file(line) {
            in_header = file.ends_with("linux/io_uring.h");
            if in_header && header.path.as_os_str().is_empty() {
                header.path = PathBuf::from(file);
            }
            continue;
        }
        if !in_header {
            continue;
        }
        if let Some(rest) = line.strip_prefix("#define ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let function_like = rest[name.len()..].starts_with('(');
            let has_value = !rest[name.len()..].trim().is_empty();
            if !function_like && has_value {
                header.macros.push(name);
            }
        } else if !line.starts_with('#') {
            code.push_str(line);
            code.push('\n');
        }
    }
    assert!(
        !header.path.as_os_str().is_empty(),
        "the preprocessor output names no linux/io_uring.h: is the header empty?"
    );
    parse_code(&tokenize(&code), &mut header);
    header
}

/// `# 12 "/usr/include/linux/io_uring.h" 1 3 4` -> the quoted path.
fn line_marker_file(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("# ")?;
    if !rest.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let start = rest.find('"')? + 1;
    let end = start + rest[start..].find('"')?;
    Some(&rest[start..end])
}

fn tokenize(code: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut chars = code.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_ascii_alphanumeric() || c == '_' {
                    word.push(c);
                    chars.next();
                } else {
                    break;
                }
            }
            tokens.push(word);
        } else if c == '"' {
            // String literals (only `extern "C"`, which C code never sees) are one token.
            let mut lit = String::new();
            lit.push(c);
            chars.next();
            for c in chars.by_ref() {
                lit.push(c);
                if c == '"' {
                    break;
                }
            }
            tokens.push(lit);
        } else {
            tokens.push(c.to_string());
            chars.next();
        }
    }
    tokens
}

fn is_ident(tok: &str) -> bool {
    tok.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
}

/// Walks the top level: `struct NAME { ... };` and `enum [NAME] { ... };`; skips the rest.
fn parse_code(toks: &[String], header: &mut Header) {
    let mut i = 0;
    while i < toks.len() {
        let kw = toks[i].as_str();
        if (kw == "struct" || kw == "union")
            && toks.get(i + 1).is_some_and(|t| is_ident(t))
            && toks.get(i + 2).is_some_and(|t| t == "{")
        {
            let name = toks[i + 1].clone();
            let end = matching_brace(toks, i + 2);
            let mut fields = Vec::new();
            parse_members(&toks[i + 3..end], "", &mut fields);
            header.structs.push(CStruct { name, fields });
            i = end + 1;
        } else if kw == "enum" {
            let open = if toks.get(i + 1).is_some_and(|t| t == "{") {
                i + 1
            } else {
                i + 2
            };
            if toks.get(open).is_some_and(|t| t == "{") {
                let end = matching_brace(toks, open);
                for item in split_top_level(&toks[open + 1..end], ",") {
                    if let Some(first) = item.first().filter(|t| is_ident(t)) {
                        header.enum_members.push(first.clone());
                    }
                }
                i = end + 1;
            } else {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
}

fn matching_brace(toks: &[String], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, t) in toks.iter().enumerate().skip(open) {
        match t.as_str() {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced braces in the preprocessed io_uring.h");
}

/// Splits `toks` at `sep` tokens that are not nested in braces, brackets or parentheses.
fn split_top_level<'a>(toks: &'a [String], sep: &str) -> Vec<&'a [String]> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (j, t) in toks.iter().enumerate() {
        match t.as_str() {
            "{" | "(" | "[" => depth += 1,
            "}" | ")" | "]" => depth -= 1,
            s if s == sep && depth == 0 => {
                parts.push(&toks[start..j]);
                start = j + 1;
            }
            _ => {}
        }
    }
    if start < toks.len() {
        parts.push(&toks[start..]);
    }
    parts
}

/// Parses the declarations inside a struct or union body into `out`.
fn parse_members(toks: &[String], prefix: &str, out: &mut Vec<CField>) {
    for decl in split_top_level(toks, ";") {
        let decl = strip_attributes(decl);
        if decl.is_empty() {
            continue;
        }
        let anonymous_block =
            (decl[0] == "struct" || decl[0] == "union") && decl.get(1).is_some_and(|t| t == "{");
        if anonymous_block {
            let end = matching_brace(&decl, 1);
            let inner = &decl[2..end];
            match decl.get(end + 1) {
                // `struct { ... } name;`: a named member of an unnamed type.
                Some(member) if is_ident(member) => {
                    if member.starts_with("__empty_") {
                        // The zero-size filler `__DECLARE_FLEX_ARRAY` puts before a flexible
                        // array inside a union; not an ABI field.
                        continue;
                    }
                    let nested = format!("{prefix}{member}.");
                    parse_members(inner, &nested, out);
                }
                _ => parse_members(inner, prefix, out),
            }
            continue;
        }
        let aggregate = decl[0] == "struct" || decl[0] == "union";
        let bracket = decl.iter().position(|t| t == "[");
        let name_at = match bracket {
            Some(b) => b - 1,
            None => decl.len() - 1,
        };
        let name = &decl[name_at];
        assert!(is_ident(name), "cannot parse the declaration {decl:?}");
        let flex = bracket.is_some_and(|b| decl.get(b + 1).is_some_and(|t| t == "]"));
        out.push(CField {
            name: format!("{prefix}{name}"),
            array: bracket.is_some(),
            flex,
            aggregate,
        });
    }
}

/// Removes `__attribute__((...))` from a declaration.
fn strip_attributes(decl: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < decl.len() {
        if decl[i] == "__attribute__" {
            i += 1;
            let mut depth = 0;
            while i < decl.len() {
                match decl[i].as_str() {
                    "(" => depth += 1,
                    ")" => {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        } else {
            out.push(decl[i].clone());
            i += 1;
        }
    }
    out
}
