#!/usr/bin/env python3
"""Checks the book that mdBook built (scripts/book.sh runs it).

  book_check.py links OUT_DIR
      Every internal reference of every built page resolves: <a href>, <img src>, <link href>,
      <script src>, <iframe src> (relative paths, after the page's <base>), the file exists
      inside OUT_DIR, a #fragment names an id (or <a name>) on the target page, and an SVG
      image is well-formed XML. External links (http:, https:, mailto:, ...) are not fetched.
      Fails with the list of broken ones.

  book_check.py doctested SRC_DIR LIB_RS
      Every chapter of SRC_DIR with a Rust code block is included by LIB_RS (the facade's
      `mod book`, `include_str!("../../../book/src/<chapter>.md")`), so that `cargo test --doc`
      compiles and runs its blocks. Fails with the chapters that no test covers.

  book_check.py --self-test
      Both checks on small fabricated inputs, good and broken: a checker that cannot fail
      checks nothing.

Standard library only (Python 3.8+).
"""

from __future__ import annotations

import argparse
import html.parser
import pathlib
import posixpath
import re
import sys
import tempfile
import urllib.parse
import xml.etree.ElementTree as ET

# Attributes that reference another file, by tag.
REF_ATTRS = {"a": "href", "img": "src", "link": "href", "script": "src", "iframe": "src",
             "source": "src"}


class Page(html.parser.HTMLParser):
    """The ids and the references of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.refs: list[tuple[str, str]] = []  # (tag, value)
        self.base: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        if tag == "base" and a.get("href") is not None and self.base is None:
            self.base = a["href"]
        attr = REF_ATTRS.get(tag)
        if attr and a.get(attr) is not None:
            self.refs.append((tag, a[attr]))

    handle_startendtag = handle_starttag


def parse(path: pathlib.Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    page.close()
    return page


def check_links(out: pathlib.Path) -> list[str]:
    """Broken internal references of the built book at `out`, one line each."""
    out = out.resolve()
    pages = {p: parse(p) for p in sorted(out.rglob("*.html"))}
    if not pages:
        return [f"{out}: no HTML pages (did the build run?)"]
    broken = []
    svg_ok: dict[pathlib.Path, str] = {}  # image -> parse error ("" if well-formed)
    for path, page in pages.items():
        rel_page = path.relative_to(out).as_posix()
        # A <base href="/"> (mdBook's 404 page) makes references relative to the site root.
        if page.base is not None and page.base.startswith("/"):
            base_dir = page.base.strip("/")
        else:
            base_dir = posixpath.dirname(rel_page)
        for tag, ref in page.refs:
            parts = urllib.parse.urlsplit(ref)
            if parts.scheme or ref.startswith("//"):
                continue  # external: not fetched
            target_rel = urllib.parse.unquote(parts.path)
            if target_rel:
                joined = posixpath.normpath(posixpath.join(base_dir, target_rel))
            else:
                joined = rel_page
            where = f"{rel_page}: <{tag} {REF_ATTRS[tag]}=\"{ref}\">"
            if joined == ".." or joined.startswith("../"):
                broken.append(f"{where} leads out of the book ({joined})")
                continue
            target = out / joined
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{where}: no such file {joined}")
                continue
            if target.suffix == ".svg" and tag == "img":
                if target not in svg_ok:
                    try:
                        ET.parse(target)
                        svg_ok[target] = ""
                    except ET.ParseError as e:
                        svg_ok[target] = str(e)
                if svg_ok[target]:
                    broken.append(f"{where}: {joined} is not well-formed XML ({svg_ok[target]})")
            fragment = urllib.parse.unquote(parts.fragment)
            if fragment and target.suffix == ".html":
                ids = pages[target.resolve()].ids if target.resolve() in pages else parse(target).ids
                if fragment not in ids:
                    broken.append(f"{where}: no id \"{fragment}\" in {target.relative_to(out).as_posix()}")
    # mdBook writes each image twice (the picture and its enlarged view): report it once.
    return list(dict.fromkeys(broken))


FENCE = re.compile(r"^\s*(```+|~~~+)\s*([^\s`]*)")
INCLUDE = re.compile(r'include_str!\("[./]*book/src/([^"]+\.md)"\)')


def rust_blocks(md: str) -> int:
    """Code blocks whose info string starts with `rust` (rust, rust,no_run, ...)."""
    count, fence = 0, None
    for line in md.splitlines():
        m = FENCE.match(line)
        if not m:
            continue
        if fence is None:
            fence = m.group(1)
            if m.group(2).split(",")[0] == "rust":
                count += 1
        elif m.group(1).startswith(fence) and not m.group(2):
            fence = None
    return count


def check_doctested(src: pathlib.Path, lib_rs: pathlib.Path) -> list[str]:
    """Chapters with Rust blocks that `lib_rs` does not include for doctests."""
    included = set(INCLUDE.findall(lib_rs.read_text()))
    missing = []
    for md in sorted(src.rglob("*.md")):
        rel = md.relative_to(src).as_posix()
        n = rust_blocks(md.read_text())
        if n and rel not in included:
            missing.append(f"{rel}: {n} Rust code block(s) that no test compiles "
                           f"(add it to `mod book` in {lib_rs})")
    return missing


def self_test() -> int:
    failures = 0

    def expect(what: str, got: list[str], want_substrings: list[str]) -> None:
        nonlocal failures
        ok = len(got) == len(want_substrings) and all(
            any(w in g for g in got) for w in want_substrings)
        print(f"self-test {'ok' if ok else 'WRONG'}: {what}")
        if not ok:
            failures += 1
            print("  got:", *got, sep="\n    ")

    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "book"
        (out / "img").mkdir(parents=True)
        (out / "img" / "a.svg").write_text("<svg/>")
        (out / "index.html").write_text(
            '<h1 id="top">t</h1><a href="ch.html#sec">ok</a><img src="img/a.svg">'
            '<a href="https://example.org/x">external</a><a href="#top">self</a>')
        (out / "ch.html").write_text('<h2 id="sec">s</h2><a name="old"></a><a href="#old">x</a>'
                                     '<a href="./">dir</a><a href="img/a.svg#frag">svg</a>')
        (out / "404.html").write_text('<base href="/"><img src="img/a.svg">')
        expect("a sound book", check_links(out), [])
        (out / "bad.html").write_text(
            '<a href="missing.html">a</a><img src="img/b.svg"><a href="ch.html#nope">b</a>'
            '<a href="../outside.md">c</a><a href="#gone">d</a><img src="img/bad.svg">')
        (out / "img" / "bad.svg").write_text("<svg><g></svg>")
        expect("a broken page, one line per broken reference", check_links(out),
               ["no such file missing.html", "no such file img/b.svg", 'no id "nope" in ch.html',
                "leads out of the book", 'no id "gone" in bad.html', "img/bad.svg is not well-formed"])

        src = pathlib.Path(tmp) / "src"
        src.mkdir()
        (src / "a.md").write_text("# A\n\n```rust\nfn main() {}\n```\n")
        (src / "b.md").write_text("# B\n\n```text\nrust\n```\n\n````md\n```rust\n```\n````\n")
        (src / "c.md").write_text("# C\n\n```rust,no_run\nfn main() {}\n```\n")
        lib = pathlib.Path(tmp) / "lib.rs"
        lib.write_text('#[doc = include_str!("../../../book/src/a.md")]\nstruct A;\n')
        expect("a chapter with Rust blocks outside `mod book`", check_doctested(src, lib), ["c.md: 1"])
    if failures:
        print("book_check self-test: the checker did not behave as required", file=sys.stderr)
        return 1
    print("book_check self-test: both checks find what they must")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--self-test", action="store_true")
    sub = ap.add_subparsers(dest="cmd")
    links = sub.add_parser("links", help="internal links and images of a built book")
    links.add_argument("out", help="mdBook's output directory")
    doc = sub.add_parser("doctested", help="chapters with Rust blocks covered by doctests")
    doc.add_argument("src", help="the book's src directory")
    doc.add_argument("lib_rs", help="the file whose `mod book` includes the chapters")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if args.cmd == "links":
        problems = check_links(pathlib.Path(args.out))
        what = "broken internal link(s) or image(s)"
    elif args.cmd == "doctested":
        problems = check_doctested(pathlib.Path(args.src), pathlib.Path(args.lib_rs))
        what = "chapter(s) whose Rust blocks no test compiles"
    else:
        ap.error("a command (links, doctested) or --self-test")
    for p in problems:
        print(f"  {p}")
    if problems:
        print(f"book_check: {len(problems)} {what}", file=sys.stderr)
        return 1
    print(f"book_check {args.cmd}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
