#!/usr/bin/env bash
# Install the agent CLIs the tests run, at evoci's pinned versions, into one cached tools folder
# (idempotent: an installation that is complete is kept; `evoci agents install` decides).
#   EVOCI_TOOLS   where they go (default: ~/.cache/evoci/tools, shared by every checkout)
#   EVOCI_AGENT_CLIS  which ones (default: all five). OpenCode is included although it pulls
#                 ~354 MB of platform packages: it is the CLI the official SWE-CI harness runs,
#                 so its preset is the one most worth a real test; the download happens once.
# Prints `EVOCI_TOOLS=<folder>` for the caller to export. Fails if any install fails.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export EVOCI_TOOLS="${EVOCI_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/evoci/tools}"
clis="${EVOCI_AGENT_CLIS:-claude-code codex opencode mini-swe-agent aider}"
mkdir -p "$EVOCI_TOOLS"
# One installer at a time per tools folder (two checkouts may share it).
exec 9>"$EVOCI_TOOLS/.install.lock"
flock 9
# shellcheck disable=SC2086  # a list of names
"$repo/.venv/bin/evoci" agents install $clis >&2
echo "EVOCI_TOOLS=$EVOCI_TOOLS"
