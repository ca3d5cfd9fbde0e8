"""The results file's disk fills up, or turns read-only, in the middle of a run: the command names the
file and what to do, exits non-zero, keeps every result recorded so far, and the same command resumes
once the disk is fixed. Needs root (a small tmpfs holds the results file); skipped elsewhere."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.flows.helpers import query
from tests.flows.test_resume import recorded_iterations
from tests.repos import calc_repo, write_dataset

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

FINAL = """select (select count(*) from iterations), (select count(*) from test_results),
                  (select count(*) from agent_calls), (select count(*) from runs),
                  (select string_agg(status, ',') from tasks)"""


@pytest.fixture
def small_disk(tmp_path):
    disk = tmp_path / "results"
    disk.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", str(disk)]).returncode:
        pytest.skip("mounting a small tmpfs needs root")
    yield disk
    subprocess.run(["umount", "-l", str(disk)])


def fill(disk):
    with open(disk / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * (1 << 20))
                f.flush()
        except OSError:
            pass


def remount_read_only(folder) -> None:
    """``mount -o remount,ro``, again while the run has a file open for writing there ("mount point is busy"):
    its writes (a fact, a model call written behind) take moments, and the kernel refuses meanwhile."""
    for _ in range(600):
        done = subprocess.run(["mount", "-o", "remount,ro", str(folder)], capture_output=True, text=True)
        if done.returncode == 0:
            return
        assert "busy" in done.stderr, done.stderr
        time.sleep(0.02)
    raise AssertionError(f"{folder} stayed busy: the run kept a file open for writing for 12 s")


@pytest.mark.parametrize("fault", ["disk full", "read-only"])
def test_a_results_disk_that_fills_or_turns_read_only_mid_run_says_what_to_do_and_the_run_resumes(
        tmp_path, prefect_server, small_disk, fault):
    calc_repo(tmp_path / "calc", slow_s=1.0)
    dataset = write_dataset(tmp_path / "faults.jsonl", [
        {"task_id": "calc", "repo": "calc", "base_ref": "base", "oracle_ref": "oracle"}])
    db = small_disk / "evoci.duckdb"
    command = [sys.executable, "-m", "evoci.cli", "run", str(dataset), "--home", str(tmp_path / "home"), "--db", str(db),
               "--max-iterations", "5"]
    env = {**os.environ, "PREFECT_API_URL": prefect_server, "EVOCI_DB_WAIT_S": "2"}
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 900
    try:
        while 1 not in recorded_iterations(db):
            assert proc.poll() is None, proc.communicate()[0]
            assert time.monotonic() < deadline
            time.sleep(0.1)
    except BaseException:
        proc.kill()  # never left running by a failed test
        proc.wait()
        raise
    if fault == "disk full":
        fill(small_disk)
    else:
        remount_read_only(small_disk)
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode not in (0, None), out
    assert str(db) in out, out
    assert ("free space" if fault == "disk full" else "writable") in out, out
    assert "run the same command again to resume" in out, out
    kept = recorded_iterations(db)
    assert {0, 1} <= kept

    if fault == "disk full":
        (small_disk / "filler").unlink()
    else:
        subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=True)
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stdout + again.stderr
    assert query(db, FINAL) == [(4, 20, 6, 1, "done")]
