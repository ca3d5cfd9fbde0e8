#!/usr/bin/env bash
# Stop a dockerd that scripts/docker-up.sh started:  scripts/docker-down.sh PIDFILE
set -euo pipefail

pidfile="${1:?usage: docker-down.sh PIDFILE (the path docker-up.sh printed as pidfile=...)}"
if [ ! -s "$pidfile" ]; then
    echo "docker-down: no pid in $pidfile; nothing to stop" >&2
    exit 0
fi
pid="$(cat "$pidfile")"
if ! kill -0 "$pid" 2>/dev/null; then
    echo "docker-down: dockerd $pid is not running" >&2
    rm -f "$pidfile"
    exit 0
fi
kill -TERM "$pid"
for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$pidfile"; echo "docker-down: stopped dockerd $pid" >&2; exit 0; }
    sleep 0.5
done
echo "docker-down: dockerd $pid ignored SIGTERM for 30 s; sending SIGKILL" >&2
kill -KILL "$pid" 2>/dev/null || true
rm -f "$pidfile"
