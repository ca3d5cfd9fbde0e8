"""run_process: time limits that kill everything, bounded output, exact environments."""

from __future__ import annotations

import os
import sys
import textwrap
import tracemalloc

import pytest

from evoci.errors import SandboxError
from evoci.sandbox.process import KILL_GRACE_S, run_process
from tests.sandbox import kill_if_alive, process_gone

ENV = {"PATH": os.environ["PATH"]}


def py(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


def test_exit_code_and_both_streams_are_returned(tmp_path):
    result = run_process(
        py("import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"),
        cwd=tmp_path, env=ENV, timeout=30, output_limit=1000,
    )
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert not result.timed_out and not result.truncated and not result.ok


def test_command_sees_exactly_the_given_environment_and_folder(tmp_path):
    result = run_process(
        py("import os; print(sorted(os.environ), os.getcwd())"),
        cwd=tmp_path, env={**ENV, "ONLY": "1"}, timeout=30, output_limit=10_000,
    )
    names, cwd = result.stdout.rsplit(" ", 1)
    assert "ONLY" in names and "HOME" not in names
    assert cwd.strip() == str(tmp_path)


def test_hanging_command_and_its_grandchild_are_killed_at_the_timeout(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    code = f"""
        import subprocess, time
        child = subprocess.Popen(["sleep", "1000"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        print("started", flush=True)
        time.sleep(1000)
    """
    result = run_process(py(code), cwd=tmp_path, env=ENV, timeout=1.5, output_limit=1000)
    grandchild = int(pid_file.read_text())
    try:
        assert result.timed_out and result.exit_code is None
        assert result.stdout == "started\n"  # output up to the kill is kept
        assert result.duration_s < 1.5 + KILL_GRACE_S + 2
        assert process_gone(grandchild)
    finally:
        if not process_gone(grandchild, 0):
            kill_if_alive(grandchild)


def test_a_command_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path):
    code = """
        import signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("ready", flush=True)
        time.sleep(1000)
    """
    result = run_process(py(code), cwd=tmp_path, env=ENV, timeout=1, output_limit=1000)
    assert result.timed_out
    assert 1 + KILL_GRACE_S <= result.duration_s < 1 + KILL_GRACE_S + 2


def test_background_processes_do_not_outlive_the_command_or_block_it(tmp_path):
    # The background sleep holds stdout open: without killing the group this would hang.
    result = run_process(["sh", "-c", "sleep 1000 & echo $!"], cwd=tmp_path, env=ENV, timeout=30, output_limit=1000)
    assert result.exit_code == 0 and result.duration_s < 10
    assert process_gone(int(result.stdout))


def test_100_mb_of_output_is_capped_and_memory_stays_bounded(tmp_path):
    code = """
        import sys
        block = b"x" * (1 << 20)
        for _ in range(100):
            sys.stdout.buffer.write(block)
        sys.stdout.buffer.write(b"THE END")
    """
    tracemalloc.start()
    try:
        result = run_process(py(code), cwd=tmp_path, env=ENV, timeout=60, output_limit=100_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.exit_code == 0 and result.truncated
    assert result.stdout.startswith("x" * 50_000)
    assert result.stdout.endswith("THE END")  # the tail, where errors are, is kept
    assert f"[evoci: {100 * (1 << 20) + 7 - 100_000} bytes of output dropped here]" in result.stdout
    assert len(result.stdout) < 100_200
    assert peak < 5_000_000


def test_large_output_on_both_streams_does_not_deadlock(tmp_path):
    code = """
        import sys
        for _ in range(200):
            sys.stderr.write("e" * 50_000)
            sys.stdout.write("o" * 50_000)
    """
    result = run_process(py(code), cwd=tmp_path, env=ENV, timeout=60, output_limit=1_000_000)
    assert result.exit_code == 0 and result.truncated
    assert len(result.stdout) < 1_000_100 and len(result.stderr) < 1_000_100


def test_non_utf8_output_is_decoded_with_replacement_characters(tmp_path):
    result = run_process(
        py(r"import sys; sys.stdout.buffer.write(b'caf\xe9 \xff\xfe ok\n')"),
        cwd=tmp_path, env=ENV, timeout=30, output_limit=1000,
    )
    assert result.stdout == "caf\ufffd \ufffd\ufffd ok\n"


def test_a_program_that_cannot_start_raises_sandbox_error(tmp_path):
    with pytest.raises(SandboxError, match="no-such-program.*check that the program is installed"):
        run_process(["no-such-program"], cwd=tmp_path, env=ENV, timeout=5, output_limit=1000)
