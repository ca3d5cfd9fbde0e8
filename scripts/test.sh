#!/usr/bin/env bash
# The README's test command: set up everything the tests need, then run them all.
#   - .venv with evoci (scripts/venv.sh)
#   - bubblewrap, the local sandbox's isolation (scripts/bwrap.sh); required, like Docker, when
#     EVOCI_REQUIRE_DOCKER=1 (CI), so the red-team suite never silently skips a sandbox
#   - a Docker engine and evoci's offline base image (scripts/docker-up.sh), when this
#     machine can have one; set EVOCI_REQUIRE_DOCKER=1 to fail instead of skipping
#     Docker tests when it cannot (CI does)
#   - Chromium, for the UI screenshot test (scripts/chromium.sh)
#   - cmake, g++ and GoogleTest, for the C++ NITR probe (scripts/cpp-tools.sh)
#   - the pinned agent CLIs the preset tests run (scripts/agents.sh; cached in $EVOCI_TOOLS);
#     required when EVOCI_REQUIRE_DOCKER=1 (CI), else their tests skip
#   - PostgreSQL's server programs, for the results store on a server (scripts/postgres.sh)
# The default run leaves out the tests marked `heavy` (the other agent CLIs, the red team in
# Docker too): EVOCI_TEST_ALL=1 runs the full matrix. Extra arguments go to pytest.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

bash scripts/venv.sh

state="$(mktemp -d "${TMPDIR:-/tmp}/evoci-test.XXXXXX")"
pidfile=""
cleanup() {
    if [ -n "$pidfile" ]; then bash scripts/docker-down.sh "$pidfile" || true; fi
    rm -rf "$state"
}
trap cleanup EXIT

if ! bash scripts/bwrap.sh; then
    if [ "${EVOCI_REQUIRE_DOCKER:-0}" = "1" ]; then
        echo "test: bubblewrap is required (EVOCI_REQUIRE_DOCKER=1) but cannot start here" >&2
        exit 1
    fi
    echo "test: no bubblewrap here; tests of the isolated local sandbox will fail" >&2
fi

if out="$(bash scripts/docker-up.sh "$state/dockerd" 2>"$state/docker-up.log")"; then
    pidfile="$(printf '%s\n' "$out" | sed -n 's/^pidfile=//p')"
else
    cat "$state/docker-up.log" >&2
    if [ "${EVOCI_REQUIRE_DOCKER:-0}" = "1" ]; then
        echo "test: a Docker engine is required (EVOCI_REQUIRE_DOCKER=1) but could not be started" >&2
        exit 1
    fi
    echo "test: no Docker engine here; Docker tests will be skipped" >&2
fi
if [ -x scripts/chromium.sh ] || [ -f scripts/chromium.sh ]; then
    bash scripts/chromium.sh || echo "test: Chromium unavailable; the screenshot test will be skipped" >&2
fi
# PostgreSQL's server programs: the tests of the PostgreSQL results store start their own server.
bash scripts/postgres.sh install
bash scripts/cpp-tools.sh || echo "test: cmake/g++/GoogleTest unavailable; the C++ NITR tests will be skipped" >&2
# The default run tests Claude Code's preset; the full matrix every CLI.
if [ "${EVOCI_TEST_ALL:-0}" != "1" ]; then export EVOCI_AGENT_CLIS="${EVOCI_AGENT_CLIS:-claude-code}"; fi
if out="$(bash scripts/agents.sh)"; then
    export "$(printf '%s\n' "$out" | grep '^EVOCI_TOOLS=')"
elif [ "${EVOCI_REQUIRE_DOCKER:-0}" = "1" ]; then
    echo "test: the agent CLIs could not be installed (required in CI)" >&2
    exit 1
else
    echo "test: agent CLIs unavailable; the preset tests will be skipped" >&2
fi

# pytest exits 5 when it ran no test: that is a failure here, and set -e makes it one.
# Two worker processes (EVOCI_TEST_WORKERS; 0 runs in this process): most tests wait on
# subprocesses and servers, so two share 2 cores well. Docker tests take turns (tests/serial.py).
workers="${EVOCI_TEST_WORKERS:-2}"
parallel=()
if [ "$workers" != "0" ]; then parallel=(-n "$workers"); fi
.venv/bin/python -m pytest -q -p no:cacheprovider "${parallel[@]}" "$@"
