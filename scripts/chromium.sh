#!/usr/bin/env bash
# Make headless Chromium available for scripts/screenshot.py, idempotently.
#
#   scripts/chromium.sh        prints the browser's path on stdout
#
# Uses a `chromium` (or `chromium-browser`, `google-chrome`) already on PATH, or $EVOCI_CHROMIUM;
# otherwise installs Debian's `chromium` package with apt-get (needs root or sudo).
set -euo pipefail

log() { printf '[chromium] %s\n' "$*" >&2; }

find_browser() {
    if [ -n "${EVOCI_CHROMIUM:-}" ] && [ -x "${EVOCI_CHROMIUM}" ]; then
        echo "$EVOCI_CHROMIUM"; return 0
    fi
    for name in chromium chromium-browser google-chrome google-chrome-stable; do
        if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return 0; fi
    done
    return 1
}

if browser="$(find_browser)"; then
    echo "$browser"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    log "no Chromium on PATH and no apt-get to install it; install Chromium and set EVOCI_CHROMIUM"
    exit 1
fi
as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
        log "installing Chromium needs root (or sudo)"; return 1; fi
}
log "installing Debian's chromium with apt-get (about a minute)"
as_root apt-get update -qq
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
browser="$(find_browser)" || { log "apt-get installed chromium but it is not on PATH"; exit 1; }
log "installed: $("$browser" --version 2>/dev/null || echo "$browser")"
echo "$browser"
