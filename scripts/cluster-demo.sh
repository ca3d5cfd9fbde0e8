#!/usr/bin/env bash
# The cluster demo: PostgreSQL, a Prefect server on it and two workers on this machine, one run's
# tasks spread over both, every fact checked against the embedded default (scripts/cluster_demo.py).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
bash scripts/venv.sh
bash scripts/bwrap.sh >/dev/null || true
exec .venv/bin/python scripts/cluster_demo.py "$@"
