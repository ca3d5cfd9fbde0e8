#!/usr/bin/env bash
# The README's main-job command: set up .venv, then evolve the built-in demo task with the
# human-replay agent and print its score table. Extra arguments go to `evoci demo`.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
bash scripts/venv.sh
exec .venv/bin/evoci demo "$@"
