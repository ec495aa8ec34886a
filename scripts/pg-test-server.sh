#!/usr/bin/env bash
# A throwaway PostgreSQL server on loopback for tests and CI (never for data you keep: fsync is off).
#
#   scripts/pg-test-server.sh start DIR   initializes a cluster under DIR (created if missing), starts it on a
#                                         free 127.0.0.1 port, creates the database `weft` and prints its URL
#   scripts/pg-test-server.sh stop DIR    stops the server started under DIR and removes DIR
#
# The server refuses to run as root, so under root every server command runs as the `postgres` user.
set -euo pipefail

bin_dir() {
  local initdb
  initdb=$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$initdb" ]; then echo "pg-test-server: no /usr/lib/postgresql/*/bin/initdb (apt-get install postgresql)" >&2; exit 2; fi
  dirname "$initdb"
}
as_server() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then echo "usage: $0 start|stop DIR" >&2; exit 2; fi
bin=$(bin_dir)

case "$cmd" in
  start)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    mkdir -p "$dir/data" "$dir/socket" "$dir/log"
    # The server user must reach its directories through DIR.
    chmod 755 "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$dir/data" "$dir/socket" "$dir/log"; fi
    as_server "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    # A free port from the kernel; a race with another process taking it is retried below.
    for attempt in 1 2 3 4 5; do
      port=$(node -e 'const s=require("node:net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
      if as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/log/server.log" -w -t 30 \
        -o "-k $dir/socket -h 127.0.0.1 -p $port -c fsync=off -c full_page_writes=off -c max_connections=100" start >/dev/null; then
        echo "$port" >"$dir/port"
        break
      fi
      if [ "$attempt" = 5 ]; then cat "$dir/log/server.log" >&2; exit 1; fi
    done
    as_server "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres weft
    echo "postgres://postgres@127.0.0.1:$port/weft"
    ;;
  stop)
    if [ -f "$dir/data/postmaster.pid" ]; then as_server "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null || true; fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
