"""The results database: idempotent facts, and many processes sharing one file."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import duckdb

from evoci.agents.base import AgentOutcome, ModelCall
from evoci.store import Facts, IterationRow, TaskRow


def counts(db) -> dict[str, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: con.execute(f"select count(*) from {t}").fetchone()[0]
                for t in ("runs", "tasks", "targets", "iterations", "test_results", "agent_calls", "trajectories", "failures")}
    finally:
        con.close()


def write_once(facts: Facts) -> None:
    facts.run("r", protocol="swe-ci", dataset="d", max_iterations=3, config_hash="h", config={"max_iterations": 3})
    facts.task(TaskRow("r", "t", "swe-ci", "running", repo="repo"))
    facts.targets("r", "t", {"a": "target", "b": "target"})
    outcome = AgentOutcome(calls=[ModelCall(model="m", provider="openai", input_tokens=10)], trajectory=[{"x": 1}])
    facts.iteration(IterationRow("r", "t", 1, "ok", {"a": "passed", "b": "missing"}, architect=outcome, programmer=outcome))
    facts.failure("r", task_id="t", node="test", kind="infrastructure", error=RuntimeError("daemon gone"))


def test_writing_every_fact_twice_writes_each_row_once(tmp_path):
    facts = Facts(tmp_path / "r.duckdb")
    write_once(facts)
    write_once(facts)
    assert counts(tmp_path / "r.duckdb") == {"runs": 1, "tasks": 1, "targets": 2, "iterations": 1, "test_results": 2,
                                             "agent_calls": 2, "trajectories": 2, "failures": 1}


def test_task_state_is_updated_while_its_identity_keeps_the_first_values(tmp_path):
    facts = Facts(tmp_path / "r.duckdb")
    facts.task(TaskRow("r", "t", "swe-ci", "running", repo="repo", base_sha="abc"))
    facts.task(TaskRow("r", "t", "swe-ci", "running", repo="repo"))
    facts.task_status("r", "t", "infra_error", "daemon gone")
    con = duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True)
    assert con.execute("select base_sha, status, reason from tasks").fetchall() == [("abc", "infra_error", "daemon gone")]
    con.close()


def test_names_that_are_not_text_are_stored_with_their_bytes_written_out(tmp_path):
    # A path with the byte 0xff reads in Python as "\udcff" (surrogateescape), which DuckDB refuses:
    # one such name in an agent's tree used to cost the whole iteration's row.
    facts = Facts(tmp_path / "r.duckdb")
    facts.iteration(IterationRow("r", "t", 1, "ok", {"tests/test_a.py::test_\udcff": "passed"},
                                 tampered_files=["src/\udcff/.git", "caf\u00e9.py"],
                                 integrity_flags=["\udcff: is a symbolic link to /etc/passwd"]))
    facts.failure("r", task_id="t", node="test", kind="infrastructure", error=OSError(f"cannot read {chr(0xD800)}"))
    con = duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True)
    assert con.execute("select tampered_files, integrity_flags from iterations").fetchall() == [
        (["src/\\xff/.git", "caf\u00e9.py"], ["\\xff: is a symbolic link to /etc/passwd"])]
    assert con.execute("select test_id from test_results").fetchall() == [("tests/test_a.py::test_\\xff",)]
    assert con.execute("select message from failures").fetchall() == [("cannot read \\ud800",)]
    con.close()


WRITER = textwrap.dedent("""
    import sys
    from evoci.store import Facts, IterationRow, TaskRow
    facts = Facts(sys.argv[1])
    worker = sys.argv[2]
    facts.run("r", protocol="swe-ci", dataset="d", max_iterations=50, config_hash="h", config={})
    for i in range(60):
        task = f"{worker}-{i % 3}"
        facts.task(TaskRow("r", task, "swe-ci", "running"))
        facts.iteration(IterationRow("r", task, i, "ok", {f"t{j}": "passed" for j in range(20)}))
""")

READER = textwrap.dedent("""
    import sys
    from evoci.store import connect
    for _ in range(60):
        with connect(sys.argv[1], read_only=True) as con:
            con.execute("select count(*) from test_results").fetchone()
""")


def test_parallel_processes_never_fail_on_the_database_lock(tmp_path):
    db = tmp_path / "shared.duckdb"
    Facts(db).run("r", protocol="swe-ci", dataset="d", max_iterations=50, config_hash="h", config={})
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), f"w{n}"], stderr=subprocess.PIPE, text=True)
             for n in range(3)]
    procs.append(subprocess.Popen([sys.executable, "-c", READER, str(db)], stderr=subprocess.PIPE, text=True))
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    assert counts(db)["iterations"] == 180 and counts(db)["test_results"] == 3600


CALL_THEN_DIE = textwrap.dedent("""
    import os, sys
    from evoci.agents.base import AgentOutcome, ModelCall
    from evoci.store import Facts
    paid = AgentOutcome(node_run="n1", calls=[ModelCall(model="m", provider="openai", input_tokens=7, output_tokens=3)])
    Facts(sys.argv[1]).call("r", "t", 1, "programmer", paid, 0)
    os._exit(0)  # killed the moment the call was recorded: no thread, no exit handler runs
""")


def test_a_model_call_reaches_the_file_moments_later_and_survives_a_kill_the_moment_it_was_recorded(tmp_path):
    from evoci.store.facts import _behind

    db = tmp_path / "r.duckdb"
    Facts(db).run("r", protocol="swe-ci", dataset="d", max_iterations=3, config_hash="h", config={})
    paid = AgentOutcome(node_run="n0", calls=[ModelCall(model="m", provider="openai", input_tokens=10)])
    Facts(db).call("r", "t", 1, "architect", paid, 0)
    _behind.drain()  # no other write comes: the write-behind thread alone puts it in the file
    assert counts(db)["agent_calls"] == 1

    died = subprocess.run([sys.executable, "-c", CALL_THEN_DIE, str(db)], capture_output=True, text=True, timeout=120)
    assert died.returncode == 0, died.stderr
    Facts(db).flush()  # what the next write, or any reading command, does first
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("select node_run, input_tokens, output_tokens from agent_calls order by node_run"
                           ).fetchall() == [("n0", 10, 0), ("n1", 7, 3)]
    finally:
        con.close()
