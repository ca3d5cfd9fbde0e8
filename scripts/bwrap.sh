#!/usr/bin/env bash
# Make bubblewrap available for the local sandbox's isolation, idempotently.
#
#   scripts/bwrap.sh      exits 0 when `bwrap` can start a sandbox here
#
# Installs Debian's `bubblewrap` package with apt-get when `bwrap` is missing (needs root or sudo),
# then checks that it can create the namespaces evoci uses.
set -euo pipefail

log() { printf '[bwrap] %s\n' "$*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if ! command -v bwrap >/dev/null 2>&1; then
    if ! command -v apt-get >/dev/null 2>&1; then
        log "bubblewrap is missing and there is no apt-get to install it; install bubblewrap"
        exit 1
    fi
    log "installing bubblewrap with apt"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null
fi
if ! bwrap --unshare-all --unshare-user --die-with-parent --ro-bind / / --proc /proc --dev /dev -- /bin/true; then
    log "bwrap is installed but cannot create namespaces here (user namespaces disabled?)"
    exit 1
fi
