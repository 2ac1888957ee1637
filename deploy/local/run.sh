#!/usr/bin/env bash
# Runs the whole system in the foreground for `make run`: the four services
# and the gateway as separate processes, logs interleaved with a process
# prefix added by bin/logprefix (deploy/local/logprefix), which copies whole
# lines in large blocks and so costs next to nothing under load (measured by
# deploy/local/bench-run.sh). Ctrl-C (SIGINT) or SIGTERM stops all of them,
# then any private PostgreSQL or Redis that was started for this run.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin="$root/bin"

"$here/stores.sh" ensure run || exit 1

# The internal plane's identities: a local CA, a certificate per process and
# for vulnscanctl (operator), and the gateway's identity signing key, kept
# under the checkout's .data/pki across runs (bin/vulnscan-pki keeps valid
# files). They stay there when VULNSCAN_DATA_DIR moves the data elsewhere, so
# bin/vulnscanctl finds the operator certificate without being told.
data_dir=${VULNSCAN_DATA_DIR:-.data}
export VULNSCAN_PKI_DIR=${VULNSCAN_PKI_DIR:-$root/.data/pki}
"$bin/vulnscan-pki" "$VULNSCAN_PKI_DIR" || exit 1

# One database role per service, owner of its own schema only
# (bin/vulnscan-dbroles): it connects with DATABASE_URL as administrator and
# exports AUTH_DATABASE_URL, … (DATABASE_URL with the service's role and its
# password from $data_dir/db-roles) for every service whose variable is
# unset. When DATABASE_URL's role may not create roles it warns and exports
# nothing: every service then uses DATABASE_URL as before.
roles=$("$bin/vulnscan-dbroles" -format shell -password-dir "$data_dir/db-roles") || { "$here/stores.sh" stop; exit 1; }
eval "$roles"

export SCAN_MODE=${SCAN_MODE:-all}
pids=()
start() {
  local name=$1; shift
  # The prefixer ignores SIGINT so that it keeps draining the process's
  # shutdown logs; it exits when the process closes its output.
  "$@" > >(trap '' INT TERM; exec "$bin/logprefix" "$name") 2>&1 &
  pids+=($!)
}
stopping=""
shutdown() {
  [ -n "$stopping" ] && return
  stopping=1
  echo "[run] stopping" >&2
  kill -TERM "${pids[@]}" 2>/dev/null
}
trap shutdown INT TERM

start auth "$bin/auth"
start estimation "$bin/estimation"
start findings "$bin/findings"
start scan "$bin/scan"
start gateway "$bin/gateway"
echo "[run] vulnscan is starting: API at http://${VULNSCAN_HTTP_ADDR:-127.0.0.1:8080}/v1 (Ctrl-C stops)" >&2

# Wait until every process has exited; a process that dies stops the others.
while :; do
  alive=0
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
  [ "$alive" -eq 0 ] && break
  if [ "$alive" -lt "${#pids[@]}" ] && [ -z "$stopping" ]; then
    echo "[run] a process exited; stopping the others" >&2
    shutdown
  fi
  sleep 0.5
done
"$here/stores.sh" stop
wait 2>/dev/null
