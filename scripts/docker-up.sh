#!/usr/bin/env bash
# Make a Docker engine available, idempotently, and build evoci's base image.
#
#   scripts/docker-up.sh [STATE_DIR]
#
# If `docker info` already answers, the engine is left alone. Otherwise docker.io (and
# debootstrap, which the offline base-image recipe needs) is installed with apt when `dockerd`
# is missing, `dockerd` is started in the background with its log and pid file in STATE_DIR
# (default: ${TMPDIR:-/tmp}/evoci-dockerd), and the script waits up to 60 s for it to answer.
# The pid file's path is printed as `pidfile=<path>`; stop the engine with
# `scripts/docker-down.sh <path>`. Finally the base image is built (skipped when it exists), with
# the host's CA bundle (or $EVOCI_CA_BUNDLE) inside.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
state_dir="${1:-${TMPDIR:-/tmp}/evoci-dockerd}"
wait_s=60

log() { printf '[docker-up %5ss] %s\n' "$SECONDS" "$*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if docker info >/dev/null 2>&1; then
    log "engine already answering; leaving it alone"
else
    if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1 \
        || ! command -v debootstrap >/dev/null 2>&1; then
        log "installing docker.io, debootstrap, ca-certificates with apt"
        as_root apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            docker.io debootstrap ca-certificates >/dev/null
    fi
    mkdir -p "$state_dir"
    pidfile="$state_dir/dockerd.pid"
    logfile="$state_dir/dockerd.log"
    if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
        log "dockerd $(cat "$pidfile") from $pidfile is running but not answering yet"
    else
        log "starting dockerd (log: $logfile)"
        # setsid: a Ctrl-C in the caller's terminal must not reach the engine. setsid and
        # nohup exec in place, so $! is dockerd's own pid (sudo's when not root; it relays signals).
        if [ "$(id -u)" -eq 0 ]; then
            setsid nohup dockerd >"$logfile" 2>&1 </dev/null &
        else
            sudo setsid nohup dockerd >"$logfile" 2>&1 </dev/null &
        fi
        echo $! >"$pidfile"
    fi
    deadline=$((SECONDS + wait_s))
    until docker info >/dev/null 2>&1; do
        if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
            log "dockerd exited; last lines of $logfile:"
            tail -n 20 "$logfile" >&2 || true
            exit 1
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            log "dockerd did not answer within ${wait_s}s; see $logfile"
            exit 1
        fi
        sleep 0.5
    done
    log "engine ready"
    echo "pidfile=$pidfile"
fi

if ! command -v debootstrap >/dev/null 2>&1; then
    log "installing debootstrap with apt (needed to build the base image offline)"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        debootstrap ca-certificates >/dev/null
fi

bootstrap=()
if [ -x "$repo/.venv/bin/evoci" ] && "$repo/.venv/bin/evoci" images --help >/dev/null 2>&1; then
    bootstrap=("$repo/.venv/bin/evoci" images bootstrap)
else
    bootstrap=("$repo/.venv/bin/python" -m evoci.sandbox.docker.bootstrap)
fi
# The host's CA bundle goes into the image so pip works behind TLS-intercepting proxies;
# EVOCI_CA_BUNDLE names another file.
ca_bundle="${EVOCI_CA_BUNDLE:-system}"
log "building the base image: ${bootstrap[*]} --ca-bundle $ca_bundle"
"${bootstrap[@]}" --ca-bundle "$ca_bundle"
log "done"
