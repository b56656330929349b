#!/usr/bin/env bash
# Benchmark guardrail: runs the quick subset of the criterion suite named in
# benches/guardrails.toml, computes the same ratios as the report (peer median / ringsteal
# median; for the [[cpu]] entries, peer / ringsteal server CPU per request of the http
# groups) and fails if any falls below its committed threshold.
#
# It fails closed: a benchmark that is missing, has too few samples or an unparsable
# estimates file, a missing, short or unparsable CPU record, an empty or missing results
# directory, or an unreadable config is a failure, never a pass. The http guardrails need
# wrk (apt-get install -y wrk): without it the run fails.
#
#   scripts/bench_guardrail.sh                    # run the subset (about 2 minutes), then check
#   scripts/bench_guardrail.sh --results-dir DIR  # check an existing CRITERION_HOME, no run
#   scripts/bench_guardrail.sh --self-test        # no benchmarks: checks that the checker
#                                                 # passes complete results and fails on missing,
#                                                 # unparsable, short or slow ones
#   scripts/bench_guardrail.sh --config FILE      # another thresholds file
#
# Environment: CARGO_TARGET_DIR (default: target/).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

config="benches/guardrails.toml"
results_dir=""
self_test=0
while [ $# -gt 0 ]; do
    case "$1" in
        --results-dir) results_dir="$2"; shift 2 ;;
        --config) config="$2"; shift 2 ;;
        --self-test) self_test=1; shift ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done

check() { python3 scripts/bench_results.py check --results "$1" --config "$2"; }

if [ "$self_test" -eq 1 ]; then
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    # Fake criterion results for every id of the config: ringsteal 1000 ns, each peer
    # `factor` times its threshold (above it when factor > 1).
    fake() {
        python3 - "$config" "$1" "$2" <<'EOF'
import json, pathlib, sys, tomllib
config, out, factor = sys.argv[1], pathlib.Path(sys.argv[2]), float(sys.argv[3])
cfg = tomllib.loads(pathlib.Path(config).read_text())
checks = cfg["ratio"]
# Server CPU records of the http groups: ringsteal 1000 ns per request, each peer `factor`
# times its threshold, 10 runs each.
cpu = {}
for c in cfg.get("cpu", []):
    cpu[c["ringsteal"]] = 1000.0
for c in cfg.get("cpu", []):
    cpu[c["peer"]] = 1000.0 * float(c["min"]) * factor
for bid, ns in cpu.items():
    d = out / "net-http"
    d.mkdir(parents=True, exist_ok=True)
    run = {"requests": 1000, "duration_ns": 1000000, "server_cpu_ns": ns * 1000,
           "client_cpu_ns": 1000000}
    (d / (bid.replace("/", "__") + ".json")).write_text(json.dumps(
        {"id": bid, "requests_per_iteration": 1000, "runs": [run] * 10}))
medians = {}
for c in checks:
    base = 1000.0 + float(c.get("overshoot_ns", 0))
    medians[c["ringsteal"]] = base
for c in checks:
    over = float(c.get("overshoot_ns", 0))
    medians[c["peer"]] = over + 1000.0 * float(c["min"]) * factor
for i, (bid, m) in enumerate(sorted(medians.items())):
    d = out / f"bench{i}" / "new"
    d.mkdir(parents=True)
    (d / "benchmark.json").write_text(json.dumps({"full_id": bid, "group_id": bid.split("/")[0]}))
    (d / "sample.json").write_text(json.dumps(
        {"sampling_mode": "Linear", "iters": [float(k) for k in range(1, 11)],
         "times": [m * k for k in range(1, 11)]}))
    (d / "estimates.json").write_text(json.dumps({"median": {"point_estimate": m}}))
EOF
    }
    expect() {  # expect pass|fail DESCRIPTION DIR
        local want="$1" what="$2" dir="$3" got
        if check "$dir" "$config" > "$tmp/out" 2>&1; then got=pass; else got=fail; fi
        if [ "$got" = "$want" ]; then
            echo "self-test ok: $what -> $got"
        else
            echo "self-test WRONG: $what -> $got, expected $want"
            sed 's/^/    /' "$tmp/out"
            self_test_failed=1
        fi
    }
    first_file() { find "$1" -name "$2" | sort | sed -n 1p; }
    self_test_failed=0

    fake "$tmp/good" 1.5
    expect pass "complete results above every threshold" "$tmp/good"

    cp -r "$tmp/good" "$tmp/missing"
    rm -rf "$(dirname "$(dirname "$(first_file "$tmp/missing" benchmark.json)")")"
    expect fail "one benchmark result missing" "$tmp/missing"

    cp -r "$tmp/good" "$tmp/garbled"
    echo '{"median": {"point_estim' > "$(first_file "$tmp/garbled" estimates.json)"
    expect fail "an unparsable estimates.json" "$tmp/garbled"

    cp -r "$tmp/good" "$tmp/nosamples"
    rm "$(first_file "$tmp/nosamples" sample.json)"
    expect fail "a result without samples" "$tmp/nosamples"

    cp -r "$tmp/good" "$tmp/fewsamples"
    f="$(first_file "$tmp/fewsamples" sample.json)"
    echo '{"sampling_mode":"Linear","iters":[1.0,2.0],"times":[5.0,10.0]}' > "$f"
    expect fail "a result with 2 samples" "$tmp/fewsamples"

    cp -r "$tmp/good" "$tmp/badmeta"
    echo 'not json' > "$(first_file "$tmp/badmeta" benchmark.json)"
    expect fail "an unparsable benchmark.json" "$tmp/badmeta"

    fake "$tmp/slow" 0.5
    expect fail "every ratio at half its threshold" "$tmp/slow"

    if [ -n "$(first_file "$tmp/good/net-http" '*.json' 2>/dev/null)" ]; then
        cp -r "$tmp/good" "$tmp/nocpu"
        rm "$(first_file "$tmp/nocpu/net-http" '*.json')"
        expect fail "a server CPU record missing" "$tmp/nocpu"

        cp -r "$tmp/good" "$tmp/badcpu"
        echo '{"runs": [' > "$(first_file "$tmp/badcpu/net-http" '*.json')"
        expect fail "an unparsable server CPU record" "$tmp/badcpu"

        cp -r "$tmp/good" "$tmp/fewcpu"
        f="$(first_file "$tmp/fewcpu/net-http" '*.json')"
        python3 - "$f" <<'EOF2'
import json, sys
d = json.load(open(sys.argv[1])); d["runs"] = d["runs"][:2]; json.dump(d, open(sys.argv[1], "w"))
EOF2
        expect fail "a server CPU record with 2 runs" "$tmp/fewcpu"
    fi

    mkdir -p "$tmp/empty"
    expect fail "an empty results directory" "$tmp/empty"
    expect fail "a results directory that does not exist" "$tmp/does-not-exist"

    printf '# no entries\n' > "$tmp/empty.toml"
    if check "$tmp/good" "$tmp/empty.toml" > /dev/null 2>&1; then
        echo "self-test WRONG: a config without thresholds passed"; self_test_failed=1
    else
        echo "self-test ok: a config without thresholds -> fail"
    fi

    { cat "$config"; printf '\n[[cpus]]\nringsteal = "x"\npeer = "y"\nmin = 1.0\n'; } > "$tmp/typo.toml"
    if check "$tmp/good" "$tmp/typo.toml" > /dev/null 2>&1; then
        echo "self-test WRONG: a config with a misspelt table passed"; self_test_failed=1
    else
        echo "self-test ok: a config with a misspelt table -> fail"
    fi

    if [ "$self_test_failed" -ne 0 ]; then
        echo "guardrail self-test: the checker did not behave as required" >&2
        exit 1
    fi
    echo "guardrail self-test: the checker fails closed"
    exit 0
fi

if [ -z "$results_dir" ]; then
    target_dir="${CARGO_TARGET_DIR:-target}"
    mkdir -p "$target_dir/bench-guardrail"
    results_dir="$(cd "$target_dir/bench-guardrail" && pwd)/$(date -u +%Y%m%dT%H%M%SZ)"
    # A regex matching exactly the ids the thresholds need.
    filter="$(python3 scripts/bench_results.py ids --config "$config" |
        python3 -c 'import re,sys; print("^(" + "|".join(re.escape(l.strip()) for l in sys.stdin if l.strip()) + ")$")')"
    if grep -q '^ringsteal = "http_' "$config" && ! command -v wrk >/dev/null 2>&1; then
        echo "FAIL: $config has http guardrails, which need wrk (apt-get install -y wrk)" >&2
        exit 1
    fi
    echo "==> load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "==> running the guardrail subset into $results_dir"
    CRITERION_HOME="$results_dir" cargo bench -p ringsteal-benches \
        --bench scheduling --bench time --bench fs --bench process --bench net --bench ecosystem -- \
        --warm-up-time 1 --measurement-time 2 --noplot "$filter"
fi

echo "==> checking $results_dir against $config"
check "$results_dir" "$config"
