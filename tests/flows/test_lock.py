"""A process that holds the results file longer than evoci waits (a DuckDB shell left open) costs node
retries and time, never facts: claims are retried by Prefect, and fact writes wait in the spool."""

from __future__ import annotations

import logging
import threading

import pytest

from evoci.domain import RunConfig, TaskSpec
from evoci.flows.evolve import evolve
from evoci.store import Facts
from tests.flows.helpers import query
from tests.repos import calc_repo
from tests.store.test_lock import Holder

pytestmark = pytest.mark.usefixtures("prefect_server")


class OnLog(logging.Handler):
    """Runs ``action`` (once, on another thread) when a log message contains every one of ``words``."""

    def __init__(self, action, *words: str):
        super().__init__()
        self.action, self.words, self.fired = action, words, threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if not self.fired.is_set() and all(w in record.getMessage() for w in self.words):
            self.fired.set()
            threading.Thread(target=self.action).start()


def test_a_results_file_held_longer_than_the_wait_costs_retries_not_data(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOCI_DB_WAIT_S", "0.5")
    task = TaskSpec(task_id="calc", repo=str(calc_repo(tmp_path / "calc")), base_ref="base", oracle_ref="oracle")
    home = tmp_path / "home"
    db = home / "evoci.duckdb"
    home.mkdir()
    holders = [Holder(db)]  # held before the run starts: its first claim fails on the lock
    released = threading.Event()

    def release_first():
        holders[0].release()
        released.set()

    def hold_again():  # held again after iteration 0's tests: the flow's own writes meet the lock
        holders.append(Holder(db))

    logger = logging.getLogger("prefect")
    handlers = [OnLog(release_first, "DatabaseLocked", "Retry 1/"), OnLog(hold_again, "iteration 0: tests ran")]
    for handler in handlers:
        logger.addHandler(handler)
    try:
        summary = evolve(task, RunConfig(max_iterations=1, node_retries=3, retry_delays_s=[1.0]), home=str(home))
    finally:
        for handler in handlers:
            logger.removeHandler(handler)
    assert released.is_set() and handlers[1].fired.is_set()
    assert summary.status == "done"
    pending = Facts(db).spool.pending()
    assert pending  # iteration 0 and 1 and the final status wait in the spool ...
    holders[-1].release()
    assert Facts(db).flush() == len(pending)  # ... and the next write puts every one of them in the file
    assert query(db, "select iteration, status from iterations order by iteration") == [(0, "ok"), (1, "ok")]
    assert query(db, "select status from tasks") == [("done",)]
    assert query(db, "select scored, solved from swe_ci_tasks") == [(True, True)]
