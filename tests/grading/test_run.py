"""The one grading path's run step, in the real local sandbox: what is read, what is not, who is blamed."""

from __future__ import annotations

import pytest

from evoci.errors import InfrastructureError, SandboxError
from evoci.grading.run import NORMAL_EXITS, in_sandbox, run_logged, run_proven
from evoci.sandbox import LocalSandbox
from evoci.sandbox.bwrap import BwrapOptions
from tests.sandbox import built_env, make_codebase  # noqa: F401


class ToolMissing(InfrastructureError):
    pass


def passed_lines(text: str) -> dict[str, str]:
    """A log parser: ``PASSED <id>`` lines."""
    return {line.split()[1]: "passed" for line in text.splitlines() if line.startswith("PASSED ")}


@pytest.fixture
def opener(built_env):  # noqa: F811
    return lambda root: LocalSandbox(root, built_env, isolation=BwrapOptions(), ephemeral=True)


@pytest.fixture
def tree(tmp_path):
    return make_codebase(tmp_path / "tree", {"README": "a tree the harness built\n"})


def logged(sandbox, script, **kw):
    return run_logged(sandbox, ["bash", "-c", script], env={}, timeout=60, output_limit=100_000, parse=passed_lines,
                      graded_exits=frozenset({0, 1}), **kw)


def test_a_log_parsed_run_is_read_when_it_ends_as_a_runner_does(opener, tree):
    with in_sandbox(tree, opener) as sandbox:
        ran = logged(sandbox, "echo PASSED t::a; echo PASSED t::b; exit 1")
    assert ran.status == "ok" and ran.outcomes == {"t::a": "passed", "t::b": "passed"} and not ran.flags
    assert not tree.exists()  # the tree is removed with the sandbox


def test_what_a_killed_command_printed_is_never_read(opener, tree):
    with in_sandbox(tree, opener) as sandbox:
        ran = logged(sandbox, "echo PASSED t::a; kill -9 $$")
    assert ran.status == "agent_error" and ran.outcomes == {}
    assert ran.exit_code not in NORMAL_EXITS
    assert ran.flags == [f"{ran.unread}: what it printed is not graded (scored as nothing passing)"]
    assert "SIGKILL" in ran.unread


def test_a_run_with_no_result_is_the_agents_only_when_the_canary_passes(opener, tree):
    with in_sandbox(tree, opener, clear=False) as sandbox:
        ran = logged(sandbox, "echo nothing here; exit 3")
        assert ran.status == "agent_error" and ran.outcomes == {}
        with pytest.raises(SandboxError, match="cannot import evoci_no_such_runner"):
            logged(sandbox, "echo nothing here; exit 3", canary=("evoci_no_such_runner",))
    assert tree.exists()  # clear=False keeps it (the oracle's own folder)


def test_a_tool_is_missing_only_when_the_harness_lookup_says_so(opener, tree):
    def missing(text):
        return ToolMissing(text)

    with in_sandbox(tree, opener) as sandbox:
        # the tested code exits 127 itself: the program exists, so it is the code's outcome
        result = run_proven(sandbox, ["sh", "-c", "exit 127"], env={}, cwd=".", timeout=30, output_limit=10_000,
                            missing=missing)
        assert result.exit_code == 127
        with pytest.raises(ToolMissing, match="no 'evoci-no-such-tool'"):
            run_proven(sandbox, ["evoci-no-such-tool"], env={}, cwd=".", timeout=30, output_limit=10_000,
                       missing=missing)


def test_the_tree_is_removed_when_the_run_raises(opener, tree):
    with pytest.raises(RuntimeError), in_sandbox(tree, opener):
        raise RuntimeError("the run failed")
    assert not tree.exists()

