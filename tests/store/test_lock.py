"""A process holding the results file longer than evoci waits costs time, never facts."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from evoci.errors import DatabaseLocked
from evoci.store import Facts, IterationRow, TaskRow
from tests.store.test_facts import counts, write_once

# A DuckDB shell left open: holds the file read-write until its stdin closes.
HOLDER = textwrap.dedent("""
    import sys, duckdb
    con = duckdb.connect(sys.argv[1])
    print("holding", flush=True)
    sys.stdin.read()
    con.close()
""")


class Holder:
    def __init__(self, db):
        self.process = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout.readline().strip() == "holding"

    def release(self) -> None:
        self.process.stdin.close()
        assert self.process.wait(timeout=60) == 0


def test_writes_while_another_process_holds_the_file_are_kept_and_written_by_the_next_write(tmp_path):
    db = tmp_path / "r.duckdb"
    Facts(db).run("r", protocol="swe-ci", dataset="d", max_iterations=3, config_hash="h", config={})
    holder = Holder(db)
    facts = Facts(db, wait_s=0.2)
    write_once(facts)  # returns: every batch waits in the spool
    assert len(facts.spool.pending()) == 5
    with pytest.raises(DatabaseLocked, match="stayed locked by another process .* close other DuckDB sessions"):
        facts.claim_task(TaskRow("r", "t2", "swe-ci", "running"))  # a claim must read: it raises, its node retries
    holder.release()

    facts.task_status("r", "t", "done")  # the next write replays the spool first, in order
    assert facts.spool.pending() == []
    assert counts(db) == {"runs": 1, "tasks": 1, "targets": 2, "iterations": 1, "test_results": 2,
                          "agent_calls": 2, "trajectories": 2, "failures": 1}
    write_once(facts)  # replaying is idempotent
    assert counts(db)["agent_calls"] == 2


def test_the_failure_path_never_waits_for_the_lock(tmp_path):
    db = tmp_path / "r.duckdb"
    Facts(db).task(TaskRow("r", "t", "swe-ci", "running"))
    holder = Holder(db)
    facts = Facts(db)  # would wait the default 300 s
    facts.quick().failure("r", task_id="t", node="flow", kind="infrastructure", error=RuntimeError("daemon gone"))
    facts.quick().task_status("r", "t", "infra_error", "daemon gone")
    assert len(facts.spool.pending()) == 2
    holder.release()
    assert facts.flush() == 2
    assert counts(db)["failures"] == 1


def test_an_old_results_file_gains_the_node_run_key_and_keeps_its_calls(tmp_path):
    import duckdb

    db = tmp_path / "old.duckdb"
    con = duckdb.connect(str(db))
    con.execute("""create table agent_calls (run_id varchar not null, task_id varchar not null, iteration integer not null,
                   attempt integer not null default 0, role varchar not null, node_try integer not null default 1,
                   call_index integer not null, model varchar not null, provider varchar not null,
                   input_tokens bigint not null default 0, output_tokens bigint not null default 0,
                   cached_tokens bigint not null default 0, cost_usd double not null default 0, latency_s double,
                   finish_reason varchar, error varchar,
                   primary key (run_id, task_id, iteration, attempt, role, node_try, call_index))""")
    con.execute("insert into agent_calls (run_id, task_id, iteration, role, call_index, model, provider) "
                "values ('r', 't', 1, 'architect', 0, 'm', 'openai')")
    con.close()
    Facts(db).iteration(IterationRow("r", "t", 2, "ok", {}))
    assert counts(db)["agent_calls"] == 1
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("select node_run, node_try, call_index from agent_calls").fetchall() == [("", 1, 0)]
    con.close()
