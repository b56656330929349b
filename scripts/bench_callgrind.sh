#!/usr/bin/env bash
# Instruction counts of ringsteal's hot paths under valgrind's callgrind, compared with the
# committed baseline (benches/callgrind_baseline.toml). Counts repeat exactly from run to run,
# so a rise of more than 5 % is a regression, even on a noisy machine where timings are not.
#
#   scripts/bench_callgrind.sh             # measure and compare; fails on a rise above 5 %
#   scripts/bench_callgrind.sh --update    # measure and write the baseline
#   scripts/bench_callgrind.sh --keep DIR  # also keep the callgrind outputs in DIR, for
#                                          # scripts/callgrind_steps.py (where they go, per step)
#
# What is counted (benches/src/bin/callgrind_probe.rs):
#   spawn_join  instructions per spawn + join of a tiny task on a one-shard runtime
#   cross_wake  instructions per cross-shard task wake between two spinning shards: the wake,
#               the target's tick that takes the task from its inbox, and the poll
#   op_nop      instructions per single-shot op (IORING_OP_NOP awaited) on a one-shard runtime:
#               the op cell, its SQE, the submit, the reap and the wake
#   read_qd1    instructions per 4 KiB read of a cached file (`File::read_at` awaited by one
#               reader task) on a one-shard runtime: fs_read_4k_qd1's op path on one shard
#   read_qd32   the same with 32 reader tasks, so 32 reads in flight (fs_read_4k_qd32)
#   floor_qd1   the same reads on a bare ring with no runtime, one in flight: the floor
#   floor_qd32  the floor with 32 in flight
#   stream_rtt  instructions per 64-byte round trip between two tasks over a Unix stream pair
#               on one spinning shard: two writes and two reads, each taking and freeing its
#               stream's lane (idle loop excluded)
# Each probe runs at two sizes; per operation = (count(large) - count(small)) / operations,
# which cancels start-up and shutdown. The shard's idle loop (steal attempts, spinning,
# parking: `Shard::idle` and everything it calls) is left out of both counts, because how
# long a shard spins depends on how valgrind interleaves the threads.
#
# Needs valgrind (apt-get install valgrind) and python3 >= 3.11. The baseline records the
# rustc and valgrind versions and the C library: a different toolchain or libc changes the
# counts; re-baseline with --update after such a change (and say so in the commit).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

baseline="benches/callgrind_baseline.toml"
update=0
keep=""
while [ $# -gt 0 ]; do
    case "$1" in
        --update) update=1; shift ;;
        --baseline) baseline="$2"; shift 2 ;;
        --keep) keep="$2"; shift 2 ;;
        -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done

for tool in valgrind callgrind_annotate python3; do
    command -v "$tool" >/dev/null 2>&1 || { echo "$tool not found (apt-get install valgrind python3)" >&2; exit 1; }
done

echo "==> cargo build --release -p ringsteal-benches --bin callgrind_probe"
cargo build --release -p ringsteal-benches --bin callgrind_probe
probe="${CARGO_TARGET_DIR:-target}/release/callgrind_probe"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [ -n "$keep" ]; then
    mkdir -p "$keep"
fi

# counted MODE N: instructions of one probe run outside `Shard::idle`.
counted() {
    local out="$tmp/$1.$2.out"
    # A shard that parks would hang valgrind 3.19 (see the probe's docs): bound every run.
    # --dump-instr (for --keep: callgrind_steps.py resolves instructions by address) only
    # changes what the output records, not what is counted.
    if ! timeout -s KILL 900 valgrind --tool=callgrind --callgrind-out-file="$out" \
        ${keep:+--dump-instr=yes} "$probe" "$1" "$2" > "$tmp/valgrind.log" 2>&1; then
        echo "callgrind run of '$1 $2' failed or hung:" >&2
        tail -20 "$tmp/valgrind.log" >&2
        exit 1
    fi
    if [ -n "$keep" ]; then
        cp "$out" "$keep/$1.$2.out"
    fi
    callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$out" | python3 -c '
import re, sys
total, idle = None, 0
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(.*)$", line)
    if not m:
        continue
    n, what = int(m.group(1).replace(",", "")), m.group(2)
    if what.startswith("PROGRAM TOTALS"):
        total = n
    elif "=>" not in what and re.search(r"Shard>::idle( |$)", what):
        idle = max(idle, n)
if total is None:
    sys.exit("no PROGRAM TOTALS line in callgrind_annotate output")
print(total - idle)
'
}

# probe MODE SMALL LARGE OPS_PER_UNIT: prints instructions per operation.
per_op() {
    local small large
    small="$(counted "$1" "$2")"
    large="$(counted "$1" "$3")"
    python3 -c "print(round(($large - $small) / (($3 - $2) * $4), 1))"
    echo "    $1: $small instructions at $2, $large at $3" >&2
}

# The probes: name, small size, large size, operations per unit of size, what one op is.
probes=(
    "spawn_join|2000|4000|1|instructions per spawn + join of a tiny task, one shard"
    "cross_wake|200|400|2|instructions per cross-shard task wake between spinning shards (idle loop excluded)"
    "op_nop|2000|4000|1|instructions per single-shot op (a NOP submitted, reaped and awaited), one shard"
    "read_qd1|2000|4000|1|instructions per 4 KiB cached read (File::read_at awaited), one reader task on one shard"
    "read_qd32|2048|4096|1|instructions per 4 KiB cached read, 32 reader tasks on one shard"
    "floor_qd1|2000|4000|1|instructions per 4 KiB cached read on a bare ring (no runtime), one in flight"
    "floor_qd32|2048|4096|1|instructions per 4 KiB cached read on a bare ring (no runtime), 32 in flight"
    "stream_rtt|1000|2000|1|instructions per 64-byte round trip over a Unix stream pair (two writes, two reads), one spinning shard (idle loop excluded)"
)

echo "==> valgrind --tool=callgrind (this takes about two minutes)"
results=()
for p in "${probes[@]}"; do
    IFS='|' read -r name small large unit what <<< "$p"
    n="$(per_op "$name" "$small" "$large" "$unit")"
    results+=("$name|$n|$what")
    echo "$name: $n $what"
done
rustc_v="$(rustc --version)"
valgrind_v="$(valgrind --version)"
libc_v="$(getconf GNU_LIBC_VERSION 2>/dev/null || echo unknown)"

if [ "$update" -eq 1 ]; then
    {
        cat <<EOF
# Baseline of scripts/bench_callgrind.sh: instructions per operation counted by valgrind's
# callgrind in the release profile (see the script for what each count covers). A measured
# count more than \`tolerance\` above its baseline fails. Written by
# \`scripts/bench_callgrind.sh --update\` on $(date -u '+%Y-%m-%d') at commit $(git rev-parse --short=12 HEAD).
rustc = "$rustc_v"
valgrind = "$valgrind_v"
libc = "$libc_v"
tolerance = 0.05
EOF
        for r in "${results[@]}"; do
            IFS='|' read -r name n what <<< "$r"
            printf '\n[%s]\nper_op = %s\nwhat = "%s"\n' "$name" "$n" "$what"
        done
    } > "$baseline"
    echo "==> wrote $baseline"
    exit 0
fi

[ -f "$baseline" ] || { echo "no baseline $baseline: run with --update first" >&2; exit 1; }
python3 - "$baseline" "$rustc_v" "$valgrind_v" "$libc_v" "${results[@]}" <<'EOF'
import pathlib, sys, tomllib
path, rustc, valgrind, libc = sys.argv[1:5]
measured = [r.split("|", 2)[:2] for r in sys.argv[5:]]
try:
    base = tomllib.loads(pathlib.Path(path).read_text())
    tol = float(base["tolerance"])
    want = {name: float(base[name]["per_op"]) for name, _ in measured}
except (OSError, KeyError, ValueError, TypeError, tomllib.TOMLDecodeError) as e:
    sys.exit(f"FAIL: unreadable baseline {path} (every probe needs a [name] with per_op): {e}")
for key, have in (("rustc", rustc), ("valgrind", valgrind), ("libc", libc)):
    if base.get(key) != have:
        print(f"note: baseline {key} is {base.get(key)!r}, this machine has {have!r}; "
              "counts may differ for that reason alone")
bad = 0
for name, got in measured:
    got, ref = float(got), want[name]
    change = got / ref - 1
    verdict = "FAIL" if change > tol else "ok  "
    bad += change > tol
    print(f"{verdict} {name}: {got:.1f} instructions per op, baseline {ref:.1f} ({change:+.1%}, limit +{tol:.0%})")
    if change < -tol:
        print(f"     {name} improved by more than {tol:.0%}: record it with --update")
sys.exit(1 if bad else 0)
EOF
