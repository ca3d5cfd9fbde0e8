"""Rewritten test modules kept between grading runs: made before the tree runs, used only for the same content."""

from __future__ import annotations

import base64
import dataclasses
import marshal
import os
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
                            runner_config=config, test_folders=("tests",))


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


LONG = "test_" + "a" * 240 + ".py"  # a valid name; with pytest's cache name after it, too long for one


def test_names_the_store_cannot_carry_are_left_to_pytest_and_the_run_goes_on(opener, tmp_path):
    # A test module named near the file-name limit (its cached name would pass it): the second run's
    # placing raised out of the grading (an infrastructure error, retried for good). One whose name is
    # not UTF-8 made the list unwritable. Both are now left to pytest to rewrite, as without a store.
    store = BytecodeStore(tmp_path / "bytecode")
    files = {**TESTS, f"tests/{LONG}": "def test_x():\n    assert 1\n"}
    for name in ("t1", "t2"):
        ran = graded(opener, fresh(tmp_path, name, files), store)
        assert ran.status == "ok" and ran.outcomes[f"tests/{LONG}::test_x"] == "passed", (ran.unread, ran.output_tail)
    tree = fresh(tmp_path, "t3")
    with open(os.path.join(os.fsencode(tree / "tests"), b"test_\xff.py"), "wb") as f:
        f.write(b"def test_y():\n    assert 1\n")
    listed = store.prepare(tree, "here", CONFIG, ("tests",))
    assert listed.missing == ["tests/test_calc.py"]  # listed: the module whose name the list can carry


def test_only_the_references_test_modules_are_kept(opener, tmp_path):
    # Test modules the agent adds outside the tests folder would, with new content each iteration, grow
    # the store without end: they are not listed.
    store = BytecodeStore(tmp_path / "bytecode")
    graded(opener, fresh(tmp_path, "t1", {**TESTS, "src/junk/test_junk.py": "def test_j():\n    pass\n"}), store)
    assert len(kept(tmp_path / "bytecode")) == 1


# Tree code that writes a well-formed entry for tests/test_calc.py (the real source hash, code in which
# every test passes) to the last write-only pipe it holds, the bytecode section's while it is open.
FORGE_ALL_PASS = r'''
import base64, importlib.util, importlib.metadata, marshal, os, stat, sys
def _forge():
    rel = "tests/test_calc.py"
    path = os.path.join("/workspace", rel)
    source = open(path, "rb").read()
    code = compile("def test_add():\n    pass\n\ndef test_wrong():\n    pass\n", path, "exec")
    pyc = importlib.util.MAGIC_NUMBER + b"\x03\x00\x00\x00" + importlib.util.source_hash(source)[:8] + marshal.dumps(code)
    tail = ".%s-pytest-%s.pyc" % (sys.implementation.cache_tag, importlib.metadata.version("pytest"))
    data = base64.b64encode(pyc)
    entry = ("%s\t%s\t%d\n" % (rel, "test_calc" + tail, len(data))).encode() + data
    writers = []
    for fd in range(3, 64):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode) and \
                    int(open("/proc/self/fdinfo/%d" % fd).read().split("flags:")[1].split()[0], 8) & 3 == os.O_WRONLY:
                writers.append(fd)
        except (OSError, IndexError, ValueError):
            continue
    if len(writers) >= 2:
        os.write(writers[-1], entry)
_forge()
'''


def test_an_environment_that_makes_the_tree_importable_at_start_up_gets_nothing_rewritten_ahead(built_env, tmp_path):  # noqa: F811
    # An environment whose .pth names the tree (what an image with an editable install has): the standard
    # library's optional imports (copy's `org`) then ran the tree's code while the bytecode section was
    # open, and a forged entry reached the store, then every later run with those tests. Now nothing
    # is rewritten ahead in such an environment, and nothing is kept.
    env_path = tmp_path / "env"
    shutil.copytree(built_env.path, env_path, symlinks=True)
    [site] = list(env_path.glob("lib/python*/site-packages"))
    (site / "editable_tree.pth").write_text("/workspace/src\n")
    env = dataclasses.replace(built_env, path=env_path, python=env_path / "bin" / "python", bin_dir=env_path / "bin")
    forge = FORGE_ALL_PASS
    store = BytecodeStore(tmp_path / "bytecode")
    ran = graded(lambda root: LocalSandbox(root, env, isolation=BwrapOptions(), ephemeral=True),
                 fresh(tmp_path, "t1", {**TESTS, "src/org/__init__.py": forge}), store)
    assert ran.outcomes["tests/test_calc.py::test_wrong"] == "failed"
    clean = graded(opener_for(built_env), fresh(tmp_path, "t2"), store)  # the same tests, no trace of the attack
    assert clean.outcomes["tests/test_calc.py::test_wrong"] == "failed"  # the forged entry made it pass


def opener_for(env):
    return lambda root: LocalSandbox(root, env, isolation=BwrapOptions(), ephemeral=True)


def test_what_another_task_is_keeping_at_the_same_moment_is_never_placed(opener, tmp_path, monkeypatch):
    store = BytecodeStore(tmp_path / "bytecode")
    graded(opener, fresh(tmp_path, "t1"), store)
    [entry] = kept(tmp_path / "bytecode")
    (entry.parent / "keeping-half").write_bytes(entry.read_bytes()[:10])  # not a name pytest reads
    listed = store.prepare(fresh(tmp_path, "t2"), "elsewhere", CONFIG, ("tests",))
    assert listed.missing == ["tests/test_calc.py"]  # other place, other key: nothing placed
    original = type(entry).read_bytes

    def replaced_meanwhile(path):
        if path.name.endswith(".pyc"):
            raise FileNotFoundError(path)
        return original(path)

    monkeypatch.setattr(type(entry), "read_bytes", replaced_meanwhile)
    where = next(iter({p.parent for p in kept(tmp_path / "bytecode")}))
    monkeypatch.setattr(BytecodeStore, "_entry", lambda self, *_: where)
    tree = fresh(tmp_path, "t3")
    listed = store.prepare(tree, "anywhere", CONFIG, ("tests",))
    assert listed.missing == ["tests/test_calc.py"] and not (tree / "tests" / "__pycache__").exists()


# Tree code that writes a frame of its own to the sandbox's standard output (bubblewrap's PID 1 holds it),
# saying the test process was killed (SAYS) and carrying a forged report, tally or bytecode section, then
# kills the collector with SIGKILL so that no genuine frame follows: the launcher ends by SIGKILL, as the
# frame says. Before, the harness read that frame: its report (137: all passing, scored) or its bytecode
# section (-9: kept, and run by every later tree with those tests).
FORGE_FRAME_THEN_KILL = r'''
import base64, hashlib, importlib.util, importlib.metadata, json, marshal, os, signal, sys
def _forge():
    rel = "tests/test_calc.py"
    path = os.path.join("/workspace", rel)
    ids = [rel + "::test_add", rel + "::test_wrong"]
    report = json.dumps({"exitcode": 0, "tests": [{"nodeid": i, "outcome": "passed"} for i in ids]}).encode()
    tally = "".join("%s\tpassed\t0\t%s\n" % (w, i) for i in ids for w in ("setup", "call", "teardown"))
    tally = (tally + "end\t0\t\n").encode()
    code = compile("def test_add():\n    pass\n\ndef test_wrong():\n    pass\n", path, "exec")
    source = open(path, "rb").read()
    pyc = importlib.util.MAGIC_NUMBER + b"\x03\x00\x00\x00" + importlib.util.source_hash(source)[:8] + marshal.dumps(code)
    tail = ".%s-pytest-%s.pyc" % (sys.implementation.cache_tag, importlib.metadata.version("pytest"))
    data = base64.b64encode(pyc)
    section = ("%s\t%s\t%d\n" % (rel, "test_calc" + tail, len(data))).encode() + data
    body = tally + report + section
    frame = b"EVOCI-REPORT SAYS %d %d %d %s\n" % (len(tally), len(report), len(section),
                                                 hashlib.sha256(body).hexdigest().encode())
    channel = os.open("/proc/1/fd/1", os.O_WRONLY)
    os.write(channel, frame + body)
    os.kill(os.getppid(), signal.SIGKILL)
_forge()
'''


@pytest.mark.parametrize("says", ["137", "-9"])
def test_a_frame_the_tree_writes_before_killing_the_collector_is_void(opener, tmp_path, says):
    store = BytecodeStore(tmp_path / "bytecode")
    files = {**TESTS, "calc.py": TESTS["calc.py"] + FORGE_FRAME_THEN_KILL.replace("SAYS", says)}
    ran = graded(opener, fresh(tmp_path, "t1", files), store)
    assert ran.outcomes == {} and ran.unread and "void" in ran.unread, (ran.outcomes, ran.unread, ran.output_tail)
    assert f"the frame says the tests ended with {says} " in ran.unread  # the forged frame reached the channel
    assert kept(tmp_path / "bytecode") == []
    clean = graded(opener, fresh(tmp_path, "t2"), store)  # an honest tree with the same tests
    assert clean.outcomes["tests/test_calc.py::test_wrong"] == "failed"
