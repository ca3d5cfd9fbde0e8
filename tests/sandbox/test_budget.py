"""The workspace budget: a command that writes past it is killed and says so; what was there does not count."""

from __future__ import annotations

import os
import sys
import textwrap

from evoci import treefs
from evoci.sandbox.budget import DiskWatch, disk_usage
from evoci.sandbox.process import run_process

ENV = {"PATH": os.environ["PATH"]}
MIB = 1024**2


def py(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


def run(workspace, code: str, allowance: int):
    return run_process(py(code), cwd=workspace, env=ENV, timeout=300, output_limit=10_000,
                       budget=DiskWatch(workspace, allowance))


def test_a_command_that_keeps_writing_is_killed_soon_after_its_budget(tmp_path):
    # It would write 2 GiB and then say so; the budget is 16 MiB.
    result = run(tmp_path, """
        import os
        chunk = os.urandom(1 << 20)
        for i in range(2048):
            with open(f"fill-{i}", "wb") as f:
                f.write(chunk)
                f.flush()
                os.fsync(f.fileno())
        print("wrote it all")
    """, 16 * MIB)
    assert result.over_budget and result.exit_code is None and not result.ok
    assert "wrote it all" not in result.stdout
    assert "wrote more than 16 MiB into the workspace" in result.stderr
    assert disk_usage(tmp_path) < 1024 * MIB  # stopped long before the end, not at it


def test_a_command_that_ends_over_budget_between_two_looks_is_caught_at_its_end(tmp_path):
    result = run(tmp_path, """
        import os
        with open("big", "wb") as f:
            f.write(os.urandom(24 << 20))
    """, 16 * MIB)
    assert result.over_budget and result.exit_code is None


def test_what_the_workspace_held_before_does_not_count(tmp_path):
    (tmp_path / "repo.bin").write_bytes(os.urandom(32 * MIB))  # more than the budget, already there
    result = run(tmp_path, """
        import os
        with open("small", "wb") as f:
            f.write(os.urandom(4 << 20))
    """, 16 * MIB)
    assert result.ok and not result.over_budget
    assert (tmp_path / "small").stat().st_size == 4 * MIB


def test_usage_follows_no_link_and_counts_folders_past_the_longest_path(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "big").write_bytes(os.urandom(8 * MIB))
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "link").symlink_to(outside)
    (tree / "file-link").symlink_to(outside / "big")
    assert disk_usage(tree) < MIB
    fd = os.open(tree, os.O_RDONLY)
    for _ in range(3000):  # "d/" × 3000: past PATH_MAX, where no whole path names the file
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    out = os.open("deep", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(out, os.urandom(8 * MIB))
    os.close(out)
    os.close(fd)
    try:
        assert disk_usage(tree) > 8 * MIB
    finally:
        treefs.clear(tree)  # deeper than pytest's own clean-up of old temporary folders can remove


def test_sparse_files_and_empty_files_count_for_what_they_cost_the_host(tmp_path):
    # A sparse file occupies nothing, but git reads its whole length; an empty file occupies
    # nothing, but takes one of the disk's inodes. Neither may pass the budget unseen.
    (tmp_path / "sparse").mkdir()
    (tmp_path / "many").mkdir()
    sparse = run(tmp_path / "sparse", """
        for i in range(64):
            with open(f"hole-{i}", "wb") as f:
                f.truncate(64 << 20)
    """, 16 * MIB)
    many = run(tmp_path / "many", """
        for i in range(100_000):
            open(f"empty-{i}", "w").close()
    """, 16 * MIB)
    assert sparse.over_budget and many.over_budget


def test_command_after_command_under_the_budget_the_workspace_still_cannot_outgrow_a_test_run(tmp_path):
    # The budget is per command: each iteration's 12 MiB stays under 16 MiB, but the third would take
    # the workspace past the 30 MiB a test run's tree can hold, where the copy into the test sandbox
    # failed and the task ended an infrastructure error the agent caused.
    write = """
        import os
        with open("more-{n}", "wb") as f:
            f.write(os.urandom(12 << 20))
    """
    results = [run_process(py(write.format(n=n)), cwd=tmp_path, env=ENV, timeout=300, output_limit=10_000,
                           budget=(watch := DiskWatch(tmp_path, 16 * MIB, ceiling=30 * MIB))) for n in range(3)]
    assert [r.over_budget for r in results] == [False, False, True]
    assert "grew the workspace past 30 MiB, what a test run can hold (three quarters of tree_bytes)" in watch.note()
    assert watch.allowance < 16 * MIB  # what was left under the ceiling, as the agent's outcome says


def test_deleted_files_the_command_holds_open_count_until_it_lets_go(tmp_path):
    # Eight 6 MiB files, each deleted at once and held open by a child process: no folder lists
    # them, yet their 48 MiB are the disk's as long as they are open.
    result = run(tmp_path, """
        import os, subprocess, sys, time
        child = '''
        import os, time
        held = []
        for i in range(8):
            f = open(f"gone-{i}", "wb")
            f.write(os.urandom(6 << 20))
            f.flush()
            os.unlink(f"gone-{i}")
            held.append(f)
        print("holding", flush=True)
        time.sleep(120)
        '''
        subprocess.Popen([sys.executable, "-c", child])
        time.sleep(120)
    """, 16 * MIB)
    assert result.over_budget and result.duration_s < 60
    assert "wrote more than 16 MiB into the workspace" in result.stderr
    # the walk alone saw at most the one file being written when the watch struck (6 MiB)
    assert len(list(tmp_path.iterdir())) <= 1 and disk_usage(tmp_path) < 16 * MIB


def test_a_deleted_file_is_charged_once_however_many_descriptors_hold_it(tmp_path):
    from evoci.sandbox.budget import held_deleted

    path = tmp_path / "gone"
    path.write_bytes(os.urandom(2 * MIB))
    with open(path, "rb") as a, open(path, "rb") as b:
        assert held_deleted([os.getpid()], os.stat(tmp_path).st_dev) == 0  # still listed: the walk counts it
        path.unlink()
        assert held_deleted([os.getpid(), os.getpid()], os.stat(tmp_path).st_dev) == 2 * MIB
        assert held_deleted([os.getpid()], os.stat(tmp_path).st_dev + 1) == 0  # another filesystem's
        assert a.read(1) and b.read(1)
