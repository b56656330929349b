#!/usr/bin/env bash
# Loads the http_placement harness (examples/http_placement.rs: an HTTP/1.1 keep-alive
# server written as the book's quick start writes one, with its connection tasks placed
# several ways) with wrk, and prints requests/s, server CPU per request and how the
# connections landed on the shards. ADR-0009 records the figures.
#
#   bash scripts/server_placement.sh [rounds] [seconds] [shards]
#
# Each round runs every placement in every scenario, interleaved, so that the machine's
# drift hits all of them alike; compare medians over rounds. Needs wrk
# (apt-get install -y wrk).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

rounds=${1:-3}
secs=${2:-8}
shards=${3:-2}
placements=${PLACEMENTS:-"default acceptor round-robin reuseport incoming"}
# keepalive-N: N keep-alive connections; churn-N: a new connection per request;
# work-N: N keep-alive connections and 50 µs of CPU per request in the handler.
scenarios=${SCENARIOS:-"keepalive-64 keepalive-1000 churn-64 work-64"}
port=${PORT:-18080}

command -v wrk >/dev/null || { echo "wrk is not installed: apt-get install -y wrk" >&2; exit 1; }
cargo build --release -q -p ringsteal-examples --example http_placement
server=target/release/examples/http_placement
ulimit -n 65536 2>/dev/null || true
tick=$(getconf CLK_TCK)

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

echo "round,placement,scenario,requests_per_s,server_cpu_us_per_request,shard_connections,shard_requests"
for round in $(seq 1 "$rounds"); do
    for scenario in $scenarios; do
        for placement in $placements; do
            conns=${scenario#*-}
            extra=()
            [[ $scenario == churn-* ]] && extra=(-H "Connection: close")
            out=$(mktemp)
            work=0
            [[ $scenario == work-* ]] && work=50
            HTTP_WORK_US=$work "$server" "$placement" "$port" $((secs + 2)) "$shards" >"$out" &
            pid=$!
            # Wait until it listens.
            for _ in $(seq 1 100); do
                (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
                sleep 0.05
            done
            before=$(cpu_ticks "$pid")
            report=$(wrk -t2 -c"$conns" -d"${secs}s" "${extra[@]}" "http://127.0.0.1:$port/" 2>&1)
            after=$(cpu_ticks "$pid")
            wait "$pid" || true
            rps=$(awk '/Requests\/sec/ {print $2}' <<<"$report")
            total=$(awk '/requests in/ {print $1}' <<<"$report")
            cpu_us=$(awk -v b="$before" -v a="$after" -v t="$tick" -v n="$total" \
                'BEGIN { printf "%.2f", (a - b) / t * 1e6 / n }')
            conn_split=$(awk '/^shard/ {printf "%s%s", sep, $4; sep="/"}' "$out")
            req_split=$(awk '/^shard/ {printf "%s%s", sep, $6; sep="/"}' "$out")
            echo "$round,$placement,$scenario,$rps,$cpu_us,$conn_split,$req_split"
            rm -f "$out"
            port=$((port + 1))
        done
    done
done
