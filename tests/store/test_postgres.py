"""The results store on a real PostgreSQL server: the same facts, keys, claims and views as a DuckDB file."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import psycopg
import pytest

from evoci.cli import main
from evoci.errors import StorageError
from evoci.store import Facts, reading
from evoci.store.copy import copy_store
from evoci.store.postgres import pg_sql, redacted
from tests.swe_ci.demo.expected import PASSING_WITH_ORACLE_TESTS
from tests.store.postgres_server import new_database, postgres_server
from tests.store.test_facts import write_once

TABLES = ("runs", "tasks", "targets", "iterations", "test_results", "agent_calls", "trajectories", "failures")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with postgres_server(tmp_path_factory.mktemp("postgres")) as url:
        yield url


@pytest.fixture
def store(server):
    return new_database(server)


def counts(url: str) -> dict[str, int]:
    with psycopg.connect(url) as con:
        return {t: con.execute(f"select count(*) from {t}").fetchone()[0] for t in TABLES}


def test_statements_are_translated_to_postgresql_parameters_outside_literals():
    assert pg_sql("select ?, '?', 100 % 3 from t where a = ?") == "select %s, '?', 100 %% 3 from t where a = %s"
    assert redacted("postgresql://u:secret@h:5/db") == "postgresql://u:***@h:5/db"


def test_writing_every_fact_twice_writes_each_row_once(store):
    facts = Facts(store)
    write_once(facts)
    write_once(facts)
    assert counts(store) == {"runs": 1, "tasks": 1, "targets": 2, "iterations": 1, "test_results": 2,
                             "agent_calls": 2, "trajectories": 2, "failures": 1}


WRITER = textwrap.dedent("""
    import sys
    from evoci.store import Facts, IterationRow, TaskRow
    facts = Facts(sys.argv[1])
    worker = sys.argv[2]
    facts.run("r", protocol="swe-ci", dataset="d", max_iterations=50, config_hash="h", config={})
    for i in range(40):
        shared, own = f"shared-{i % 4}", f"{worker}-{i % 3}"
        for task in (shared, own):  # every worker writes the shared tasks' facts too
            facts.task(TaskRow("r", task, "swe-ci", "running"))
            facts.iteration(IterationRow("r", task, i, "ok", {f"t{j}": "passed" for j in range(25)}))
""")


def test_four_processes_writing_at_once_lose_and_double_nothing(store):
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, store, f"w{n}"], stderr=subprocess.PIPE, text=True)
             for n in range(4)]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    # shared tasks: 40 iterations once each, whoever wrote them; own: 40 per worker.
    assert counts(store)["iterations"] == 40 + 4 * 40
    assert counts(store)["test_results"] == (40 + 4 * 40) * 25
    assert counts(store)["tasks"] == 4 + 4 * 3


CLAIMER = textwrap.dedent("""
    import sys
    from evoci.store import Facts
    found = Facts(sys.argv[1]).claim_run("r", protocol="swe-ci", dataset="d", max_iterations=3,
                                         config_hash=sys.argv[2], config={"who": sys.argv[2]})
    print("refused" if found else "claimed")
""")


def test_two_processes_claiming_one_run_with_different_configs_one_wins_in_a_transaction(store):
    procs = [subprocess.Popen([sys.executable, "-c", CLAIMER, store, f"config-{n}"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for n in range(2)]
    outcomes = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        # A claim that lost a serialization race raises; the node running it retries. Either way one config stays.
        outcomes.append(out.strip() or ("raised" if proc.returncode else "?"))
    assert outcomes.count("claimed") == 1, outcomes
    with psycopg.connect(store) as con:
        assert con.execute("select count(*) from runs").fetchone()[0] == 1


def test_the_demo_on_postgresql_scores_as_by_hand_and_copies_to_a_file_with_the_same_views(
        store, tmp_path, capsys, prefect_server):
    home = tmp_path / "home"
    assert main(["run", "demo", "--home", str(home), "--store", store]) == 0
    assert not (home / "evoci.duckdb").exists()  # every fact went to the server
    with reading(store) as con:
        rows = con.execute("select n_passed from swe_ci_iterations order by iteration").fetchall()
        evoscore = con.execute("select round(evoscore, 6) from evoscore(gamma := 1.0)").fetchone()
    assert [r[0] for r in rows] == list(PASSING_WITH_ORACLE_TESTS)
    before = counts(store)

    # Re-running the same command resumes: nothing is written twice.
    assert main(["run", "demo", "--home", str(home), "--store", store]) == 0
    assert counts(store) == before

    # `evoci sql` reads the server through the same views.
    capsys.readouterr()
    assert main(["sql", "select round(evoscore, 3) as e from evoscore(gamma := 1.0)", "--store", store]) == 0
    assert f"{evoscore[0]:.3f}" in capsys.readouterr().out

    # Carried into a DuckDB file, twice: every view answers the same, every row once.
    file = tmp_path / "carried.duckdb"
    copy_store(store, str(file))
    copy_store(store, str(file))
    with reading(file) as con:
        assert con.execute("select round(evoscore, 6) from evoscore(gamma := 1.0)").fetchone() == evoscore
        assert con.execute("select count(*) from test_results").fetchone()[0] == before["test_results"]


def test_an_unreachable_server_is_a_storage_error_that_says_what_to_do():
    with pytest.raises(StorageError, match="scripts/postgres.sh up"):
        Facts("postgresql://evoci:pw@127.0.0.1:1/nothing").run(
            "r", protocol="swe-ci", dataset="d", max_iterations=1, config_hash="h", config={})


def test_a_new_process_checking_the_schema_never_waits_for_other_processes_writes(store):
    """A worker's flow run starting while another writes: its schema check takes no lock on the data tables.

    ``alter table … if not exists`` locks its table exclusively even when it changes nothing; run
    by every new process, it deadlocked with writers. Once the schema is current, it is not run.
    """
    import evoci.store.postgres as pg

    write_once(Facts(store))  # the first process creates the tables and writes
    with psycopg.connect(store) as writer:
        writer.execute("lock table iterations in row exclusive mode")  # a write transaction in progress
        pg._ready.discard(store)  # this process now starts afresh, as a new flow run's would
        with psycopg.connect(store) as con:
            con.execute("set lock_timeout = '3s'")
            con.commit()
            pg._apply_schema(con, store)  # with the DDL run again, this waits for the writer and times out
        writer.rollback()
    assert store in pg._ready
