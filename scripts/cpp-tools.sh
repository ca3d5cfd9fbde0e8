#!/usr/bin/env bash
# Make the host tools of evoci's C++ NITR probes available, idempotently:
# cmake, a C++ compiler and GoogleTest (Debian's libgtest-dev, found by find_package(GTest)).
# Installs the missing ones with apt-get (needs root or sudo).
set -euo pipefail

log() { printf '[cpp-tools] %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

have_gtest() { [ -f /usr/include/gtest/gtest.h ] && [ -n "$(find /usr/lib /usr/local/lib -name libgtest.a -print -quit 2>/dev/null)" ]; }

if command -v cmake >/dev/null 2>&1 && command -v g++ >/dev/null 2>&1 && have_gtest; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    log "cmake, g++ or GoogleTest is missing and there is no apt-get; install them to run the C++ probes"
    exit 1
fi
log "installing cmake, g++ and libgtest-dev with apt-get"
as_root apt-get update -qq
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends cmake g++ make libgtest-dev >/dev/null
have_gtest || { log "libgtest-dev installed but GoogleTest's headers or libraries are missing"; exit 1; }
