#!/usr/bin/env python3
"""Where the instructions of one operation go: a per-step breakdown of two callgrind runs.

    scripts/callgrind_steps.py SMALL.out LARGE.out OPS [--functions]

SMALL.out and LARGE.out are callgrind outputs of one probe at two sizes that differ by OPS
operations, written with `--dump-instr=yes` (`scripts/bench_callgrind.sh --keep DIR` leaves
them so). Every instruction of the probe binary is charged to the innermost ringsteal (or
probe) function it was inlined into, found with `addr2line -i` in the binary's line tables,
so the standard library's code counts for the ringsteal function that used it; a few small
helpers (`HELPERS`) count for their caller instead. Instructions in other objects (libc)
count for the function callgrind saw them in. Each function is then given the step of the
first pattern of `STEPS` that matches its name. Prints instructions per operation,
(count(LARGE) - count(SMALL)) / OPS, by step, or with --functions by function.

Needs `addr2line` (binutils).
"""
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

# (step, pattern on the function's path, e.g. `ringsteal_rt::op::raw::OpCell<T>::allocate`):
# the first match decides.
STEPS = [
    ("op cell: allocate, free",
     r"OpCell<T>::(allocate|take_data)|op::raw::(release|release_completed|free)\b|block_cache::"
     r"|AtomicWaker as core::ops::drop::Drop|^ringsteal_rt::util::contain::contain_panic$"),
    ("SQE preparation",
     r"Op<T>::submit|op::assemble|runtime_flags_only|Operation>::prepare|ringsteal_uring::opcode"
     r"|user_data::pointer|OpHeader::(set_expected|set_link_timeout|new)|Op<T>::new|fs::read_write::read_at"
     r"|ReadAt<B>::new|io_uring_sqe|sqe_len"),
    ("the op's runtime handle (SchedHandle)", r"SchedHandle::new|SchedHandle as core::ops::drop::Drop"),
    ("descriptor handle (SharedFd clone, drop)", r"SharedFd"),
    ("submission: SQ push, io_uring_enter",
     r"driver::submit::|driver::backlog::|Driver::add_in_flight|ringsteal_uring::sq::"
     r"|Ring::(push|push_all|submit|submit_and_wait|enter_getevents|sq_\w+)\b|ringsteal_uring::sys::"
     r"|Shard>::submit\b|^syscall$|drop_in_place<core::result::Result<\(\),std::io::error::Error>>"
     r"|Ring::fd\b|RingMode as core::cmp::PartialEq"),
    ("CQE dispatch: reap, record, release",
     r"driver::reap::|ringsteal_uring::cq::|Ring::(reap|pop_cqe|cq_\w+|taskrun_pending|flush_completions)\b"
     r"|user_data::split|OpHeader::(complete|finish|more|record_more|cancel_state)|continue_cancel"),
    ("waker: register, take, wake, queue",
     r"atomic_waker::|OpHeader::(register|register_unshared|take_waker)|task::waker::"
     r"|transition_to_notified|ref_inc|schedule_woken|Shard::push_local|Schedule>::schedule"
     r"|harness::schedule|Notified::home|vec::drain::Drain<T,A> as core::ops::drop::Drop"),
    ("op completion: results, data back",
     r"Op<T> as core::future::future::Future>::poll|OpHeader::(op_results|results|first_result|is_complete|has_link_timeout)"
     r"|Operation>::complete|op::cqe_result|Op<T> as core::ops::drop::Drop|drop_in_place<ringsteal_rt::op::Op<"),
    ("task poll: state, harness",
     r"task::harness::|task::state::|Notified::run|TaskRef::|task::raw::|Shard::run_task"),
    ("shard loop: tick, maintain, run queue",
     r"shard::run::|shard::main_wake::|Shard::|crossbeam|util::queue::|stats::"),
    ("the reader's own code: loop, offsets, buffer",
     r"callgrind_probe::|fs_read_4k::|util::XorShift|buf::|IoBuf"),
]

# Helpers charged to the function that called them (the next ringsteal frame out).
HELPERS = re.compile(
    r"context::with_shard(_of)?\b|Shard::(counters|remote)\b|util::contain::contain_panic"
    r"|LocalCounter::|loom::"
)

OWN = ("/crates/", "/benches/")


def parse(path):
    """Self cost per (object, function, address) of a `--dump-instr=yes` callgrind output."""
    objects, files, functions = {}, {}, {}
    table_of = {"ob": objects, "cob": objects, "fl": files, "fi": files, "fe": files,
                "cfi": files, "cfl": files, "fn": functions, "cfn": functions}
    cost = Counter()
    ob = fn = None
    addr = 0
    line = 0
    skip_next = False
    positions = None
    for raw in Path(path).read_text().splitlines():
        if raw.startswith("positions:"):
            positions = raw.split()[1:]
            continue
        m = re.match(r"^(ob|cob|fl|fi|fe|cfi|cfl|fn|cfn)=(?:\((\d+)\))?\s*(.*)$", raw)
        if m:
            kind, ident, name = m.groups()
            table = table_of[kind]
            if ident is not None:
                if name:
                    table[ident] = name
                name = table.get(ident, name)
            if kind == "ob":
                ob = name
            elif kind == "fn":
                fn = name
            continue
        if raw.startswith("calls="):
            skip_next = True
            continue
        if not raw or not (raw[0].isdigit() or raw[0] in "+-*" or raw.startswith("0x")):
            continue
        if positions != ["instr", "line"]:
            sys.exit(f"{path}: written without --dump-instr=yes (positions: {positions})")
        parts = raw.split()
        if len(parts) < 3:
            continue
        a, _l, n = parts[0], parts[1], parts[2]
        if a.startswith("0x"):
            addr = int(a, 16)
        elif a[0] in "+-":
            addr += int(a, 16) if a[1:].startswith("0x") else int(a)
        if skip_next:
            skip_next = False
            continue
        cost[(ob, fn, addr)] += int(n)
    return cost


def inline_owners(binary, addresses):
    """For each address of `binary`: the innermost ringsteal/probe function it belongs to."""
    if not addresses:
        return {}
    addresses = sorted(addresses)
    out = subprocess.run(
        ["addr2line", "-e", binary, "-i", "-f", "-C", "-a"] + [hex(a) for a in addresses],
        capture_output=True, text=True, check=True).stdout.splitlines()
    owners = {}
    frames = defaultdict(list)
    current = None
    i = 0
    while i < len(out):
        if out[i].startswith("0x") and len(out[i]) > 2 and all(c in "0123456789abcdefx" for c in out[i]):
            current = int(out[i], 16)
            i += 1
            continue
        func, where = out[i], out[i + 1] if i + 1 < len(out) else ""
        frames[current].append((func, where))
        i += 2
    for a in addresses:
        owner = None
        for func, where in frames.get(a, []):
            if not any(o in where for o in OWN):
                continue
            name = re.sub(r"::\{\{closure\}\}", "", func)
            if HELPERS.search(name):
                continue
            owner = name
            break
        owners[a] = owner
    return owners


def step_of(name):
    for step, pattern in STEPS:
        if re.search(pattern, name):
            return step
    return "other"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 3:
        sys.exit(__doc__)
    small, large, ops = parse(args[0]), parse(args[1]), float(args[2])
    delta = Counter()
    for k in set(small) | set(large):
        d = large[k] - small[k]
        if d:
            delta[k] += d
    by_object = defaultdict(set)
    for ob, _fn, addr in delta:
        by_object[ob].add(addr)
    # The probe binary (the object whose name ends in callgrind_probe) is resolved by address.
    owners = {}
    for ob, addrs in by_object.items():
        if ob and ob.endswith("callgrind_probe"):
            owners[ob] = inline_owners(ob, addrs)
    per_fn = Counter()
    for (ob, fn, addr), d in delta.items():
        owner = owners.get(ob, {}).get(addr) or fn or "?"
        per_fn[owner] += d
    total = sum(per_fn.values()) / ops
    if "--functions" in sys.argv:
        for name, v in sorted(per_fn.items(), key=lambda kv: -kv[1]):
            if abs(v / ops) >= 1:
                print(f"{v / ops:8.1f}  {step_of(name)[:24]:24}  {name[:150]}")
    else:
        per_step = Counter()
        for name, v in per_fn.items():
            per_step[step_of(name)] += v
        for step, _ in STEPS + [("other", "")]:
            print(f"{per_step[step] / ops:8.1f}  {step}")
    print(f"{total:8.1f}  total")


if __name__ == "__main__":
    main()
