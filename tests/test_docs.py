"""The documentation: the README stays a front page, and the site builds strictly from a checkout.

``scripts/docs.sh`` builds the MkDocs site with ``--strict``, so a broken link between pages, a
missing anchor or a page left out of the nav fails here. The metric-views page is rendered from
``sql/views/*.sql`` during the build; the test checks that it names every view file, so a new
view can never go undocumented.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built once for this module by the same command a person runs."""
    out = tmp_path_factory.mktemp("docs") / "site"
    result = subprocess.run(["bash", "scripts/docs.sh", str(out)], cwd=ROOT, capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, f"bash scripts/docs.sh failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return out


def test_the_docs_build_strictly(site):
    assert (site / "index.html").is_file()


def test_the_metric_views_page_names_every_view_file(site):
    page = (site / "reference" / "metric-views" / "index.html").read_text(encoding="utf-8")
    views = sorted(p.name for p in (ROOT / "sql" / "views").glob("*.sql"))
    assert views, "sql/views/ holds no view file"
    missing = [name for name in views if name not in page]
    assert not missing, f"the metric-views page does not name {missing}"


def test_the_base_tables_page_names_every_table(site):
    page = (site / "reference" / "base-tables" / "index.html").read_text(encoding="utf-8")
    tables = re.findall(r"^create table if not exists (\w+)", (ROOT / "sql" / "schema.sql").read_text(), re.M)
    assert tables and all(f"<code>{t}</code>" in page for t in tables)


def test_the_readme_is_a_front_page_with_the_two_commands_first():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines: move detail into docs/ (at most 300)"
    first = "\n".join(lines[:25])
    assert "bash scripts/demo.sh" in first and "bash scripts/test.sh" in first


def test_the_readme_links_only_to_files_that_exist():
    targets = re.findall(r"\]\(((?!https?:|#)[^)#\s]+)", README.read_text(encoding="utf-8"))
    assert targets, "the README links into the docs"
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"
