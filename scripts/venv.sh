#!/usr/bin/env bash
# Create .venv with evoci installed (editable) — idempotent: re-installs only when
# pyproject.toml changed since the last install.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
python="${PYTHON:-python3}"

if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "evoci needs Python ≥ 3.11; '$python' is $("$python" --version 2>&1). Set PYTHON=python3.11." >&2
    exit 1
fi
if [ ! -x .venv/bin/python ]; then
    if ! "$python" -m venv .venv 2>/dev/null; then
        # Debian ships venv separately.
        if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
            apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
            rm -rf .venv && "$python" -m venv .venv
        else
            echo "cannot create a virtualenv: install python3-venv (sudo apt-get install python3-venv)" >&2
            exit 1
        fi
    fi
fi
stamp=.venv/.evoci-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    # Quiet: pip's own -q, and no Python warnings from the build backend (setuptools prints a
    # boxed notice about every editable install). Failures still print.
    export PYTHONWARNINGS=ignore
    .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip setuptools wheel
    .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dev]"
    unset PYTHONWARNINGS
    touch "$stamp"
fi
