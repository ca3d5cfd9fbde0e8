"""LocalSandbox and open_sandbox: commands run in the task's virtualenv, inside the workspace."""

from __future__ import annotations

import os
import sys

import pytest

import evoci.sandbox
from evoci.domain import SandboxConfig
from evoci.sandbox import LocalSandbox, Sandbox, open_sandbox, resolve_environment
from evoci.settings import Paths
from tests.sandbox import built_env, evoci_home  # noqa: F401  (built_env is a fixture)


@pytest.fixture
def sandbox(tmp_path, built_env):  # noqa: F811
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return LocalSandbox(workspace, built_env)


def test_it_is_a_sandbox(sandbox):
    assert isinstance(sandbox, Sandbox)


def test_commands_run_with_the_environments_python_in_the_workspace(sandbox, built_env):  # noqa: F811
    sandbox.write_file("pkg/mod.py", "")
    result = sandbox.exec(
        ["python", "-c", "import os, sys, pytest_jsonreport; print(sys.prefix); print(os.getcwd())"],
        cwd="pkg", timeout=30,
    )
    prefix, cwd = result.stdout.split()
    assert result.ok and prefix == str(built_env.path)
    assert cwd == str(sandbox.workspace / "pkg")


def test_the_callers_env_is_added_and_secrets_are_not_inherited(sandbox, built_env, monkeypatch):  # noqa: F811
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-123")
    code = "import os; print(os.environ.get('OPENAI_API_KEY'), os.environ['EXTRA'], os.environ['PATH'])"
    result = sandbox.exec(["python", "-c", code], env={"EXTRA": "yes"}, timeout=30)
    key, extra, path = result.stdout.split()
    assert (key, extra) == ("None", "yes")
    assert path.startswith(f"{built_env.bin_dir}:")


def test_a_base_env_replaces_this_process_environment(tmp_path, built_env):  # noqa: F811
    sandbox = LocalSandbox(tmp_path, built_env, base_env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TOKEN": "x"})
    result = sandbox.exec(["python", "-c", "import os; print(os.environ['LANG'], 'TOKEN' in os.environ)"], timeout=30)
    assert result.stdout.split() == ["C.UTF-8", "False"]


def test_a_command_printing_100_mb_is_capped(sandbox):
    code = "import sys\nfor _ in range(100): sys.stdout.write('y' * (1 << 20))"
    result = sandbox.exec([sys.executable, "-c", code], timeout=60, output_limit=10_000)
    assert result.ok and result.truncated and len(result.stdout) < 10_100


def test_files_are_written_and_read_relative_to_the_workspace(sandbox):
    sandbox.write_file("a/b/c.txt", "héllo")
    sandbox.write_file("raw.bin", b"\xff\x00")
    assert sandbox.read_file("a/b/c.txt") == "héllo".encode()
    assert (sandbox.workspace / "raw.bin").read_bytes() == b"\xff\x00"
    with pytest.raises(FileNotFoundError):
        sandbox.read_file("missing.txt")


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "a/../../outside.txt"])
def test_paths_escaping_the_workspace_are_refused(sandbox, path):
    with pytest.raises(ValueError, match="workspace|relative"):
        sandbox.read_file(path)
    with pytest.raises(ValueError, match="workspace|relative"):
        sandbox.write_file(path, "x")
    with pytest.raises(ValueError, match="workspace|relative"):
        sandbox.exec(["true"], cwd=path, timeout=5)
    assert not (sandbox.workspace.parent / "outside.txt").exists()


def test_a_symlink_pointing_outside_is_refused(sandbox, tmp_path):
    (tmp_path / "secret.txt").write_text("s")
    (sandbox.workspace / "link").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(FileNotFoundError, match="leads out of the workspace"):
        sandbox.read_file("link")
    sandbox.write_file("link", "mine")  # the link is replaced, never written through
    assert (tmp_path / "secret.txt").read_text() == "s" and (sandbox.workspace / "link").read_text() == "mine"


def test_a_fifo_reads_as_no_file_instead_of_blocking(sandbox):
    os.mkfifo(sandbox.workspace / "pipe")
    with pytest.raises(FileNotFoundError, match="not a regular file"):
        sandbox.read_file("pipe")


def test_cleanup_is_idempotent(sandbox):
    sandbox.cleanup()
    sandbox.cleanup()


def test_open_sandbox_local_reuses_the_built_environment(tmp_path, tmp_path_factory, built_env):  # noqa: F811
    paths = Paths(home=evoci_home(tmp_path_factory))
    opened = open_sandbox(SandboxConfig(kind="local"), tmp_path, resolve_environment({}), paths)
    assert isinstance(opened, LocalSandbox)
    assert opened.environment == built_env and opened.workspace == tmp_path.resolve()


def test_open_sandbox_names_the_choices_for_an_unknown_kind(tmp_path):
    config = SandboxConfig.model_construct(kind="dockr", options={})
    with pytest.raises(ValueError, match="^unknown sandbox 'dockr' — choose one of: docker, host, local$"):
        open_sandbox(config, tmp_path, resolve_environment({}), Paths(home=tmp_path))


def test_public_names_are_pinned():
    assert sorted(evoci.sandbox.__all__) == sorted([
        "DEFAULT_OUTPUT_LIMIT", "BuiltEnvironment", "ExecResult", "LocalEnvironments", "LocalSandbox",
        "Sandbox", "looks_secret", "open_sandbox", "resolve_environment", "resolve_inside", "run_process",
        "scrubbed_env",
    ])


SHOW_AND_WRITE = ("import pathlib, sys; p = pathlib.Path('vendor/lib/a.h'); print(p.read_text());"
                  "\ntry:\n    p.write_text('changed'); print('wrote')\nexcept OSError as e:\n    print('refused', e.errno)")


@pytest.mark.parametrize("kind", ["local", "host"])
def test_a_shared_folder_is_seen_inside_the_tree_and_never_copied(kind, tmp_path, tmp_path_factory, built_env):  # noqa: F811
    vendored = tmp_path / "checkout" / "third_party"
    (vendored / "lib").mkdir(parents=True)
    (vendored / "lib" / "a.h").write_text("int a;")
    tree = tmp_path / "tree"
    (tree / "vendor").mkdir(parents=True)  # the empty place the tree was built with
    paths = Paths(home=evoci_home(tmp_path_factory))
    opened = open_sandbox(SandboxConfig(kind=kind), tree, resolve_environment({}), paths, shared={"vendor": vendored})
    said = opened.exec(["python", "-c", SHOW_AND_WRITE], timeout=60).stdout.split("\n")
    assert said[0] == "int a;"
    if kind == "local":  # isolated: read-only to every command, and nothing lands in the tree
        assert said[1].startswith("refused") and (vendored / "lib" / "a.h").read_text() == "int a;"
        assert list((tree / "vendor").iterdir()) == []
    else:  # the host sandbox has no mounts: a link, for agents the user trusts
        assert (tree / "vendor").is_symlink()


def test_a_shared_place_outside_the_tree_is_refused(tmp_path):
    with pytest.raises(ValueError, match="need a relative place"):
        open_sandbox(SandboxConfig(kind="local"), tmp_path, resolve_environment({}), Paths(home=tmp_path),
                     shared={"../up": tmp_path})
