"""SWE-bench-format grading runs the tree where the official images do: at /testbed, as root.

Public records name tests by where and as whom the official image ran them (dvc's
``test_to_relpath[/testbed-/testbed]``, ``test_ssh_user[config3-root]``): a test parametrized with
the working folder or the user name has another id anywhere else, and its target is then missing.
"""

from __future__ import annotations

import os
from pathlib import Path

import git
import pytest

from evoci.domain import SandboxConfig
from evoci.sandbox.environment import resolve_environment
from evoci.settings import Paths
from evoci.swebench.grade import GradeRequest, grade, grading_sandbox
from tests.patches import patch_setting

BASE = {
    "where.py": "def here():\n    return None\n",
    "tests/test_where.py": (
        "import getpass\nimport os\n\nimport pytest\n\nfrom where import here\n\n\n"
        "@pytest.mark.parametrize('folder,user', [(os.getcwd(), getpass.getuser())])\n"
        "def test_here(folder, user):\n    assert here() == folder\n\n\n"
        "def test_home_is_the_users():\n    assert os.path.expanduser('~') == ('/root' if os.getuid() == 0 else os.environ['HOME'])\n"
    ),
}
FIX = {"where.py": "import os\n\n\ndef here():\n    return os.getcwd()\n"}
F2P = "tests/test_where.py::test_here[/testbed-root]"
P2P = "tests/test_where.py::test_home_is_the_users"


def _repository(folder: Path) -> tuple[git.Repo, str]:
    repo = git.Repo.init(folder)
    for path, text in BASE.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    repo.index.add(list(BASE))
    return repo, repo.index.commit("base").hexsha


@pytest.mark.parametrize("kind", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_target_named_by_the_testbed_and_root_resolves(kind, tmp_path):
    if kind == "docker":
        _require_docker()
    source, base = _repository(tmp_path / "repo")
    request = GradeRequest(base_sha=base, patch=patch_setting(source, base, FIX), test_cmds="pytest -rA tests/test_where.py",
                           log_parser="parse_log_pytest", targets=[F2P, P2P], timeout_s=300)
    graded = grade(request, source, tmp_path / "tree",
                   grading_sandbox(SandboxConfig(kind=kind), resolve_environment({}), Paths(home=tmp_path / "home")))
    assert graded.status == "ok", graded.output_tail
    assert graded.outcomes == {F2P: "passed", P2P: "passed"}
    # the tests ran on a private copy: nothing they wrote (bytecode, caches) reached the harness's tree
    assert sorted(p.name for p in (tmp_path / "tree").iterdir()) == sorted(
        [".evoci", ".evoci-pytest.ini", "tests", "where.py"])


def _require_docker() -> None:
    from evoci.sandbox.docker import DockerUnavailable, connect

    try:
        connect()
    except DockerUnavailable as exc:
        if os.environ.get("EVOCI_REQUIRE_DOCKER") == "1":
            pytest.fail(f"EVOCI_REQUIRE_DOCKER=1 but {exc}", pytrace=False)
        pytest.skip(f"no Docker engine: {exc}")
