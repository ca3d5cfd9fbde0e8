#!/usr/bin/env bash
# Build the documentation site with MkDocs, strictly: any warning (a broken link between pages,
# a missing anchor, a page left out of the nav) fails the build. Idempotent; needs no network
# once MkDocs is installed.
#   bash scripts/docs.sh [SITE_DIR]      (default: site/)
# The metric-views and base-tables pages are rendered from sql/ by docs/hooks.py during the build.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
site="${1:-site}"

bash scripts/venv.sh

# The pins live in pyproject.toml's `docs` extra. Installed on their own rather than as
# `-e .[docs]`: evoci is already installed, and re-installing it would touch the package that
# a test run in this same .venv may be importing.
mapfile -t requirements < <(.venv/bin/python - <<'PY'
import tomllib
with open("pyproject.toml", "rb") as f:
    print("\n".join(tomllib.load(f)["project"]["optional-dependencies"]["docs"]))
PY
)
if ! .venv/bin/python - "${requirements[@]}" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
for requirement in sys.argv[1:]:
    name, _, pinned = requirement.partition("==")
    if version(name) != pinned:
        sys.exit(1)
PY
then
    PYTHONWARNINGS=ignore .venv/bin/python -m pip install -q --disable-pip-version-check "${requirements[@]}" || {
        echo "docs: could not install ${requirements[*]} into .venv — check that the package index is reachable, then run this again" >&2
        exit 1
    }
fi

# --strict turns every warning into a failure; the output folder is whatever the caller named.
if ! .venv/bin/python -m mkdocs build --strict --clean --config-file mkdocs.yml --site-dir "$site"; then
    echo "docs: the build failed — fix the pages or links named above (mkdocs.yml lists every page), then run this again" >&2
    exit 1
fi
echo "docs: built $site/index.html"
