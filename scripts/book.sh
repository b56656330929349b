#!/usr/bin/env bash
# Builds the book (book/) with mdBook and checks it:
#   * every internal link, #anchor and image of every built page resolves, and every SVG
#     image is well-formed (scripts/book_check.py links; the checker's --self-test first);
#   * every chapter with a Rust code block is compiled by a test (`mod book` in
#     crates/ringsteal/src/lib.rs, run by `cargo test --doc`; scripts/book_check.py doctested).
# Fails with the list of what is broken.
#
#   scripts/book.sh                 # build into target/book (or $CARGO_TARGET_DIR/book), check
#   BOOK_OUT=DIR scripts/book.sh    # build into DIR instead (the Pages workflow publishes it)
#
# mdBook is pinned: if `mdbook` on PATH is not MDBOOK_VERSION, it is installed with
# `cargo install --locked` into ~/.cargo/bin (without its `serve`/`watch` features, which this
# script does not use: about 2 minutes of compiling on 2 cores, once per machine).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

MDBOOK_VERSION=0.5.4

log() { printf '\n==> %s\n' "$*" >&2; }

if [ "$(mdbook --version 2>/dev/null)" != "mdbook v$MDBOOK_VERSION" ]; then
    log "installing mdBook $MDBOOK_VERSION (found: $(mdbook --version 2>/dev/null || echo none))"
    cargo install mdbook --version "$MDBOOK_VERSION" --locked --no-default-features --features search
    export PATH="$HOME/.cargo/bin:$PATH"
fi

out="${BOOK_OUT:-${CARGO_TARGET_DIR:-target}/book}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

log "book_check.py --self-test"
python3 scripts/book_check.py --self-test

log "mdbook build book -d $out"
# A fresh directory: a page left from an earlier build could satisfy a link to a page that no
# longer exists.
find "$out" -mindepth 1 -delete
mdbook build book -d "$out"

log "internal links and images"
status=0
python3 scripts/book_check.py links "$out" || status=1
log "chapters' Rust code blocks under cargo test"
python3 scripts/book_check.py doctested book/src crates/ringsteal/src/lib.rs || status=1
exit "$status"
