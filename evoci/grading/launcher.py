"""The program that starts pytest inside the sandbox, before any code of the tree can run.

``python -I -c LAUNCHER root report n path_1 … path_n pytest-args…``

``-I`` keeps the tree off ``sys.path`` and ignores ``PYTHON*`` variables, so the launcher first
imports pytest, pluggy and every pytest plugin *installed in the environment* (the harness built
it; the agent cannot add to it) while nothing of the tree is importable: a ``pytest.py``,
``_pytest/`` or ``pytest_jsonreport.py`` in the tree shadows nothing. Then it switches plugin
autoloading off (so a plugin declared by metadata planted in the tree is never loaded), names the
environment's plugins with ``-p``, puts the tree's import paths in front of ``sys.path`` (as
``python -m pytest`` with ``PYTHONPATH`` would) and runs pytest.

The JSON report is written to a private temporary file and streamed to the harness over the
launcher's own standard output, framed with its length and SHA-256: pytest's output and
everything the code under test prints go to standard error (file descriptor 1 is pointed there
before any test code runs), so no output of the tested code can pose as the report.

It also watches the runner: the identity of every function, class and method of pytest's core
modules, pluggy and the report plugin is taken before the run and compared after it. Code under
test that replaced one (a monkeypatched ``TestReport.from_item_and_call``) is named in the
report's ``evoci_runtime_changes``, which becomes an integrity flag. Code that also defeats this
check can only do so from inside the same process, where the static scan of its source
(``evoci.grading.sabotage``) looks for it.
"""

LAUNCHER = r"""
import hashlib, os, sys
channel = os.fdopen(os.dup(1), "wb")  # not inherited by child processes (PEP 446)
os.dup2(2, 1)
sys.stdout = sys.stderr
root, report, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
paths, args = sys.argv[4:4 + count], sys.argv[4 + count:]
import importlib.metadata
import pytest
names = []
for ep in importlib.metadata.entry_points(group="pytest11"):
    try:
        ep.load()  # imported now, from the environment; later imports by name find this module
        names.append(ep.name)
    except Exception as exc:
        print(f"evoci: the environment's pytest plugin {ep.name} does not load: {exc!r}", file=sys.stderr)
WATCHED = ("_pytest.runner", "_pytest.reports", "_pytest.main", "_pytest.python", "_pytest.terminal",
           "_pytest.skipping", "_pytest.outcomes", "_pytest.fixtures", "_pytest.nodes", "_pytest.config",
           "pytest_jsonreport.plugin", "pluggy._hooks", "pluggy._callers", "pluggy._manager")
def snapshot():
    seen = {}
    for module_name in WATCHED:
        module = sys.modules.get(module_name)
        for attr, value in list(vars(module).items()) if module else ():
            if callable(value) or isinstance(value, (classmethod, staticmethod, property)):
                seen[f"{module_name}.{attr}"] = id(value)
            if isinstance(value, type) and value.__module__ == module_name:
                for name, member in list(vars(value).items()):
                    if callable(member) or isinstance(member, (classmethod, staticmethod, property)):
                        seen[f"{module_name}.{attr}.{name}"] = id(member)
    return seen
before = snapshot()
os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
sys.path[:0] = [root, *paths]
plugin_args = [a for name in names for a in ("-p", name)]
try:
    code = int(pytest.main([*plugin_args, *args]))
except BaseException as exc:
    import traceback
    traceback.print_exc()
    code = 3
after = snapshot()
changed = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
try:
    with open(report, "rb") as f:
        data = f.read()
    os.unlink(report)
    if changed:
        import json
        data = json.dumps({**json.loads(data), "evoci_runtime_changes": changed[:50]}).encode()
    channel.write(b"EVOCI-REPORT %d %s\n" % (len(data), hashlib.sha256(data).hexdigest().encode()) + data)
except OSError as exc:
    print(f"evoci: no report: {exc}", file=sys.stderr)
channel.flush()
sys.stderr.flush()
os._exit(code)
"""

FRAME = b"EVOCI-REPORT "
