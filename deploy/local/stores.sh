#!/usr/bin/env bash
# Obtains the PostgreSQL and Redis that `make run` and `make test` use.
#
#   stores.sh ensure [test]   make $DATABASE_URL and $REDIS_URL answer
#   stores.sh stop            stop the private instances this script started
#
# When something already answers at an address it is used as it is. When
# nothing does and the address is on this machine, a private instance is
# started from the machine's own postgres / redis-server binaries with its
# data under $VULNSCAN_DATA_DIR (default .data); the Debian packages are
# installed first when the binaries are missing and we run as root. "test"
# turns off fsync for the private Postgres (test data is disposable).
set -euo pipefail

DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/vulnscan?sslmode=disable}
REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0}
DATA=${VULNSCAN_DATA_DIR:-.data}
mkdir -p "$DATA"
DATA=$(cd "$DATA" && pwd)

say() { echo "stores: $*" >&2; }
die() { say "$*"; exit 1; }

# host and port of a URL, defaults given
url_host() { local r=${1#*://}; r=${r#*@}; r=${r%%/*}; r=${r%%\?*}; local h=${r%:*}; [ "$h" = "$r" ] && h=$r; h=${h#[}; echo "${h%]}"; }
url_port() { local r=${1#*://}; r=${r#*@}; r=${r%%/*}; r=${r%%\?*}; case "$r" in *:*) echo "${r##*:}";; *) echo "$2";; esac; }

answers() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
is_local() { case "$1" in 127.*|localhost|::1) return 0;; *) return 1;; esac; }

install_pkgs() {
  [ "$(id -u)" = 0 ] || die "$* missing and not root: install it (e.g. apt-get install $*)"
  command -v apt-get >/dev/null || die "$* missing and apt-get unavailable"
  say "installing $*"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

pg_bin() {
  local b
  if b=$(command -v "$1" 2>/dev/null); then echo "$b"; return; fi
  b=$(ls -d /usr/lib/postgresql/*/bin/"$1" 2>/dev/null | sort -V | tail -n 1)
  [ -n "$b" ] && echo "$b"
}

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

start_postgres() {
  local host=$1 port=$2 mode=$3
  local dir="$DATA/postgres-$port"
  [ -n "$(pg_bin initdb)" ] || install_pkgs postgresql
  local initdb pgctl; initdb=$(pg_bin initdb); pgctl=$(pg_bin pg_ctl)
  [ -n "$initdb" ] && [ -n "$pgctl" ] || die "postgres binaries not found"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql postgres
    # The server runs as postgres: let it reach the data directory by adding
    # traverse permission (not read) where a parent lacks it, e.g. a private
    # temporary directory.
    local d=$DATA
    while [ -n "$d" ] && [ "$d" != / ]; do
      runuser -u postgres -- test -x "$d" 2>/dev/null || chmod o+x "$d"
      d=$(dirname "$d")
    done
  fi
  if [ ! -f "$dir/PG_VERSION" ]; then
    mkdir -p "$dir"; [ "$(id -u)" = 0 ] && chown postgres "$dir"
    say "initializing private PostgreSQL in $dir"
    as_pg "$initdb" -D "$dir" -A trust -U postgres -N >"$DATA/postgres-$port.init.log" 2>&1 || { cat "$DATA/postgres-$port.init.log" >&2; die "initdb failed"; }
  fi
  local opts="-c listen_addresses=$host -p $port -k $dir -c max_connections=300"
  [ "$mode" = test ] && opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  say "starting private PostgreSQL on $host:$port"
  as_pg "$pgctl" -D "$dir" -o "$opts" -l "$dir/server.log" -w -t 60 start >&2 || { tail -20 "$dir/server.log" >&2; die "postgres did not start"; }
  echo "$dir" >"$DATA/.started-postgres"
}

start_redis() {
  local host=$1 port=$2
  local dir="$DATA/redis-$port"
  command -v redis-server >/dev/null || install_pkgs redis-server
  mkdir -p "$dir"
  say "starting private Redis on $host:$port"
  redis-server --bind "$host" --port "$port" --save "" --appendonly no --daemonize yes \
    --dir "$dir" --logfile "$dir/redis.log" --pidfile "$dir/redis.pid" >&2
  for _ in $(seq 1 100); do answers "$host" "$port" && break; sleep 0.1; done
  answers "$host" "$port" || die "redis did not start"
  echo "$dir" >"$DATA/.started-redis"
}

ensure() {
  local mode=${1:-run}
  local ph pp rh rp
  ph=$(url_host "$DATABASE_URL"); pp=$(url_port "$DATABASE_URL" 5432)
  rh=$(url_host "$REDIS_URL"); rp=$(url_port "$REDIS_URL" 6379)
  if answers "$ph" "$pp"; then
    say "using PostgreSQL at $ph:$pp"
  elif is_local "$ph"; then
    [ "$ph" = localhost ] && ph=127.0.0.1
    start_postgres "$ph" "$pp" "$mode"
  else
    die "nothing answers at DATABASE_URL ($ph:$pp)"
  fi
  if answers "$rh" "$rp"; then
    say "using Redis at $rh:$rp"
  elif is_local "$rh"; then
    [ "$rh" = localhost ] && rh=127.0.0.1
    start_redis "$rh" "$rp"
  else
    die "nothing answers at REDIS_URL ($rh:$rp)"
  fi
}

stop() {
  if [ -f "$DATA/.started-postgres" ]; then
    local dir; dir=$(cat "$DATA/.started-postgres")
    say "stopping private PostgreSQL"
    as_pg "$(pg_bin pg_ctl)" -D "$dir" -m fast -w stop >/dev/null 2>&1 || true
    rm -f "$DATA/.started-postgres"
  fi
  if [ -f "$DATA/.started-redis" ]; then
    local dir; dir=$(cat "$DATA/.started-redis")
    say "stopping private Redis"
    [ -f "$dir/redis.pid" ] && kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
    rm -f "$DATA/.started-redis"
  fi
}

case "${1:-}" in
  ensure) ensure "${2:-run}" ;;
  stop) stop ;;
  *) echo "usage: $0 ensure [test] | stop" >&2; exit 2 ;;
esac
