"""The program that starts pytest inside the sandbox, before any code of the tree can run.

``python -I -B -c LAUNCHER root report listed n path_1 … path_n pytest-args…``

``-I`` keeps the tree off ``sys.path`` and ignores ``PYTHON*`` variables, so the test process
first imports pytest, pluggy and every pytest plugin *installed in the environment* (the harness
built it; the agent cannot add to it) while nothing of the tree is importable: a ``pytest.py``,
``_pytest/`` or ``pytest_jsonreport.py`` in the tree shadows nothing. Then it switches plugin
autoloading off (so a plugin declared by metadata planted in the tree is never loaded), names the
environment's plugins with ``-p``, puts the tree's import paths in front of ``sys.path`` (as
``python -m pytest`` with ``PYTHONPATH`` would) and runs pytest. A plugin whose package the tree
itself holds (the project under test declares it: dvc's ``dvc.testing.plugin``) is the one
exception: it is named with ``-p`` but left for pytest to import once the tree is on the path, so
the code tested is the tree's, never the copy installed in the environment.

**Two processes, one writer.** The launcher forks before anything is imported. The parent, the
*collector*, never imports pytest nor any code of the tree; it alone keeps the channel to the
harness (the launcher's standard output) and makes itself non-dumpable first, so the test process
can neither inherit the channel nor open it through ``/proc/<collector>/fd``. The child, the *test
process*, points its own standard output at standard error and runs pytest. When it has ended,
the collector reads the JSON report from its private file and writes exactly one frame::

    EVOCI-REPORT <exit> <tally bytes> <report bytes> <bytecode bytes> <sha256 of the three>\\n<tally><report><bytecode>

``exit`` is the test process's exit code (``-N`` for signal N); the collector then exits 0, and
only after writing its frame: no signal ends a process with 0, nor does Python's own failure, so a
collector the test process killed (or made fail) after writing a frame of its own (the sandbox's
standard output is reachable from inside: bubblewrap's PID 1 holds it) is seen as such. Were the
collector to exit with the test process's code instead, a frame saying 137, then a ``SIGKILL`` to
the collector, would end the launcher exactly as that frame says.
The harness (``evoci.grading.channel``) accepts nothing but that one frame.

**An independent tally.** pytest-json-report writes the report with the standard library, inside
the test process, where code under test can replace what it uses (``json.dumps``). So the
launcher registers its own small plugin before any tree code imports: each test's stage outcome
is sent to the collector as it happens, as plain text, through a pipe made only for it, with
``os.write`` bound before the tree could replace it. The harness compares it with the report.

**Test modules rewritten before the tree runs.** ``listed`` (``-`` for none) names a file of the
tree's test modules, one path per line, that the harness keeps no bytecode for yet. The test
process rewrites their assertions with the environment's pytest *before* any code of the tree can
run (no plugin is loaded and the tree is not on the path yet; an environment that makes the tree
importable at start-up, through a ``.pth`` or a finder of an editable install, gets nothing
rewritten ahead) and sends the results to the collector through a pipe of their own, which it
closes before the tree is put on the path: the
``<bytecode>`` section is ``path<TAB>file name<TAB>size<NL><pyc bytes in base64>`` for each, and nothing the
tests run later can add to it. ``evoci.grading.bytecode`` keeps them and puts them in the next
tree's ``__pycache__``, where pytest reads them instead of rewriting the module again.

**A watch on the runner.** The identity of every function, class and method of pytest's core
modules, pluggy, the report plugin, the tally and the standard-library modules the report path
uses (``json``, ``os``, ``io``, ``builtins`` …) is taken before the run and compared after it;
what changed travels on the tally's last line and becomes an integrity flag.

What code in the test process can still do — it shares the process with the runner — is forge
both the report and the tally consistently; the static scan of its source
(``evoci.grading.sabotage``) and these checks make that a flagged act, never a quiet one.
"""

from evoci.grading.shadows import RUNNER_MODULES

LAUNCHER = r"""
import os, signal, sys
host = os.dup(1)  # the channel to the harness; only the collector keeps it
os.dup2(2, 1)
sys.stdout = sys.stderr
root, report, listed, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
paths, args = sys.argv[5:5 + count], sys.argv[5 + count:]
tally_r, tally_w = os.pipe()
code_r, code_w = os.pipe()
go_r, go_w = os.pipe()
wake_r, wake_w = os.pipe()
os.set_blocking(wake_w, False)
signal.signal(signal.SIGCHLD, lambda *_: None)
signal.set_wakeup_fd(wake_w)
child = os.fork()
if child:
    for fd in (tally_w, go_r, code_w):
        os.close(fd)
    try:
        import ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: no /proc/<pid>/fd, no ptrace
    except Exception as exc:
        print(f"evoci: the collector could not make itself non-dumpable: {exc!r}", file=sys.stderr)
    try:
        os.write(go_w, b"g")
    except BrokenPipeError:  # the test process ended before it needed the word
        pass
    os.close(go_w)
    import hashlib, select  # after the word: the test process starts meanwhile
    got, live, status = {tally_r: [], code_r: []}, [tally_r, code_r], None
    def take(fd):
        data = os.read(fd, 1 << 16)
        got[fd].append(data)
        if not data:
            live.remove(fd)
    while status is None:
        for fd in select.select(live + [wake_r], [], [])[0]:
            if fd == wake_r:
                os.read(wake_r, 512)
            else:
                take(fd)
        pid, raw = os.waitpid(child, os.WNOHANG)
        status = raw if pid else None
    for fd in list(live):  # what the test process wrote before it ended; a grandchild may hold the tally open
        os.set_blocking(fd, False)
        try:
            while fd in live:
                take(fd)
        except BlockingIOError:
            pass
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    tally, compiled = b"".join(got[tally_r]), b"".join(got[code_r])
    try:
        with open(report, "rb") as f:
            data = f.read()
        os.unlink(report)
    except OSError as exc:
        data = b""
        print(f"evoci: no report: {exc}", file=sys.stderr)
    digest = hashlib.sha256(tally + data + compiled).hexdigest().encode()
    os.write(host, b"EVOCI-REPORT %d %d %d %d %s\n" % (code, len(tally), len(data), len(compiled), digest))
    view = memoryview(tally + data + compiled)
    while view:
        view = view[os.write(host, view):]
    sys.stderr.flush()
    os._exit(0)  # its frame is written: the one way the launcher ends 0
for fd in (host, tally_r, go_w, wake_r, wake_w, code_r):
    os.close(fd)
signal.set_wakeup_fd(-1)
signal.signal(signal.SIGCHLD, signal.SIG_DFL)
def tree_importable(_tops=(root, *paths)):
    # Whether an import can reach the tree already: an environment (an image with `pip install -e .`, a
    # .pth naming the tree) may put it on sys.path or install its own finder at start-up, and then even
    # the standard library's optional imports (copy's `org`) can run its code, before the rewriting
    # below is done. Then nothing is rewritten ahead: the bytecode section is closed at once.
    import importlib.machinery as machinery
    tops = tuple(os.path.join(os.path.realpath(p), "") for p in _tops)
    if any(os.path.join(os.path.realpath(entry or "."), "").startswith(tops) for entry in sys.path):
        return True
    standard = (machinery.BuiltinImporter, machinery.FrozenImporter, machinery.PathFinder)
    finders = [f for f in sys.meta_path if f not in standard and type(f).__module__ != "_distutils_hack"]
    hooks = [h for h in sys.path_hooks
             if getattr(h, "__module__", None) not in ("zipimport", "_frozen_importlib_external", "importlib._bootstrap_external")]
    return bool(finders or hooks)
if listed != "-" and tree_importable():
    print("evoci: the environment makes the tree importable at start-up: no test module is rewritten ahead",
          file=sys.stderr)
    listed = "-"
if listed == "-":
    os.close(code_w)
try:
    import importlib.metadata as metadata  # the standard library only (-I): imported while the collector gets out of reach
except ImportError:  # Python 3.7: the backport pytest itself needs there, imported with pytest below
    metadata = None
os.read(go_r, 1)  # the collector is out of reach before any code of the tree runs (an editable install
os.close(go_r)    # in the environment can make even `import pytest` the tree's)
def rewrite_listed(_root=root, _write=os.write, _fd=code_w, limit=BYTECODE_LIMIT):
    # The listed test modules' assertions rewritten by the environment's pytest before anything of
    # the tree runs, for the harness to keep (the module docstring). A pytest whose rewriting
    # works otherwise (an older one) is simply not asked: the run rewrites as it always did.
    import base64, io
    from pathlib import Path
    from _pytest.assertion.rewrite import PYC_TAIL, _rewrite_test, _write_pyc_fp
    with open(listed, "rb") as f:
        names = f.read().decode("utf-8", "surrogateescape").split("\n")
    sent = 0
    for rel in names:
        if not rel:
            continue
        path = os.path.join(_root, rel)
        try:
            made = _rewrite_test(Path(path), None)
            buf = io.BytesIO()
            _write_pyc_fp(buf, made[0], made[1])
        except Exception:  # not Python this pytest reads: it will say so itself when it collects
            continue
        data = base64.b64encode(buf.getvalue())  # the frame is read as text
        sent += len(data)
        if sent > limit:
            break
        head = "%s\t%s\t%d\n" % (rel, os.path.basename(rel)[:-3] + PYC_TAIL, len(data))
        view = memoryview(head.encode("utf-8", "surrogateescape") + data)
        while view:
            view = view[_write(_fd, view):]
if listed != "-":
    try:
        rewrite_listed()
    except Exception as exc:
        print(f"evoci: test modules were not rewritten ahead: {exc!r}", file=sys.stderr)
    os.close(code_w)  # before any code of the tree can run: nothing it does reaches the bytecode section
import pytest
if metadata is None:
    import importlib_metadata as metadata
names = []
deferred = {}  # entry point name -> its module, for the plugins the tree itself holds
found = metadata.entry_points()
def in_tree(module):
    top = module.partition(".")[0]
    return top not in RUNNER and any(os.path.isdir(os.path.join(p, top)) or os.path.isfile(os.path.join(p, top + ".py"))
                                     for p in (root, *paths))
RUNNER = set(RUNNER_MODULES)  # never deferred: a look-alike in the tree is removed before the run anyway
for ep in found.select(group="pytest11") if hasattr(found, "select") else found.get("pytest11", ()):  # Python < 3.10
    if in_tree(ep.value.partition(":")[0]):
        # The project under test declares this plugin (dvc's dvc.testing.plugin): loaded by pytest
        # once the tree is on the path, so its package is the tree's, not the copy installed in
        # the environment. It is tree code like a conftest.py, and runs after the watch is taken.
        names.append(ep.name)
        deferred[ep.name] = ep.value.partition(":")[0].strip()
        continue
    try:
        ep.load()  # imported now, from the environment; later imports by name find this module
        names.append(ep.name)
    except Exception as exc:
        print(f"evoci: the environment's pytest plugin {ep.name} does not load: {exc!r}", file=sys.stderr)
from _pytest.outcomes import XFailed
def raised_by_tests(tb, item, _base=os.path.basename, _sep=os.sep):
    # Who made a test "expected to fail": pytest.xfail() called by test code (the test's own file, a
    # conftest, a tests folder), or the code under test raising XFailed itself (its own failure
    # dressed as an expected one). The innermost frame outside pytest and pluggy decides. (A test
    # marked xfail is expected to fail whatever raises.)
    files = []
    while tb is not None:
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    own = str(getattr(item, "path", None) or item.fspath)
    for name in reversed(files):
        if _sep + "_pytest" + _sep in name or _sep + "pluggy" + _sep in name:
            continue
        base = _base(name)
        return name == own or base == "conftest.py" or base.startswith("test_") or base.endswith("_test.py") \
            or any(part in ("tests", "test", "testing") for part in name.split(_sep))
    return False
class EvociTally:
    def __init__(self):
        self.forged = set()
        self.config = None
        self.seen = {}  # id -> (hook name, hook implementation) of the hooks that decide outcomes, as the tests ran
    def pytest_configure(self, config):
        self.config = config
    def pytest_runtest_makereport(self, item, call, _xfailed=XFailed, _is=isinstance, _by_tests=raised_by_tests):
        if call.when == "call" and call.excinfo is not None and _is(call.excinfo.value, _xfailed) \
                and item.get_closest_marker("xfail") is None and not _by_tests(call.excinfo.tb, item):
            self.forged.add(item.nodeid)
    def pytest_runtest_logreport(self, report, _write=os.write, _fd=tally_w, _has=hasattr):
        xfail = _has(report, "wasxfail")
        if xfail and report.nodeid in self.forged:
            xfail = 2
        line = "%s\t%s\t%d\t%s\n" % (report.when, report.outcome, xfail, report.nodeid)
        _write(_fd, line.encode("utf-8", "surrogateescape"))
        self.look()
    def look(self, _names=("pytest_runtest_logreport", "pytest_runtest_makereport", "pytest_report_teststatus")):
        # The implementations of the hooks that decide an outcome, while the tests run: a plugin that
        # unregisters itself before pytest returns is still listed (foreign_hooks).
        try:
            for name in _names:
                caller = getattr(self.config.pluginmanager.hook, name, None)
                for impl in type(caller).get_hookimpls(caller) if caller is not None else ():
                    self.seen.setdefault(id(impl), (name, impl))
        except Exception:  # the registry taken apart: foreign_hooks says so at the end
            pass
tally = EvociTally()
WATCHED = ("_pytest.runner", "_pytest.reports", "_pytest.main", "_pytest.python", "_pytest.terminal",
           "_pytest.skipping", "_pytest.outcomes", "_pytest.fixtures", "_pytest.nodes", "_pytest.config",
           "pytest_jsonreport.plugin", "pytest_jsonreport.serialize", "pluggy._hooks", "pluggy._callers",
           "pluggy._manager", "__main__", "json", "json.encoder", "_json", "os", "posix", "io", "_io",
           "builtins", "codecs")
FUNCTION = type(lambda: None)
def mark(value):
    # The object, and for a function (also inside a classmethod, staticmethod or property) its code
    # and defaults: swapping __code__ keeps every object where it was. Exact types only, so no
    # attribute lookup runs code the tree planted.
    marks = [id(value)]
    kind = type(value)
    inner = (value,) if kind is FUNCTION else (value.__func__,) if kind in (classmethod, staticmethod) else \
        (value.fget, value.fset, value.fdel) if kind is property else ()
    for function in inner:
        if type(function) is FUNCTION:
            marks += [id(function.__code__), id(function.__defaults__), id(function.__kwdefaults__)]
    return tuple(marks)
def snapshot():
    seen = {}
    for module_name in WATCHED:
        module = sys.modules.get(module_name)
        for attr, value in list(vars(module).items()) if module else ():
            if callable(value) or isinstance(value, (classmethod, staticmethod, property)):
                seen[f"{module_name}.{attr}"] = mark(value)
            if isinstance(value, type) and value.__module__ == module_name:
                for name, member in list(vars(value).items()):
                    if callable(member) or isinstance(member, (classmethod, staticmethod, property)):
                        seen[f"{module_name}.{attr}.{name}"] = mark(member)
    return seen
def conftests(top, _scandir=os.scandir):
    # Every conftest.py under the tree, by a loop, not os.walk: Python 3.11's recurses once per
    # level, and a tree a thousand folders deep would end the launcher before pytest started.
    found, stack = set(), [top]
    while stack:
        try:
            with _scandir(stack.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.name == "conftest.py":
                        found.add(entry.path)
        except OSError:  # too long a path for the kernel: nothing there pytest could import either
            continue
    return found
def declared_plugins(at_launch, _args=args, _paths=(root, *paths)):
    # The plugins pytest itself registers from the tree, read before any code of the tree runs:
    # `-p NAME` (the command's, the configuration's addopts, the entry points named above) and the
    # `pytest_plugins` of the conftests present at launch and of the modules they name, by name.
    import ast, configparser, shlex
    words = list(_args)
    if "-c" in words[:-1]:
        ini = configparser.ConfigParser(interpolation=None)
        try:
            ini.read(words[words.index("-c") + 1])
            words += shlex.split(ini.get("pytest", "addopts", fallback=""))
        except Exception:
            pass
    found = set(names)
    for i, word in enumerate(words):
        value = words[i + 1] if word == "-p" and i + 1 < len(words) else word[2:] if word.startswith("-p") else ""
        if value and not value.startswith("no:"):
            found.add(value)
    pending, read = list(at_launch), set()
    while pending:
        path = pending.pop()
        if path in read:
            continue
        read.add(path)
        try:
            with open(path, "rb") as f:
                body = ast.parse(f.read()).body
        except Exception:  # not Python pytest could import either
            continue
        for node in body:
            if not (isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytest_plugins" for t in node.targets)):
                continue
            items = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            for item in items:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    found.add(item.value)
                    stem = item.value.replace(".", os.sep)
                    pending += [os.path.join(p, stem + end) for p in _paths for end in (".py", os.sep + "__init__.py")]
    return found
def globals_of(function, _function=FUNCTION, _method=type(tally.pytest_configure)):
    # The namespace a hook's function runs in (a bound method's function's), or None for anything else.
    inner = function.__func__ if type(function) is _method else function
    return inner.__globals__ if type(inner) is _function else None
def home_module(function, _modules=sys.modules):
    # The module (in sys.modules) whose own namespace a hook's function runs in, or None: a code object's
    # file name is whatever the code that compiled it said (compile(source, os.__file__, "exec")).
    namespace = globals_of(function)
    module = _modules.get(namespace.get("__name__")) if namespace is not None else None
    return module if module is not None and vars(module) is namespace else None
def foreign_hooks(config, at_launch, declared, _tally=tally, _abs=os.path.isabs, _file=os.path.isfile,
                  _base=os.path.basename, _paths=(root, *paths), _deferred=deferred):
    # Hook implementations the code under test registered (a plugin object whose hooks rewrite
    # reports, a conftest written while the tests ran, a module of its own registered by hand): each
    # must be the environment's code (a function of a module loaded from a real file outside the tree,
    # running in that module's namespace), the tally, a conftest present at launch or a module of the
    # tree that pytest registered as itself under a name declared at launch (`declared_plugins`: its
    # file is the one that name names in the tree). In-process code can forge even this; it is a flag
    # for a person, like the watch above.
    if config is None:
        return []
    tree = tuple(os.path.join(p, "") for p in _paths)
    found = []
    present = [(hook_name, impl) for hook_name in dir(config.pluginmanager.hook) if hook_name.startswith("pytest_")
               for impl in getattr(config.pluginmanager.hook, hook_name).get_hookimpls()]
    for hook_name, impl in present + list(_tally.seen.values()):  # and those gone by the end
        plugin, code = impl.plugin, getattr(impl.function, "__code__", None)
        where = code.co_filename if code is not None else "?"
        if plugin is _tally and type(impl.function) is type(_tally.pytest_configure) \
                and impl.function.__func__ is vars(type(_tally)).get(hook_name):  # its own method, not any function
            continue
        home = home_module(impl.function)
        if home is not None and getattr(home, "__file__", None) == where and _abs(where) and _file(where) \
                and not where.startswith(tree):
            continue
        module_file = getattr(plugin, "__file__", None) if type(plugin) is type(sys) else None
        name = getattr(impl, "plugin_name", None) or config.pluginmanager.get_name(plugin)  # as registered
        if module_file is not None and globals_of(impl.function) is vars(plugin) and module_file == where \
                and where.startswith(tree) and (
                where in at_launch if _base(where) == "conftest.py" else name in declared and where in {
                    os.path.join(p, module.replace(".", os.sep) + end) for module in (name, _deferred.get(name, name))
                    for p in _paths for end in (".py", os.sep + "__init__.py")}):
            continue
        found.append("hook %s from %s" % (hook_name, where))
    return sorted(set(found))
at_launch = conftests(root)  # before any code of the tree runs
declared = declared_plugins(at_launch)
before = snapshot()
os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
sys.path[:0] = [root, *paths]
plugin_args = [a for name in names for a in ("-p", name)]
if hasattr(pytest, "PytestAssertRewriteWarning"):
    # The plugins were imported above, before pytest could mark them for rewriting: it says so
    # when `-p` names them, and a project whose filterwarnings is `error` (pydantic) would end
    # before collecting. A command-line filter outranks the configuration's.
    plugin_args += ["-W", "ignore:Module already imported so cannot be rewritten:pytest.PytestAssertRewriteWarning"]
try:
    code = int(pytest.main([*plugin_args, *args], plugins=[tally]))
except BaseException as exc:
    import traceback
    traceback.print_exc()
    code = 3
after = snapshot()
changed = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
try:
    changed += foreign_hooks(tally.config, at_launch, declared)
except Exception as exc:  # the plugin manager itself was taken apart: that is a finding too
    changed.append("hook registry unreadable: %r" % (exc,))
os.write(tally_w, ("end\t%d\t%s\n" % (code, "\t".join(changed[:50]))).encode())
sys.stderr.flush()
os._exit(code)
"""

# The runner's own modules are always the environment's (evoci.grading.shadows removes look-alikes).
LAUNCHER = LAUNCHER.replace("RUNNER_MODULES", repr(sorted(RUNNER_MODULES)))
# What one run sends of rewritten test modules at most: the frame travels on standard output, under
# evoci.grading.run.REPORT_LIMIT with the report.
BYTECODE_LIMIT = 16 * 1024 * 1024
LAUNCHER = LAUNCHER.replace("BYTECODE_LIMIT", str(BYTECODE_LIMIT))

FRAME = b"EVOCI-REPORT "
