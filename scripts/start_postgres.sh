#!/usr/bin/env bash
# Start a throwaway PostgreSQL server for the store's tests and print the line that points them at it:
#   eval "$(bash scripts/start_postgres.sh)"   # sets CONTEXTWEAVER_PG_DSN (and CONTEXTWEAVER_PG_DIR)
# Stop it with: pg_ctl -D "$CONTEXTWEAVER_PG_DIR/data" stop   (as the user that started it), then remove
# "$CONTEXTWEAVER_PG_DIR" (~47 MB) unless you named it yourself; scripts/test.sh does both on exit.
# Uses the PostgreSQL binaries of the machine (installs Debian's `postgresql` package when they are
# missing and we are root). PostgreSQL refuses to run as root, so as root it runs as `postgres`.
set -euo pipefail

find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
PGBIN="$(find_bin)"
if [ -z "$PGBIN" ] && [ "$(id -u)" = 0 ]; then
    echo "no PostgreSQL binaries: installing Debian's postgresql package" >&2
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
    PGBIN="$(find_bin)"
fi
if [ -z "$PGBIN" ]; then
    echo "PostgreSQL server binaries not found (apt-get install postgresql)" >&2
    exit 1
fi

PORT="${CONTEXTWEAVER_PG_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
if [ -n "${CONTEXTWEAVER_PG_DIR:-}" ]; then
    DIR="$CONTEXTWEAVER_PG_DIR"
    mkdir -p "$DIR"
else  # a folder of our own: removed again if the server does not start (the caller removes it after)
    DIR="$(mktemp -d /tmp/contextweaver-pg.XXXXXX)"
    trap '[ "$?" = 0 ] || rm -rf -- "$DIR"' EXIT
fi

as_owner() { "$@"; }
if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    chown postgres "$DIR"
    as_owner() { runuser -u postgres -- "$@"; }
fi

if [ ! -f "$DIR/data/PG_VERSION" ]; then
    as_owner "$PGBIN/initdb" -D "$DIR/data" -U contextweaver -A trust --no-sync -E UTF8 >"$DIR/initdb.log" 2>&1 \
        || { cat "$DIR/initdb.log" >&2; exit 1; }
fi
as_owner "$PGBIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
    -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c fsync=on" start >&2 \
    || { cat "$DIR/server.log" >&2; exit 1; }
as_owner "$PGBIN/createdb" -h 127.0.0.1 -p "$PORT" -U contextweaver contextweaver 2>/dev/null || true

echo "export CONTEXTWEAVER_PG_DIR=$DIR"
echo "export CONTEXTWEAVER_PG_DSN=postgresql://contextweaver@127.0.0.1:$PORT/contextweaver"
