#!/usr/bin/env bash
# Runs the criterion suite (benches/) with a short profile and writes the ratio table
# (peer median / ringsteal median; above 1 means ringsteal is faster), the targets of issues
# 3-6 and 12, the http servers' requests/s and CPU per request, and every absolute median
# into book/src/benchmarks.md (between the bench-report markers), above them one SVG chart of
# the ratios per benchmark group (scripts/bench_charts.py, into book/src/img/bench/), and the
# ratio table into README.md (between the bench-table markers), with the machine, kernel,
# commit, date, load and the exact command.
#
#   scripts/bench_report.sh                      # run everything (about 15 minutes), then write
#   scripts/bench_report.sh --wait-idle 30       # first wait up to 30 min for load1 < 0.5
#   scripts/bench_report.sh --results-dir DIR    # no run: tables from an earlier CRITERION_HOME
#   scripts/bench_report.sh --dry-run            # run, but print the section instead of writing
#   scripts/bench_report.sh --order-seed N       # run order seed (default: a fresh one)
#   scripts/bench_report.sh -- <criterion args>  # replaces the short profile's arguments
#
# The runtimes of each group run in an order rotated by RINGSTEAL_BENCH_ORDER_SEED
# (benches/src/order.rs); each run takes a fresh seed unless given one, and the report
# records the seed and every group's order.
#
# Needs wrk (apt-get install -y wrk) for the http groups of the networking suite.
# Environment: CARGO_TARGET_DIR (default: target/), RINGSTEAL_BENCH_DIR (data files).
# Compare figures only within one run: on a shared 2-vCPU VM run-to-run noise reaches ±30 %.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

orig_args="$*"
PROFILE=(--warm-up-time 1 --measurement-time 3)
results_dir=""
wait_idle=0
dry_run=0
order_seed=""
while [ $# -gt 0 ]; do
    case "$1" in
        --results-dir) results_dir="$2"; shift 2 ;;
        --wait-idle) wait_idle="$2"; shift 2 ;;
        --dry-run) dry_run=1; shift ;;
        --order-seed) order_seed="$2"; shift 2 ;;
        --) shift; PROFILE=("$@"); break ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done

log() { printf '\n==> %s\n' "$*" >&2; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# The interleaved groups keep the rounds of criterion's last `sample_size` calls, after its
# warm-up (benches/src/net/interleaved.rs, `first_measured_round`): modes that sample
# otherwise would keep the wrong rounds.
for a in "${PROFILE[@]}"; do
    case "$a" in
        --quick|--profile-time|--profile-time=*)
            echo "criterion's $a samples differently from what the interleaved groups assume; not for a report" >&2
            exit 2 ;;
    esac
done

target_dir="${CARGO_TARGET_DIR:-target}"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$target_dir/bench-report/$stamp"
# Absolute: criterion runs each suite from the package directory (benches/).
work="$(cd "$target_dir/bench-report/$stamp" && pwd)"

command_line="scripts/bench_report.sh${orig_args:+ $orig_args}"

# The commit the suites are built from: taken now, since the tree may change while they run.
commit="$(git rev-parse --short=12 HEAD)"
# Everything the suites are built from: the crates, the benchmarks, the examples (the HTTP
# server), and the manifests and lock file (build profile, peer versions).
if [ -n "$(git status --porcelain -- crates benches examples Cargo.toml Cargo.lock 2>/dev/null)" ]; then
    commit="$commit (with uncommitted changes)"
fi
if [ -z "$order_seed" ]; then
    # A fresh seed per run, so no runtime keeps the same place in a group from run to run.
    order_seed="$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')"
fi
case "$order_seed" in
    ''|*[!0-9]*) echo "--order-seed must be an unsigned integer, not '$order_seed'" >&2; exit 2 ;;
esac
bench_cmd=(cargo bench -p ringsteal-benches --bench scheduling --bench time --bench fs --bench process --bench net -- "${PROFILE[@]}" --noplot)

if [ -z "$results_dir" ]; then
    # The http groups measure nothing without wrk: refuse to start a run that would leave
    # their rows empty.
    if ! command -v wrk >/dev/null 2>&1; then
        echo "wrk not found: the http groups need it (apt-get install -y wrk)" >&2
        exit 1
    fi
    log "building the suites"
    cargo bench -p ringsteal-benches --bench scheduling --bench time --bench fs --bench process --bench net --no-run >&2
    if [ "$wait_idle" -gt 0 ]; then
        deadline=$(( $(date +%s) + wait_idle * 60 ))
        while awk -v l="$(load1)" 'BEGIN { exit !(l >= 0.5) }'; do
            if [ "$(date +%s)" -ge "$deadline" ]; then
                echo "load average still $(load1) after ${wait_idle} min; not running" >&2
                exit 1
            fi
            log "load average $(load1) >= 0.5: waiting"
            sleep 60
        done
    fi
    results_dir="$work/criterion"
    load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
    log "load average before the run: $load_before"
    log "${bench_cmd[*]} (CRITERION_HOME=$results_dir)"
    started=$(date +%s)
    RINGSTEAL_BENCH_ORDER_SEED="$order_seed" CRITERION_HOME="$results_dir" "${bench_cmd[@]}" 2>&1 |
        tee "$work/bench.log" >&2
    minutes=$(( ($(date +%s) - started + 59) / 60 ))
    load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

    fio_json="$work/fio.json"
    data_file="${RINGSTEAL_BENCH_DIR:-${TMPDIR:-/tmp}/ringsteal-bench-data}/random-64MiB.dat"
    if command -v fio >/dev/null 2>&1 && [ -f "$data_file" ]; then
        log "fio limits on $data_file (io_uring, --invalidate=0, after a pre-read)"
        echo '{' > "$fio_json"
        sep=""
        for job in "qd1 1 1" "qd32 32 1" "qd32_2x16 16 2"; do
            set -- $job
            cat "$data_file" > /dev/null
            iops=$(fio --name="$1" --filename="$data_file" --rw=randread --bs=4k --ioengine=io_uring \
                --iodepth="$2" --numjobs="$3" --invalidate=0 --time_based --runtime=3 \
                --group_reporting --output-format=json |
                python3 -c 'import json,sys; print(json.load(sys.stdin)["jobs"][0]["read"]["iops"])')
            ns=$(python3 -c "print(1e9 / $iops)")
            printf '%s  "%s": %s' "$sep" "$1" "$ns" >> "$fio_json"
            sep=$',\n'
        done
        printf '\n}\n' >> "$fio_json"
    else
        log "fio not found (apt-get install fio) or no data file: no fio limit in the report"
        fio_json=""
    fi
else
    load_before="(not recorded: tables from $results_dir)"
    load_after=""
    minutes="?"
    fio_json=""
    [ -f "$results_dir/../fio.json" ] && fio_json="$results_dir/../fio.json"
    # The seed and the orders of that run, from its log if it is beside the results.
    order_seed="(not recorded)"
    if [ -f "$results_dir/../bench.log" ]; then
        order_seed="$(sed -n 's/^run order of .*(RINGSTEAL_BENCH_ORDER_SEED=\([0-9]*\)).*/\1/p' \
            "$results_dir/../bench.log" | sort -u | paste -sd, -)"
        [ -n "$order_seed" ] || order_seed="(not recorded)"
    fi
fi
# Each group's run order, as the suites printed it.
orders="$work/orders.md"
if [ -f "$results_dir/../bench.log" ]; then
    sed -n 's/^run order of \([^ ]*\) (.*): \(.*\)$/| `\1` | \2 |/p' "$results_dir/../bench.log" > "$orders"
else
    : > "$orders"
fi

log "tables from $results_dir"
status=0
python3 scripts/bench_results.py table --results "$results_dir" --out "$work/tables" \
    ${fio_json:+--fio "$fio_json"} || status=$?

cpu_model="$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | sed -n 1p)"
machine="${cpu_model:-unknown CPU}, $(nproc) vCPUs, Linux $(uname -r)"
date_utc="$(date -u '+%Y-%m-%d %H:%M UTC')"

# One chart per group, from the same results as the tables (missing results are drawn as
# "missing", and the table step above has already failed the run for them).
python3 scripts/bench_charts.py --results "$results_dir" --date "$date_utc" --machine "$machine" \
    --commit "$commit" --out "$work/charts" --markdown "$work/charts.md" || status=$?

section="$work/section.md"
{
    echo "Measured $date_utc on $machine; commit \`$commit\`; $(rustc --version)."
    echo "Load average (1, 5, 15 min) before the run: $load_before${load_after:+; after: $load_after}."
    echo "Suite time: about $minutes min. Command (from the repository root):"
    echo
    echo '```text'
    echo "$command_line"
    echo "# which runs: RINGSTEAL_BENCH_ORDER_SEED=$order_seed CRITERION_HOME=<fresh dir> ${bench_cmd[*]}"
    echo '```'
    echo
    if [ -s "$work/charts.md" ]; then
        echo "### Charts: peer median / ringsteal median, one per group (log scale)"
        echo
        cat "$work/charts.md"
        echo
    fi
    echo "### Ratios: peer median / ringsteal median (above 1: ringsteal is faster)"
    echo
    cat "$work/tables/ratios.md"
    echo
    echo "The \`ringsteal\` column is ringsteal's median per iteration (for \`sleep_precision\`, the"
    echo "overshoot past the requested duration, which is also what those ratios compare). Bold:"
    echo "ringsteal ahead. \`n/e\`: the peer cannot express the workload (see below). \`vs floor\`:"
    echo "floor median / ringsteal median (1.00× would be the floor's speed)."
    echo
    echo "### Stream workloads, interleaved: median per-round ratio, peer / ringsteal"
    echo
    cat "$work/tables/interleaved.md"
    echo
    echo "Each \`<group>/interleaved\` round runs one turn of every runtime, each on a fresh"
    echo "runtime, in a rotated order; a ratio is taken within a round and the median is over the"
    echo "rounds (\`benches/NOTES.md\`). The issue-12 stream targets below use these figures."
    echo
    echo "### Targets (issues 3-6, 12, 16)"
    echo
    cat "$work/tables/targets.md"
    echo
    echo "### HTTP servers under wrk: requests/s and CPU per request"
    echo
    cat "$work/tables/http.md"
    echo
    echo "Requests/s: the group's requests per iteration over criterion's median. CPU: medians"
    echo "over the wrk runs of each benchmark of the server process's CPU time (getrusage: every"
    echo "thread but the one driving wrk) and of wrk's, per completed request; see the networking"
    echo "section above."
    if [ -f "$work/tables/fio.md" ]; then
        echo
        echo "### fio on the same file (io_uring, 4 KiB random reads, \`--invalidate=0\`, after a pre-read)"
        echo
        cat "$work/tables/fio.md"
    fi
    echo
    echo "### Every median"
    echo
    cat "$work/tables/absolute.md"
    if [ -s "$orders" ]; then
        echo
        echo "### Run order (seed $order_seed)"
        echo
        echo "| group | runtimes and floors, in the order they ran |"
        echo "|---|---|"
        cat "$orders"
    fi
} > "$section"

readme_section="$work/readme.md"
{
    echo "Ratio of each peer's median time to ringsteal's on the same workload, in one run"
    echo "(above 1: ringsteal is faster). $date_utc, $machine, commit \`$commit\`,"
    echo "load average before the run $load_before. Command: \`$command_line\` (run order seed $order_seed)."
    echo "What each workload measures, the caveats, every absolute median and the targets:"
    echo "[book/src/benchmarks.md](book/src/benchmarks.md)."
    echo
    cat "$work/tables/ratios.md"
    echo
    echo "The stream rows above are criterion's medians, one runtime after the other. The same"
    echo "run's interleaved rounds (every runtime in every round; the issue-12 targets use them),"
    echo "median per-round ratio:"
    echo
    cat "$work/tables/interleaved.md"
} > "$readme_section"

if [ "$dry_run" -eq 1 ]; then
    cat "$section"
    exit "$status"
fi

# Replaces the lines between two marker lines of a file (markers kept); fails if absent.
replace_between() {
    python3 - "$1" "$2" "$3" "$4" <<'EOF'
import pathlib, sys
path, start, end, body = sys.argv[1:]
text = pathlib.Path(path).read_text()
if start not in text or end not in text:
    sys.exit(f"{path}: markers {start} / {end} not found")
head, rest = text.split(start, 1)
_, tail = rest.split(end, 1)
new = pathlib.Path(body).read_text()
pathlib.Path(path).write_text(f"{head}{start}\n{new}{end}{tail}")
EOF
}
replace_between book/src/benchmarks.md '<!-- bench-report:start -->' '<!-- bench-report:end -->' "$section"
replace_between README.md '<!-- bench-table:start -->' '<!-- bench-table:end -->' "$readme_section"
# The charts directory holds only what this script writes: a group that is gone loses its chart.
mkdir -p book/src/img/bench
rm -f book/src/img/bench/*.svg
cp "$work"/charts/*.svg book/src/img/bench/
log "wrote book/src/benchmarks.md, its charts in book/src/img/bench/ and README.md (results kept in $work)"
if [ "$status" -ne 0 ]; then
    echo "some results were missing or unusable (marked 'missing' in the tables)" >&2
fi
exit "$status"
