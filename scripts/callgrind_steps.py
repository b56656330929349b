#!/usr/bin/env python3
"""Where the instructions of one operation go: a per-step breakdown of two callgrind runs.

    scripts/callgrind_steps.py SMALL.out LARGE.out OPS [--functions]

SMALL.out and LARGE.out are callgrind outputs of one probe at two sizes that differ by OPS
operations (as `scripts/bench_callgrind.sh --keep DIR` leaves them). Every instruction is
charged to the source line it came from, inlined code included (the release profile keeps
line tables), and each line to the function around it in that source file. ringsteal's own
lines are grouped into the steps of `STEPS` below; a line of the standard library or another
crate inlined into ringsteal code is charged to the function callgrind saw it in (its
symbol), which decides its step the same way. Prints instructions per operation:
(count(LARGE) - count(SMALL)) / OPS, by step, or with --functions by function.
"""
import re
import sys
from collections import Counter
from pathlib import Path

# (step, pattern): the first pattern that matches "path/of/file.rs:function" (ringsteal's own
# lines; paths below crates/ringsteal-rt/src are given from there) or, for inlined foreign
# lines and other libraries' functions, the symbol callgrind saw them in, decides the step.
STEPS = [
    ("op cell: allocate, free",
     r"^op/raw\.rs:(allocate|free|release\w*|take_data|new|drop|\?)$|OpCell<T>::allocate$|^util/block_cache\.rs"
     r"|^util/contain\.rs|block_cache::|op::raw::(free|release)$|contain::contain_panic"
     r"|AtomicWaker as core::ops::drop"),
    ("SQE preparation",
     r"^op/fs/read_write\.rs:(prepare|new|read_at)$|ringsteal-uring/src/opcode/"
     r"|^op/mod\.rs:(submit|runtime_flags_only|assemble|new)$|^driver/user_data\.rs:pointer$"
     r"|^op/raw\.rs:(set_expected|set_link_timeout)$|set_expected|^shard/context\.rs:with_shard$"),
    ("the op's runtime handle (SchedHandle)",
     r"^shard/sched\.rs:(new|drop)$|SchedHandle::new|SchedHandle as core::ops::drop"
     r"|^shard/context\.rs:with_shard_of$"),
    ("submission: SQ push, io_uring_enter",
     r"^driver/(submit|backlog)\.rs|^driver/mod\.rs:add_in_flight$"
     r"|ringsteal-uring/src/(sq|sys)\.rs"
     r"|ringsteal-uring/src/ring\.rs:(push|push_all|submit|submit_and_wait|enter|enter_getevents|sq_\w+)$"
     r"|^shard/run\.rs:submit$|^syscall$|Ring::(submit|push|push_all|enter_getevents|sq_\w+)$"
     r"|Driver>::(submit|push_or_defer|push_op)$|drop_in_place<core::result::Result<\(\),std::io::error::Error>>"),
    ("CQE dispatch: reap, record, release",
     r"^driver/(reap|user_data)\.rs|ringsteal-uring/src/cq\.rs"
     r"|ringsteal-uring/src/ring\.rs:(reap|pop_cqe|cq_\w+|taskrun_pending|flush_completions|\?)$"
     r"|^op/raw\.rs:(complete|more|record_more)$|Ring::(reap|pop_cqe|cq_\w+|taskrun_pending)$|Driver>::reap$"),
    ("waker: register, take, wake, queue",
     r"^sync/atomic_waker\.rs|^op/raw\.rs:(register|take_waker)$|^task/waker\.rs"
     r"|^task/state\.rs:(transition_to_notified_by_val|transition_to_notified_by_ref|ref_inc)$"
     r"|^shard/wake\.rs|^shard/sched\.rs:schedule$|^shard/mod\.rs:push_local$|^task/harness\.rs:schedule$"
     r"|OpHeader::register|task::waker::|Schedule>::schedule$|harness::schedule$|Shard::push_local$"
     r"|vec::drain::Drain"),
    ("op completion: results, data back",
     r"^op/mod\.rs|^op/raw\.rs:(op_results|results|is_complete|first_result)$"
     r"|^op/fs/read_write\.rs:complete$|<ringsteal_rt::op::Op<T> as core::future|OpHeader::(is_complete|op_results)$"),
    ("task poll: state, harness",
     r"^task/|harness::poll$|task::state::"),
    ("shard loop: tick, maintain, run queue",
     r"^shard/|^stats\.rs|^util/(mod|queue)\.rs|^shared/|crossbeam|shard::run::|Shard::|MainWake"),
    ("the reader's own code: loop, offsets, buffer, fd",
     r"^benches/|^buf/|ringsteal-fs/|^op/fd\.rs|callgrind_probe|FnOnce::call_once"),
]


def parse(path):
    """Self cost per (file, line, symbol) of a callgrind output with `positions: line`."""
    # Compressed names: files (fl, fi, fe, cfi, cfl) share one table, as do functions (fn,
    # cfn) and objects (ob, cob).
    files, functions, objects = {}, {}, {}
    table_of = {"fl": files, "fi": files, "fe": files, "cfi": files, "cfl": files,
                "fn": functions, "cfn": functions, "ob": objects, "cob": objects}
    cost = Counter()
    fl = fi = fn = None
    line = 0
    skip_next = False
    for raw in Path(path).read_text().splitlines():
        m = re.match(r"^(fl|fi|fe|fn|ob|cfn|cfl|cfi|cob)=(?:\((\d+)\))?\s*(.*)$", raw)
        if m:
            kind, ident, name = m.groups()
            table = table_of[kind]
            if ident is not None:
                if name:
                    table[ident] = name
                name = table.get(ident, name)
            if kind == "fl":
                fl, fi = name, None
            elif kind in ("fi", "fe"):
                fi = None if name == fl else name
            elif kind == "fn":
                fn = name
            continue
        if raw.startswith("calls="):
            skip_next = True
            continue
        m = re.match(r"^([+-]?\d+|\*)\s+(\d+)", raw)
        if not m:
            continue
        pos, n = m.groups()
        if pos == "*":
            pass
        elif pos[0] in "+-":
            line += int(pos)
        else:
            line = int(pos)
        if skip_next:
            skip_next = False
            continue
        cost[(fi or fl, line, fn)] += int(n)
    return cost


FN_RE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+\"C\"\s+)?fn\s+(\w+)")
_fn_maps = {}


def enclosing_fn(path, line):
    """The name of the `fn` whose body holds `line` (the last one started above it)."""
    if path not in _fn_maps:
        names = []
        try:
            current = "?"
            for text in Path(path).read_text().splitlines():
                m = FN_RE.match(text)
                if m:
                    current = m.group(1)
                names.append(current)
        except OSError:
            pass
        _fn_maps[path] = names
    names = _fn_maps[path]
    return names[line - 1] if 0 < line <= len(names) else "?"


def own(path):
    return "/crates/" in path or "/benches/" in path


def key(path, line, symbol):
    if own(path):
        short = re.sub(r"^.*?/crates/ringsteal-rt/src/", "", path)
        short = re.sub(r"^.*?/(crates|benches)/", lambda m: "" if m.group(1) == "crates" else "benches/", short)
        return f"{short}:{enclosing_fn(path, line)}"
    return symbol or "?"


def step_of(k):
    for name, pattern in STEPS:
        if re.search(pattern, k):
            return name
    return "other"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 3:
        sys.exit(__doc__)
    small, large, ops = parse(args[0]), parse(args[1]), float(args[2])
    per_key = Counter()
    for where in set(small) | set(large):
        per_key[key(*where)] += large[where] - small[where]
    total = sum(per_key.values()) / ops
    if "--functions" in sys.argv:
        for k, v in sorted(per_key.items(), key=lambda kv: -kv[1]):
            if abs(v / ops) >= 1:
                print(f"{v / ops:8.1f}  {step_of(k)[:24]:24}  {k[:150]}")
    else:
        per_step = Counter()
        for k, v in per_key.items():
            per_step[step_of(k)] += v
        for name, _ in STEPS + [("other", "")]:
            print(f"{per_step[name] / ops:8.1f}  {name}")
    print(f"{total:8.1f}  total")


if __name__ == "__main__":
    main()
