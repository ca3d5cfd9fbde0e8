"""Rewritten test modules kept between grading runs: made before the tree runs, used only for the same content."""

from __future__ import annotations

import base64
import marshal
import shutil

import pytest

from evoci.grading.bytecode import LIST_FILE, BytecodeStore
from evoci.grading.run import in_sandbox, run_launched
from evoci.sandbox import LocalSandbox
from evoci.sandbox.bwrap import BwrapOptions
from tests.sandbox import built_env, make_codebase  # noqa: F401

CONFIG = "[pytest]\n"
TESTS = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n\n"
                          "def test_wrong():\n    assert add(2, 2) == 5\n",
}


@pytest.fixture
def opener(built_env):  # noqa: F811
    return lambda root: LocalSandbox(root, built_env, isolation=BwrapOptions(), ephemeral=True)


def graded(opener, tree, store, config=CONFIG):
    with in_sandbox(tree, opener, clear=False) as sandbox:
        sandbox.write_file(".evoci/pytest.ini", config)
        root = sandbox.visible_root
        return run_launched(sandbox, options=["-c", f"{root}/.evoci/pytest.ini", f"--rootdir={root}", "-p",
                                              "no:cacheprovider"], args=["tests"], pythonpath=["."], timeout=120,
                            output_limit=100_000, graded_exits=frozenset({0, 1}), bytecode=store,
                            runner_config=config)


def kept(store_dir):
    return sorted(p for p in store_dir.rglob("*.pyc"))


def fresh(tmp_path, name, files=TESTS):
    tree = tmp_path / name
    if tree.exists():
        shutil.rmtree(tree)
    return make_codebase(tree, files)


def test_the_first_run_keeps_each_test_module_and_the_next_tree_uses_it(opener, tmp_path):
    store = BytecodeStore(tmp_path / "bytecode")
    first = graded(opener, fresh(tmp_path, "t1"), store)
    assert first.outcomes == {"tests/test_calc.py::test_add": "passed", "tests/test_calc.py::test_wrong": "failed"}, \
        (first.status, first.unread, first.output_tail)
    [entry] = kept(tmp_path / "bytecode")  # the test module; calc.py is not a test module
    assert "-pytest-" in entry.name
    assert "assert 4 == 5" in first.details["tests/test_calc.py::test_wrong"]  # assertions rewritten

    tree = fresh(tmp_path, "t2")
    second = graded(opener, tree, store)
    assert second.outcomes == first.outcomes and second.details == first.details
    assert [p.name for p in (tree / "tests" / "__pycache__").iterdir()] == [f"test_calc{entry.name}"]
    assert not (tree / LIST_FILE).exists()  # nothing left to rewrite ahead
    assert kept(tmp_path / "bytecode") == [entry]


def test_pytest_runs_the_kept_bytecode_and_other_content_never_gets_it(opener, tmp_path):
    # Shown by planting, in the store, bytecode that says something else: pytest ran it instead of
    # rewriting the module again. Then a test module with other content is rewritten afresh.
    store = BytecodeStore(tmp_path / "bytecode")
    graded(opener, fresh(tmp_path, "t1"), store)
    [entry] = kept(tmp_path / "bytecode")
    data = entry.read_bytes()
    code = marshal.loads(data[16:])
    planted = compile("def test_planted():\n    pass\n", code.co_filename, "exec")
    entry.write_bytes(data[:16] + marshal.dumps(planted))
    assert graded(opener, fresh(tmp_path, "t2"), store).outcomes == {"tests/test_calc.py::test_planted": "passed"}

    changed = {**TESTS, "tests/test_calc.py": TESTS["tests/test_calc.py"] + "\ndef test_more():\n    assert True\n"}
    tree = fresh(tmp_path, "t3", changed)
    ran = graded(opener, tree, store)
    assert ran.outcomes == {"tests/test_calc.py::test_add": "passed", "tests/test_calc.py::test_wrong": "failed",
                            "tests/test_calc.py::test_more": "passed"}
    assert len(kept(tmp_path / "bytecode")) == 2  # one per content


def test_code_of_the_tree_cannot_add_to_what_is_kept(opener, tmp_path):
    # A listed module the environment's pytest cannot rewrite (it does not parse) gets nothing kept.
    # The tests' conftest writes a record for it, as the launcher's test process writes them, to
    # every pipe it holds: the one they travel on was closed before the tree ran, so nothing is kept.
    forged = base64.b64encode(b"\0" * 64)
    files = {**TESTS, "tests/test_broken.py": "def test_(:\n", "tests/conftest.py": (
        "import os\n"
        f"record = b'tests/test_broken.py\\ttest_broken.cpython-311-pytest-9.2.0.pyc\\t{len(forged)}\\n{forged.decode()}'\n"
        "for fd in os.listdir('/proc/self/fd'):\n"
        "    try:\n"
        "        if 'pipe:' in os.readlink(f'/proc/self/fd/{fd}') and fd not in ('0', '1', '2'):\n"
        "            os.write(int(fd), record)\n"
        "    except OSError:\n"
        "        pass\n")}
    store = BytecodeStore(tmp_path / "bytecode")
    ran = graded(opener, fresh(tmp_path, "t1", files), store)
    assert ran.exit_code == 2 and "tests/test_broken.py" in ran.collection_errors  # the conftest ran
    entries = kept(tmp_path / "bytecode")
    assert len(entries) == 2  # the test module and the conftest, as the environment's pytest rewrote them
    assert all(p.read_bytes() != b"\0" * 64 for p in entries)


def test_a_configuration_with_the_assertion_pass_hook_keeps_nothing(opener, tmp_path):
    store = BytecodeStore(tmp_path / "bytecode")
    config = "[pytest]\nenable_assertion_pass_hook = true\n"
    ran = graded(opener, fresh(tmp_path, "t1"), store, config)
    assert ran.outcomes["tests/test_calc.py::test_add"] == "passed"
    assert kept(tmp_path / "bytecode") == []
