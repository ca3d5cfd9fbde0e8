#!/usr/bin/env bash
# A PostgreSQL server for evoci's results store and for a Prefect server, on this machine.
#
#   scripts/postgres.sh install                   install the server programs if missing
#   scripts/postgres.sh up   [STATE_DIR] [PORT]   start it (idempotent); prints the URLs
#   scripts/postgres.sh down [STATE_DIR]          stop it
#
# STATE_DIR (default ${TMPDIR:-/tmp}/evoci-postgres) holds the cluster, its log and its socket;
# PORT (default 55432) is on 127.0.0.1 only. Two databases are created: `evoci` (results) and
# `prefect` (a Prefect server's own database). `up` prints, one per line:
#   store=postgresql://evoci@127.0.0.1:PORT/evoci            for --store / EVOCI_STORE
#   prefect=postgresql+asyncpg://evoci@127.0.0.1:PORT/prefect for `evoci server --database`
# Authentication is `trust` on loopback: a server for one machine or a test. On shared hosts,
# give PostgreSQL your site's authentication and pass a URL with a password instead.
#
# PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres` user
# (Debian's package creates it). The server programs come from PATH or Debian's
# /usr/lib/postgresql/<version>/bin; when neither has them, Debian's `postgresql` is installed.
set -euo pipefail

action="${1:-}"
state="${2:-${TMPDIR:-/tmp}/evoci-postgres}"
port="${3:-55432}"
log() { printf '[postgres] %s\n' "$*" >&2; }

find_bin() {
    if command -v pg_ctl >/dev/null 2>&1; then dirname "$(readlink -f "$(command -v pg_ctl)")"; return; fi
    local d
    for d in /usr/lib/postgresql/*/bin; do
        if [ -x "$d/pg_ctl" ]; then echo "$d"; return; fi
    done
}

as_owner() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# The cluster's folder. As root it must be reachable by the `postgres` user: when STATE_DIR is
# not (a private temporary folder, say), the cluster lives in a folder of its own under
# ${TMPDIR:-/tmp}, named after STATE_DIR, which records where it is.
cluster_dir() {
    if [ -s "$state/cluster-dir" ]; then cat "$state/cluster-dir"; return; fi
    local dir="$state/cluster"
    if [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -w "$state"; then
        dir="${TMPDIR:-/tmp}/evoci-postgres-$(printf '%s' "$(cd "$state" && pwd)" | cksum | cut -d' ' -f1)"
    fi
    echo "$dir" >"$state/cluster-dir"
    echo "$dir"
}

install_programs() {
    bin="$(find_bin)"
    if [ -z "$bin" ]; then
        if [ "$(id -u)" -ne 0 ]; then
            log "PostgreSQL's server programs are missing: install them (sudo apt-get install postgresql) and retry"
            exit 1
        fi
        log "installing Debian's postgresql with apt (about a minute)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
        bin="$(find_bin)"
    fi
}

case "$action" in
install)
    install_programs
    log "server programs in $bin"
    ;;
up)
    install_programs
    mkdir -p "$state"
    cluster="$(cluster_dir)"
    mkdir -p "$cluster"
    if [ "$(id -u)" -eq 0 ]; then chown postgres: "$cluster"; fi
    data="$cluster/data"
    if [ ! -s "$data/PG_VERSION" ]; then
        as_owner "$bin/initdb" -D "$data" -U evoci --auth=trust -E UTF8 --locale=C.UTF-8 >"$state/initdb.log" 2>&1 \
            || { cat "$state/initdb.log" >&2; exit 1; }
    fi
    if ! as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
        as_owner "$bin/pg_ctl" -D "$data" -l "$cluster/postgres.log" -w -t 60 start \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $cluster -c max_connections=200" >/dev/null \
            || { tail -20 "$cluster/postgres.log" >&2; exit 1; }
    fi
    for db in evoci prefect; do
        if ! as_owner "$bin/psql" -h "$cluster" -p "$port" -U evoci -d postgres -tAc \
            "select 1 from pg_database where datname = '$db'" | grep -q 1; then
            as_owner "$bin/createdb" -h "$cluster" -p "$port" -U evoci "$db"
        fi
    done
    log "running on 127.0.0.1:$port (data and log in $cluster)"
    echo "store=postgresql://evoci@127.0.0.1:$port/evoci"
    echo "prefect=postgresql+asyncpg://evoci@127.0.0.1:$port/prefect"
    ;;
down)
    bin="$(find_bin)"
    if [ -n "$bin" ] && [ -s "$state/cluster-dir" ]; then
        cluster="$(cat "$state/cluster-dir")"
        as_owner "$bin/pg_ctl" -D "$cluster/data" -m fast -w stop >/dev/null 2>&1 || true
        # A cluster kept outside STATE_DIR goes with it: nothing is left behind in the shared folder.
        case "$cluster" in "$state"/*) ;; *) rm -rf "$cluster" ;; esac
    fi
    ;;
*)
    echo "usage: scripts/postgres.sh install|up|down [STATE_DIR] [PORT]" >&2
    exit 2
    ;;
esac
