"""What code under test cannot do in a Docker sandbox, and how its attempts come back (as data)."""

from __future__ import annotations

import os
import textwrap

import pytest

from evoci.domain import TaskSpec
from evoci.domain import TestStatus as Status
from evoci.errors import SandboxError
from evoci.swe_ci.grade import run_pytest

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("no_leftover_containers")]


def test_commands_run_in_the_workspace_and_files_stay_the_callers(sandbox, workspace):
    sandbox.write_file("sub/input.txt", "hello\n")
    result = sandbox.exec(["sh", "-c", "cat input.txt && pwd && echo out > made.txt"], cwd="sub", timeout=30)
    assert result.ok, result
    assert result.stdout.split() == ["hello", "/workspace/sub"]
    made = workspace / "sub" / "made.txt"
    assert sandbox.read_file("sub/made.txt") == b"out\n"
    assert (made.stat().st_uid, made.stat().st_gid) == (os.getuid(), os.getgid())


def test_a_missing_working_folder_is_refused(sandbox, workspace):
    with pytest.raises(SandboxError, match="does not exist"):
        sandbox.exec(["pwd"], cwd="no/such/folder", timeout=30)
    assert not (workspace / "no").exists()


def test_a_missing_program_is_data(sandbox):
    result = sandbox.exec(["no-such-program"], timeout=30)
    assert result.exit_code == 127


def test_containers_are_labelled_with_the_run_and_task(open_sandbox, docker_paths):
    workspace = docker_paths.home / "runs" / "run-7" / "task-3" / "workspace"
    workspace.mkdir(parents=True)
    assert open_sandbox(workspace).labels == {"evoci": "1", "evoci.run_id": "run-7", "evoci.task_id": "task-3"}


def test_a_failing_command_is_data(sandbox):
    result = sandbox.exec(["sh", "-c", "echo oops >&2; exit 3"], timeout=30)
    assert (result.exit_code, result.stderr, result.timed_out) == (3, "oops\n", False)


def test_the_network_is_off(sandbox):
    code = "import socket; socket.create_connection(('1.1.1.1', 53), timeout=5)"
    result = sandbox.exec(["python", "-c", code], timeout=30)
    assert result.exit_code == 1
    assert "Network is unreachable" in result.stderr


def test_host_secrets_do_not_reach_the_container(sandbox, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret")
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4200/api")
    monkeypatch.setenv("MY_DB_PASSWORD", "hunter2")
    result = sandbox.exec(["env"], env={"WANTED": "yes"}, timeout=30)
    assert result.ok
    assert "WANTED=yes" in result.stdout
    for leaked in ("sk-host-secret", "PREFECT_API_URL", "hunter2"):
        assert leaked not in result.stdout


def test_a_memory_hog_is_killed_and_comes_back_as_data(sandbox):
    hog = "chunks = []\nfor _ in range(64):\n    chunks.append(bytearray(64 * 1024 * 1024))  # 4 GB in all\n"
    result = sandbox.exec(["python", "-c", hog], timeout=120)
    assert result.exit_code == 137
    assert "OOM killer ran" in result.stderr
    assert not result.timed_out


def test_an_oom_killed_test_suite_is_the_agents_error(sandbox, workspace):
    sandbox.write_file("tests/test_hog.py", "def test_hog():\n    x = [bytearray(64 << 20) for _ in range(64)]\n")
    task = TaskSpec(task_id="hog", repo=str(workspace), base_ref="a", oracle_ref="b")
    report = run_pytest(sandbox, task, timeout=120, output_limit=100_000)
    assert report.status == Status.AGENT_ERROR
    assert report.exit_code == 137
    assert report.outcomes == {}


def test_a_fork_bomb_is_stopped_by_the_pids_limit(sandbox):
    bomb = textwrap.dedent(
        """
        import os, time
        forked, error = 0, None
        for _ in range(5000):
            try:
                pid = os.fork()
            except OSError as exc:
                error = exc
                break
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            forked += 1
        print(forked, error)
        """
    )
    result = sandbox.exec(["python", "-c", bomb], timeout=60)
    assert result.exit_code == 0, result
    forked, _, error = result.stdout.partition(" ")
    assert int(forked) < 64
    assert "Resource temporarily unavailable" in error
    assert result.duration_s < 30  # the sleeping children died with the container


def test_a_shell_fork_bomb_is_killed_at_the_timeout(sandbox, docker_client):
    result = sandbox.exec(["bash", "-c", "bomb() { bomb | bomb & }; bomb; sleep 60"], timeout=5)
    assert (result.timed_out, result.exit_code) == (True, None)
    assert result.duration_s < 20
    assert "Resource temporarily unavailable" in result.stderr  # bash hit the pids limit
    assert docker_client.containers.list(all=True, filters={"label": "evoci=1"}) == []


def test_a_hanging_command_is_killed_at_the_timeout(sandbox, docker_client):
    result = sandbox.exec(["sleep", "600"], timeout=2)
    assert (result.timed_out, result.exit_code) == (True, None)
    assert 2 <= result.duration_s < 15
    assert docker_client.containers.list(all=True, filters={"label": "evoci=1"}) == []


def test_output_is_capped_head_and_tail(sandbox):
    result = sandbox.exec(["python", "-c", "print('A' * 50 + 'x' * 100_000 + 'Z' * 50)"], timeout=30, output_limit=100)
    assert result.truncated
    assert result.stdout.startswith("A" * 50) and result.stdout.rstrip().endswith("Z" * 49)
    assert len(result.stdout) < 200


def test_a_passing_suite_runs_through_run_pytest(sandbox, workspace):
    sandbox.write_file("src/calc.py", "def add(a, b):\n    return a + b\n")
    sandbox.write_file("tests/test_calc.py", "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    task = TaskSpec(task_id="calc", repo=str(workspace), base_ref="a", oracle_ref="b")
    report = run_pytest(sandbox, task, timeout=120, output_limit=100_000)
    assert report.status == Status.OK
    assert report.outcomes == {"tests/test_calc.py::test_add": "passed"}
    assert not (workspace / "src" / "__pycache__").exists()


def test_a_shared_folder_is_mounted_read_only_inside_the_workspace(open_sandbox, workspace, tmp_path):
    vendored = tmp_path / "third_party"
    vendored.mkdir()
    (vendored / "a.h").write_text("int a;")
    (workspace / "vendor").mkdir()
    sandbox = open_sandbox(workspace, shared={"vendor": vendored})
    done = sandbox.exec(["sh", "-c", "cat vendor/a.h; echo x > vendor/a.h 2>/dev/null || echo refused"], timeout=60)
    assert done.stdout.split() == ["int", "a;refused"]  # the file has no newline
    assert (vendored / "a.h").read_text() == "int a;" and list((workspace / "vendor").iterdir()) == []
