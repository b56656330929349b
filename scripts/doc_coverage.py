#!/usr/bin/env python3
"""API-doc coverage of the published crates: every public item has a doc comment, and every
public type (struct, enum, union, trait) has an example: a doctest in its doc comment (a fence
with no info string, or `rust`, `no_run`, `should_panic`; not `ignore`, `text` or
`compile_fail`).

`#![deny(missing_docs)]` already refuses an undocumented item at compile time; this script is
the second half, the examples, which no lint checks. It reads rustdoc's JSON output (a nightly
rustdoc feature, so it needs the nightly toolchain; `cargo +nightly rustdoc` builds it) and
prints one line per gap, `crate path::Item: what is missing`, then a total. It exits 1 when
anything is missing, 0 when coverage is complete.

Usage: python3 scripts/doc_coverage.py [--no-build] [CRATE...]
    --no-build  read target/doc/*.json as the last run left them
    CRATE       only these crates (default: every published crate)
"""

import json
import os
import re
import subprocess
import sys

# Everything the `ringsteal` facade re-exports, and the facade itself.
CRATES = [
    "ringsteal",
    "ringsteal-rt",
    "ringsteal-fs",
    "ringsteal-net",
    "ringsteal-process",
    "ringsteal-signal",
    "ringsteal-compat",
    "ringsteal-macros",
    "ringsteal-uring",
]

# Kinds that are "types" and need an example; kinds that need a doc comment.
TYPE_KINDS = {"struct", "enum", "union", "trait"}
DOC_KINDS = TYPE_KINDS | {
    "function",
    "type_alias",
    "constant",
    "static",
    "macro",
    "proc_macro",
    "module",
    "struct_field",
    "variant",
    "assoc_const",
    "assoc_type",
}

# Types that need no example of their own, each with the reason. The kernel's structs are a
# field-for-field mirror of <linux/io_uring.h> (every field documented, the layout checked by
# ringsteal-uring's `abi` test); an example per struct would show nothing the module's does.
EXAMPLE_EXEMPT = {
    "crates/ringsteal-uring/src/abi/": "the kernel's io_uring structs, shown in use by the abi module's example",
}

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def build_json(krate):
    """Runs nightly rustdoc with JSON output for one crate (all its features on)."""
    cmd = [
        "cargo", "+nightly", "rustdoc", "-q", "-p", krate, "--all-features",
        "--", "-Z", "unstable-options", "--output-format", "json",
    ]
    subprocess.run(cmd, cwd=ROOT, check=True)


# A fence that opens a doctest rustdoc compiles (and, but for `no_run`, runs): no info string,
# or one of Rust's attributes. `text`, `ignore`, `compile_fail` and other languages do not count.
DOCTEST_FENCE = re.compile(r"^\s*```(?:rust)?(?:,?(?:rust|no_run|should_panic|edition\d+))*\s*$", re.M)


def has_example(docs):
    """Whether the doc comment holds a doctest."""
    return DOCTEST_FENCE.search(docs) is not None


def item_paths(index, root_id):
    """Public paths of the crate's items, walking modules from the root (name for display)."""
    paths = {root_id: [index[str(root_id)]["name"]]}

    def walk(mod_id, prefix, seen):
        if mod_id in seen:
            return
        seen.add(mod_id)
        for child in index[str(mod_id)]["inner"]["module"]["items"]:
            item = index.get(str(child))
            if item is None:
                continue
            kind = next(iter(item["inner"]))
            if kind == "use":
                use = item["inner"]["use"]
                target = index.get(str(use["id"])) if use.get("id") is not None else None
                if target is None:
                    continue
                if use["is_glob"] and "module" in target["inner"]:
                    walk(target["id"], prefix, seen)
                else:
                    paths.setdefault(target["id"], prefix + [use["name"]])
                    if "module" in target["inner"]:
                        walk(target["id"], prefix + [use["name"]], seen)
                continue
            paths.setdefault(child, prefix + [item["name"]])
            if kind == "module":
                walk(child, prefix + [item["name"]], seen)

    walk(root_id, [], set())
    paths[root_id] = [index[str(root_id)]["name"]]
    return paths


def check(krate):
    """Returns the gaps of one crate as (path, what) pairs, and the counts checked."""
    data = json.load(open(os.path.join(ROOT, "target", "doc", krate.replace("-", "_") + ".json")))
    if data.get("format_version", 0) < 40:
        sys.exit(
            f"rustdoc JSON format {data.get('format_version')} is older than this script "
            "reads (40+): update the nightly toolchain"
        )
    index = data["index"]
    paths = item_paths(index, data["root"])

    # Items of trait impls inherit the trait's docs; synthetic and blanket impls are rustdoc's.
    parent = {}
    skip = set()
    trait_items = set()
    for item in index.values():
        impl = item["inner"].get("impl")
        if impl is None:
            continue
        if impl["trait"] is not None or impl["is_synthetic"] or impl["blanket_impl"] is not None:
            skip.update(impl["items"])
            continue
        owner = impl["for"].get("resolved_path", {}).get("id")
        for child in impl["items"]:
            parent[child] = owner
    for item in index.values():
        inner = item["inner"]
        children = []
        if "struct" in inner:
            kind = inner["struct"]["kind"]
            if isinstance(kind, dict) and "plain" in kind:
                children = kind["plain"]["fields"]
        elif "enum" in inner:
            children = inner["enum"]["variants"]
        elif "trait" in inner:
            children = inner["trait"]["items"]
            trait_items.update(children)
        elif "variant" in inner:
            kind = inner["variant"]["kind"]
            if isinstance(kind, dict) and "struct" in kind:
                children = kind["struct"]["fields"]
        for child in children:
            parent.setdefault(child, item["id"])

    def reachable(item_id, depth=0):
        """Whether a user can name the item: a public path, or a member of such an item
        (the private half of a sealed trait is not)."""
        if item_id in paths:
            return True
        owner = parent.get(item_id)
        return owner is not None and depth < 8 and reachable(owner, depth + 1)

    def display(item_id):
        if item_id in paths:
            return "::".join(paths[item_id])
        owner = parent.get(item_id)
        name = index[str(item_id)]["name"] or "?"
        return f"{display(owner)}::{name}" if owner is not None else name

    gaps = []
    documented = examples = types = total = 0
    for _, item in sorted(index.items(), key=lambda kv: int(kv[0])):
        if item["crate_id"] != 0 or item["id"] in skip or not reachable(item["id"]):
            continue
        kind = next(iter(item["inner"]))
        if kind not in DOC_KINDS:
            continue
        if kind == "struct_field":
            if item["visibility"] != "public" or (item["name"] or "").isdigit():
                continue
        elif kind != "variant" and item["id"] not in trait_items and item["visibility"] != "public":
            continue
        total += 1
        docs = (item["docs"] or "").strip()
        if docs:
            documented += 1
        else:
            gaps.append((display(item["id"]), "no doc comment"))
        span = (item.get("span") or {}).get("filename", "")
        if kind in TYPE_KINDS and not any(span.startswith(p) for p in EXAMPLE_EXEMPT):
            types += 1
            if has_example(docs):
                examples += 1
            else:
                gaps.append((display(item["id"]), f"{kind} without an example"))
    return gaps, (documented, total, examples, types)


def main(argv):
    build = "--no-build" not in argv
    crates = [a for a in argv if not a.startswith("--")] or CRATES
    missing = 0
    for krate in crates:
        if build:
            build_json(krate)
        gaps, (documented, total, examples, types) = check(krate)
        print(f"{krate}: {documented}/{total} items documented, {examples}/{types} types with an example")
        for path, what in sorted(gaps):
            print(f"  {krate} {path}: {what}")
        missing += len(gaps)
    if missing:
        print(f"{missing} gaps in the API docs")
        return 1
    print("API docs complete: every public item documented, every public type with an example")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
