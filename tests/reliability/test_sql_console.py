"""`evoci sql` and `evoci report` read the results file and nothing else.

Each attack runs through the command's entry point (``evoci.cli.main``, as the ``evoci`` script
does; one test runs the installed script in its own process). Canaries: another results file
beside the home (attach … READ_ONLY false, then delete/drop), the file a COPY or EXPORT would
write, and a file outside the results that a query would read. Every view still answers with
DuckDB's access to other files switched off.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from evoci.cli import main
from evoci.store import Facts, IterationRow, TaskRow

EVOCI = str(Path(sys.executable).parent / "evoci")


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def evoci(capsys, monkeypatch):
    """Run one evoci command line; its exit code and what it printed."""
    def run(*args: str, cwd: Path) -> Done:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        code = main(list(args))
        out = capsys.readouterr()
        return Done(code, out.out, out.err)
    return run


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A home with one scored run, another results file beside it, and a secret outside both."""
    root = tmp_path_factory.mktemp("place")
    home = root / "home"
    facts = Facts(home / "evoci.duckdb")
    facts.run("r1", protocol="swe-ci", dataset="d", max_iterations=1, config_hash="h", config={})
    facts.task(TaskRow("r1", "t", "swe-ci", "done"))
    facts.targets("r1", "t", {"a": "target"})
    facts.iteration(IterationRow("r1", "t", 0, "ok", {"a": "failed"}))
    facts.iteration(IterationRow("r1", "t", 1, "ok", {"a": "passed"}))
    other = Facts(root / "other.duckdb")
    other.run("victim", protocol="swe-ci", dataset="d", max_iterations=1, config_hash="h", config={})
    (root / "secret.csv").write_text("token,value\nsecret,s3cr3t-canary\n")
    return root


@pytest.fixture
def place(template, tmp_path):
    """A fresh copy of the template (each attack meets untouched files)."""
    shutil.copytree(template, tmp_path / "place")
    return tmp_path / "place"


ATTACKS = [
    "attach '{root}/other.duckdb' as o (READ_ONLY false); delete from o.runs",
    "attach '{root}/other.duckdb' as o; drop table o.runs",
    "delete from runs",
    "drop table runs",
    "copy runs to '{root}/written.csv'",
    "export database '{root}/exported'",
    "select * from read_csv('{root}/secret.csv')",
    "select * from read_text('{root}/secret.csv')",
    "select * from '{root}/other.duckdb'",
    "set enable_external_access = true; select * from read_csv('{root}/secret.csv')",
    "set lock_configuration = false",
    "pragma enable_external_access = true",
    "install httpfs",
    "load httpfs",
    "create table runs2 as select * from runs",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_sql_cannot_write_or_read_any_file_but_the_results(place, attack, evoci):
    results, other = place / "home" / "evoci.duckdb", place / "other.duckdb"
    before = {p.name: digest(p) for p in (results, other)}
    done = evoci("sql", attack.format(root=place), "--home", str(place / "home"), "--format", "csv", cwd=place)
    assert done.returncode != 0, done.stdout
    assert "s3cr3t-canary" not in done.stdout + done.stderr
    assert done.stderr.startswith("evoci: "), done.stderr  # a one-line message, no traceback
    assert {p.name: digest(p) for p in (results, other)} == before
    assert not (place / "written.csv").exists() and not (place / "exported").exists()
    con = duckdb.connect(str(other), read_only=True)
    assert con.execute("select run_id from runs").fetchall() == [("victim",)]
    con.close()


def test_reading_a_file_needs_its_folder_named(place, evoci):
    home = str(place / "home")
    query = f"select value from read_csv('{place}/secret.csv')"
    refused = evoci("sql", query, "--home", home, cwd=place)
    assert refused.returncode == 1 and "--allow-files DIR" in refused.stderr
    allowed = evoci("sql", query, "--home", home, "--allow-files", str(place), "--format", "csv", cwd=place)
    assert allowed.returncode == 0 and "s3cr3t-canary" in allowed.stdout
    still_no_write = evoci("sql", f"copy runs to '{place}/written.csv'", "--home", home, "--allow-files", str(place),
                           cwd=place)
    assert still_no_write.returncode == 2 and not (place / "written.csv").exists()


@pytest.mark.parametrize("query", ["", "   ", ";"])
def test_an_empty_query_is_a_clear_error(place, query, evoci):
    done = evoci("sql", query, "--home", str(place / "home"), cwd=place)
    assert done.returncode == 2
    assert done.stderr.strip() == 'evoci: the query is empty — pass SQL, e.g. evoci sql "select * from runs"'


def test_every_view_answers_on_the_locked_console_and_report_works(place):
    """The installed script, in its own process: every view, then `evoci report`, with file access off."""
    con = duckdb.connect(str(place / "home" / "evoci.duckdb"), read_only=True)
    views = [v for (v,) in con.execute("select view_name from duckdb_views() where not internal order by 1").fetchall()]
    con.close()
    assert len(views) > 20
    union = " union all ".join(f"select '{v}' as view, count(*) as n from (select * from {v})" for v in views)
    run = dict(cwd=place, capture_output=True, text=True, timeout=300)
    done = subprocess.run([EVOCI, "sql", union, "--home", str(place / "home"), "--format", "csv"], **run)
    assert done.returncode == 0, done.stderr
    assert sorted(line.split(",")[0] for line in done.stdout.splitlines()[1:]) == sorted(views)
    report = subprocess.run([EVOCI, "report", "--home", str(place / "home")], **run)
    assert report.returncode == 0, report.stderr
    assert "run r1" in report.stdout
