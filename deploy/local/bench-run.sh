#!/usr/bin/env bash
# Measures what `make run`'s log prefixing costs: the same binaries are
# started twice, once directly (each process writing its own log file) and
# once through run.sh (logs prefixed by bin/logprefix into one file), and
# each time the same load is run against the API:
#
#   deploy/local/bench-run.sh [clients] [seconds per URL]
#
# It prints requests per second for GET /v1/credits and a first findings
# page in both modes, their ratio, and the CPU the prefixers used during the
# load. Needs `make build` first. Uses its own database
# (vulnscan_benchrun) and data directory, and the default ports, which must
# be free.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin="$root/bin"
clients=${1:-16}
secs=${2:-20}

for b in gateway vulnscanctl auth estimation scan findings logprefix vulnscan-pki; do
  [ -x "$bin/$b" ] || { echo "bench-run: $bin/$b missing: run make build" >&2; exit 1; }
done
if (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null; then
  echo "bench-run: something already listens on 127.0.0.1:8080" >&2; exit 1
fi

work=$(mktemp -d)
loadgen="$work/loadgen"
(cd "$root/deploy" && go build -o "$loadgen" ./local/loadgen)
export DATABASE_URL=${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/vulnscan_benchrun?sslmode=disable}
export VULNSCAN_DATA_DIR="$work/data" VULNSCAN_RATE_LIMIT=1000000:1000000 SCAN_MODE=all
export VULNSCAN_PKI_DIR="$work/data/pki"
"$here/stores.sh" ensure run
"$bin/vulnscan-pki" "$VULNSCAN_PKI_DIR"

runpid=""
direct=()
cleanup() {
  [ -n "$runpid" ] && kill -TERM "$runpid" 2>/dev/null && wait "$runpid" 2>/dev/null
  [ ${#direct[@]} -gt 0 ] && kill -TERM "${direct[@]}" 2>/dev/null && wait "${direct[@]}" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# cpu PID... prints the CPU seconds (user + system) the processes used.
cpu() {
  local t=0 p f
  for p in "$@"; do
    f=$(cut -d' ' -f14,15 "/proc/$p/stat" 2>/dev/null) || continue
    t=$((t + ${f% *} + ${f#* }))
  done
  awk -v t="$t" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }'
}

wait_ready() {
  for _ in $(seq 120); do
    curl -fs -o /dev/null http://127.0.0.1:8080/readyz && return 0
    sleep 0.5
  done
  echo "bench-run: the system did not become ready" >&2; return 1
}

key=""
setup_key() {
  [ -n "$key" ] && return 0
  local org
  org=$("$bin/vulnscanctl" org create --name "bench-$RANDOM" --credits 100 | sed -n 's/.*"org_id": *"\([^"]*\)".*/\1/p')
  key=$("$bin/vulnscanctl" key create --org "$org" --scopes read,write --name bench | sed -n 's/.*"key": *"\([^"]*\)".*/\1/p')
  [ -n "$key" ] || { echo "bench-run: could not create an API key" >&2; return 1; }
}

# measure MODE: runs the load and prints one result line per URL.
measure() {
  local mode=$1 prefixers=("${@:2}")
  local before after
  # warm-up, not measured: connections, caches, the first queries' plans
  "$loadgen" -c "$clients" -d 5s -H "X-Api-Key: $key" \
    http://127.0.0.1:8080/v1/credits "http://127.0.0.1:8080/v1/findings?page=1&limit=15" >/dev/null
  before=$(cpu "${prefixers[@]}")
  "$loadgen" -c "$clients" -d "${secs}s" -H "X-Api-Key: $key" \
    http://127.0.0.1:8080/v1/credits "http://127.0.0.1:8080/v1/findings?page=1&limit=15" | sed "s/^/$mode /" | tee -a "$work/results"
  after=$(cpu "${prefixers[@]}")
  if [ ${#prefixers[@]} -gt 0 ]; then
    awk -v a="$after" -v b="$before" -v s="$secs" 'BEGIN { printf "prefixed: log prefixers used %.2f CPU s in %d s of load (%.2f%% of one core)\n", a - b, 2 * s, 100 * (a - b) / (2 * s) }'
  fi
}

echo "== direct: each binary writes its own log file"
for s in auth estimation findings scan gateway; do
  "$bin/$s" >"$work/$s.log" 2>&1 &
  direct+=($!)
done
wait_ready
setup_key
measure direct
kill -TERM "${direct[@]}"; wait "${direct[@]}" 2>/dev/null || true; direct=()
sleep 1

echo "== prefixed: run.sh, logs through bin/logprefix into one file"
setsid "$here/run.sh" >"$work/run.log" 2>&1 &
runpid=$!
wait_ready
sleep 1
mapfile -t prefixers < <(pgrep -x logprefix -s "$(ps -o sid= -p "$runpid" | tr -d ' ')")
[ ${#prefixers[@]} -eq 5 ] || { echo "bench-run: expected 5 prefixers, found ${#prefixers[@]}" >&2; exit 1; }
measure prefixed "${prefixers[@]}"
echo "log lines prefixed: $(wc -l <"$work/run.log")"

awk '{ rate[$1 " " $2] = $3; urls[$2] = 1 }
  END { for (u in urls) printf "ratio %s prefixed/direct %.3f\n", u, rate["prefixed " u] / rate["direct " u] }' "$work/results"
